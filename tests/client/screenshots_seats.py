"""Take docs/screenshots/seats-*.png: the turn clock, the auto marker (an opponent's and
one's own "I'm back" banner), the host's seat panel and a spectator's view.

Run against a live server (it opens tables over HTTP and plays them in Chromium):

    paodekuai serve --port 8766 --data-dir /tmp/pdk-shots &
    python tests/client/screenshots_seats.py http://127.0.0.1:8766 docs/screenshots
"""

from __future__ import annotations

import sys
from typing import Any

from client_helpers import TOUR_SEEN_JS, Live
from playwright.sync_api import Page, sync_playwright

VIEWPORT = {"width": 390, "height": 844}


def seen(context: Any) -> Any:
    """A context whose pages skip the first-game tour (it would cover the table)."""
    context.add_init_script(TOUR_SEEN_JS)
    return context


def host_plays_until(page: Page, until: str) -> None:
    """The host plays each of its turns (Pass when it may, else Hint + Play) until
    the JS expression ``until`` holds."""
    for _ in range(1000):
        if page.evaluate(until):
            return
        current = page.evaluate("pdk.state()")
        view = current["view"]
        if view["result"] is None and view["turn"] == view["seat"]:
            if view["can_pass"]:
                page.click("#btn-pass")
            else:
                page.click("#btn-hint")
                page.wait_for_selector('#btn-play[aria-disabled="false"]')
                page.click("#btn-play")
            page.wait_for_function(f"() => pdk.state().version > {current['version']}")
        elif view["result"] is not None and not view["match_over"]:
            page.keyboard.press("Escape")
            page.click("#btn-continue")
            page.wait_for_function(f"() => pdk.state().version > {current['version']}")
        else:
            page.wait_for_timeout(200)
    raise SystemExit(f"gave up waiting for {until}")


def main(url: str, out: str) -> None:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
        )
        # The clock: two friends, 30 s a turn, a few seconds into the host's turn.
        live = Live(url=url, process=None)
        seats = live.create_table(
            humans=2, bots=["normal"], deals=5, bot_speed_ms=600, turn_seconds=30
        )
        pages = [seen(browser.new_context(viewport=VIEWPORT)).new_page() for _ in range(2)]
        for page, seat in zip(pages, seats, strict=True):
            page.goto(live.seat_url(seat))
        pages[0].wait_for_function("() => pdk.state().view && pdk.state().table.clock")
        pages[0].wait_for_timeout(4200)
        pages[0].screenshot(path=f"{out}/seats-clock.png")
        for page in pages:
            page.context.close()

        # Auto: the friend stays but never moves; with 5 s turns three stand-in turns
        # put them on auto, seen by the host (marker) and by the friend (banner).
        seats = live.create_table(
            humans=2, bots=["normal"], deals=5, bot_speed_ms=600,
            turn_seconds=5, grace_seconds=5,
        )  # fmt: skip
        host, friend = (seen(browser.new_context(viewport=VIEWPORT)).new_page() for _ in range(2))
        host.goto(live.seat_url(seats[0]))
        friend.goto(live.seat_url(seats[1]))
        host.wait_for_function("() => pdk.state().view && pdk.state().table.seats[1].connected")
        host_plays_until(host, "pdk.state().table.seats[1].on_auto")
        friend.wait_for_selector("#auto-banner:not([hidden])")
        friend.wait_for_timeout(400)
        friend.screenshot(path=f"{out}/seats-auto-banner.png")
        host.screenshot(path=f"{out}/seats-auto.png")

        # The host panel with a fresh invite and a watch link, then the spectator.
        host.click("#btn-invite")
        host.click('.host-seat[data-seat="1"] [data-action="invite"]')
        host.wait_for_selector('.host-seat[data-seat="1"] input')
        host.click('[data-action="watch_link"]')
        host.wait_for_selector(".host-watch input")
        watcher = seen(browser.new_context(viewport=VIEWPORT)).new_page()
        watcher.goto(host.input_value(".host-watch input"))
        watcher.wait_for_function("() => pdk.state().view && pdk.state().view.watching")
        host.wait_for_function("() => pdk.state().table.spectators === 1")
        host.wait_for_timeout(300)
        host.screenshot(path=f"{out}/seats-host-panel.png")
        watcher.wait_for_timeout(1500)
        watcher.screenshot(path=f"{out}/seats-watching.png")
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
