"""Draw the app's PNG icons (web app manifest, Apple touch icon) from client/icon.svg.

    python tools/make_icons.py

Browsers want raster icons of fixed sizes for installing: 192 and 512 px ("any"), the same
as "maskable" (the artwork shrunk into the middle 80 % over a full-bleed background, so a
launcher's circle or squircle mask never cuts a card), and 180 px for iOS.  Rendered by
Debian's Chromium through Playwright (the test tools), so nothing else is needed; the
PNGs are committed and the client has no build step.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[1] / "client"
CHROMIUM = "/usr/bin/chromium"
BACKGROUND = "#145039"  # the icon's own table green, so a mask's corners show no seam

# (file, size, maskable)
ICONS = [
    ("icon-192.png", 192, False),
    ("icon-512.png", 512, False),
    ("icon-maskable-192.png", 192, True),
    ("icon-maskable-512.png", 512, True),
    ("apple-touch-icon.png", 180, True),
]


def page_html(svg: str, size: int, maskable: bool) -> str:
    data = base64.b64encode(svg.encode()).decode()
    inner = round(size * 0.8) if maskable else size
    background = BACKGROUND if maskable else "transparent"
    return (
        "<!doctype html><html><body style='margin:0'>"
        f"<div style='width:{size}px;height:{size}px;background:{background};"
        "display:flex;align-items:center;justify-content:center'>"
        f"<img src='data:image/svg+xml;base64,{data}' width='{inner}' height='{inner}'>"
        "</div></body></html>"
    )


def main() -> int:
    from playwright.sync_api import sync_playwright

    svg = (CLIENT / "icon.svg").read_text("utf-8")
    out = CLIENT / "icons"
    out.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        for name, size, maskable in ICONS:
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(page_html(svg, size, maskable))
            page.locator("div").screenshot(path=str(out / name), omit_background=not maskable)
            page.close()
            print(f"wrote {out / name}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
