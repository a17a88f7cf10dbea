"""Issue 28, installable: the web app manifest, the service worker that caches the client's
shell, and the page opened without a network.

- The page links a manifest Chromium itself reads without errors (CDP
  ``Page.getAppManifest``) and finds installable (``Page.getInstallabilityErrors``): name,
  start URL, standalone display, theme colours and PNG icons of the sizes it asks for.
- ``/sw.js`` is served as JavaScript, revalidated on every load, with its shell filled in;
  the worker registers and controls the page, its one cache holds the shell, and no API
  answer or socket is ever cached.
- With the browser offline, a reload still shows the page, and the "the game needs the
  server" panel, in every language, inside the viewport at the four sizes.
- A changed client on the server (a file of a copy of client/ edited under a running
  server) makes the next load install the new worker: the new shell is cached under a
  new version, the old cache is deleted, and the new version serves the next load.
"""

from __future__ import annotations

import json
import shutil
import struct
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from client_helpers import (
    CLIENT_DIR,
    LANGUAGES,
    LOCALES,
    SIZES,
    WAIT_MS,
    Live,
    screenshot,
    store_language,
    strings,
    wait_joined,
)
from conftest import TEST_ARGS

pytestmark = pytest.mark.browser

# Resolves once a worker controls the page (it claims it after installing the shell).
CONTROLLED_JS = """async () => {
  const sw = navigator.serviceWorker;
  await sw.ready;
  if (!sw.controller) {
    await new Promise(r => sw.addEventListener('controllerchange', r, { once: true }));
  }
  return sw.controller.scriptURL;
}"""
# Evaluated in a worker: resolves with its shell's version once it is the active one.
ACTIVATED_JS = """async () => {
  const me = self.serviceWorker;
  while (me.state !== 'activated') {
    await new Promise(r => me.addEventListener('statechange', r, { once: true }));
  }
  return SHELL.version;
}"""
CACHES_JS = """async () => {
  const out = {};
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    out[name] = (await cache.keys()).map(r => new URL(r.url).pathname);
  }
  return out;
}"""


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def fetch(url: str) -> tuple[bytes, dict[str, str]]:
    with urllib.request.urlopen(url, timeout=WAIT_MS / 1000) as response:
        return response.read(), {k.lower(): v for k, v in response.headers.items()}


def open_controlled(live: Live, new_page: Callable[..., Any], **page: Any) -> Any:
    (seat,) = live.create_table(seed=5, bot_speed_ms=0)
    tab = new_page(service_worker=True, **page)
    tab.goto(live.seat_url(seat))
    wait_joined(tab)
    assert tab.evaluate(CONTROLLED_JS).endswith("/sw.js")
    return tab


def test_the_manifest_is_linked_valid_and_installable(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_controlled(live, new_page)
    href = page.eval_on_selector('link[rel="manifest"]', "l => l.href")
    body, headers = fetch(href)
    assert headers["content-type"].startswith("application/manifest+json")
    manifest = json.loads(body)
    assert manifest["display"] == "standalone"
    assert manifest["start_url"] == "/"
    assert manifest["short_name"]
    assert manifest["name"]
    theme = page.eval_on_selector('meta[name="theme-color"]', "m => m.content")
    assert manifest["theme_color"] == theme
    sizes = set()
    for icon in manifest["icons"]:
        if icon["type"] != "image/png":
            continue
        data, headers = fetch(f"{live.url}/{icon['src']}")
        assert headers["content-type"] == "image/png"
        width, height = png_size(data)
        assert icon["sizes"] == f"{width}x{height}"
        sizes.add((width, icon["purpose"]))
    assert {(192, "any"), (512, "any"), (192, "maskable"), (512, "maskable")} <= sizes
    # Chromium's own reading of it: no parse errors, and nothing stands in the way of
    # installing (it needs the icons, the worker and a secure context: 127.0.0.1 is one).
    cdp = page.context.new_cdp_session(page)
    parsed = cdp.send("Page.getAppManifest")
    assert parsed["errors"] == []
    assert parsed["url"] == href
    errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
    # Playwright's contexts are incognito ones, where no app is installed: the one error
    # that says nothing about the page.
    assert [e["errorId"] for e in errors if e["errorId"] != "in-incognito"] == []


def test_the_worker_is_served_revalidated_and_caches_the_shell_never_the_game(
    live: Live, new_page: Callable[..., Any]
) -> None:
    body, headers = fetch(f"{live.url}/sw.js")
    assert headers["content-type"].startswith("text/javascript")
    assert headers["cache-control"] == "no-cache"
    assert "__PDK_SHELL__" not in body.decode()
    page = open_controlled(live, new_page)
    # Played a little: the socket and the API answered meanwhile.
    seen: dict[str, bool] = {}
    page.on("response", lambda r: seen.setdefault(urlparse(r.url).path, r.from_service_worker))
    page.reload()
    wait_joined(page)
    with page.expect_response(lambda r: "/history" in r.url):
        page.click("#btn-history")
    # The client's files come through the worker; the API straight from the network.
    assert seen["/js/main.js"]
    api = [path for path in seen if path.startswith("/api/")]
    assert api
    assert [path for path in api if seen[path]] == []
    cached = page.evaluate(CACHES_JS)
    assert len(cached) == 1, cached
    ((name, paths),) = cached.items()
    assert name.startswith("pdk-shell-")
    shell = {p.lstrip("/") for p in paths}
    for path in CLIENT_DIR.rglob("*"):
        rel = path.relative_to(CLIENT_DIR).as_posix()
        if path.is_file() and rel != "sw.js" and not rel.startswith("."):
            assert rel in shell, f"{rel} is not cached"
    assert "" in shell  # the page itself, for the start URL
    assert not [p for p in paths if p.startswith(("/api", "/ws", "/healthz"))]


def test_offline_the_page_opens_from_the_cache_and_says_the_game_needs_the_server(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """One page under the worker, taken offline and loaded in each language in turn (the
    first found from the browser's locale, the others as chosen in the settings): each
    language's words come out of the cache.  Then back online, it finds the server."""
    first = "zh-Hans"
    page = open_controlled(live, new_page, locale=LOCALES[first])
    assert page.is_hidden("#needs-server")
    page.context.set_offline(True)
    for lang in [first, *[other for other in LANGUAGES if other != first]]:
        if lang != first:
            store_language(page, lang)
        page.reload()
        words = strings(lang)
        page.wait_for_selector("#needs-server", state="visible")
        assert page.text_content("#needs-server h2") == words["offline.title"], lang
        assert page.text_content("#needs-server p") == words["offline.text"], lang
        # The shell really is the client (its styles and script ran), not an error page.
        assert page.evaluate("pdk.state().view") is None
        assert page.eval_on_selector("#net", "n => n.dataset.state") in ("offline", "connecting")
        for name, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            box = page.locator("#needs-server").bounding_box()
            assert box is not None
            assert box["x"] >= 0
            assert box["y"] >= 0
            assert box["x"] + box["width"] <= width
            assert box["y"] + box["height"] <= height, (lang, name)
            if lang in ("en", "zh-Hans") and name in ("390x844", "1280x800"):
                screenshot(page, f"offline-shell-{lang}-{name}.png")
    # Back online, the page finds the server by itself and the panel goes.
    page.context.set_offline(False)
    wait_joined(page)
    page.wait_for_selector("#needs-server", state="hidden")


def test_a_changed_client_replaces_the_cache_on_the_next_load(
    server_process: Callable[..., Any], new_page: Callable[..., Any], tmp_path: Path
) -> None:
    client = tmp_path / "client"
    shutil.copytree(CLIENT_DIR, client)
    process = server_process(args=[*TEST_ARGS, "--client-dir", str(client)])
    live = Live(url=process.url, process=process)
    page = open_controlled(live, new_page)
    before = page.evaluate(CACHES_JS)
    assert len(before) == 1
    (old,) = before
    marker = "/* a new client */"
    with (client / "css" / "pwa.css").open("a") as css:
        css.write(f"\n{marker}\n")
    # The next load asks for sw.js (never from the HTTP cache), gets new bytes, installs
    # the new worker: it caches the new shell, takes over and deletes the old cache.
    with page.context.expect_event("serviceworker") as created:
        page.reload()
    version = created.value.evaluate(ACTIVATED_JS)
    assert f"pdk-shell-{version}" != old
    # Activated: the old cache went before the new worker claimed the page.
    assert list(page.evaluate(CACHES_JS)) == [f"pdk-shell-{version}"]
    # The load after that is the new version's, even without the network.
    page.reload()
    wait_joined(page)
    page.context.set_offline(True)
    page.reload()
    page.wait_for_selector("#needs-server", state="visible")
    css = page.evaluate("async () => (await fetch('css/pwa.css')).text()")
    assert marker in css
