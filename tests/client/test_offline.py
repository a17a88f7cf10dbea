"""Issue 28, defect 12: when the browser says it went offline, the table says so at once (it
waited for the ping to go unanswered, about 7 s), and comes back when the network does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import LANGUAGES, Live, screenshot, state, store_language, strings, wait_joined

pytestmark = pytest.mark.browser

# The answer in the same task as the event: no ping, timer or socket close can have run.
OFFLINE_NOW_JS = """() => {
  window.dispatchEvent(new Event('offline'));
  const net = document.querySelector('#net');
  return { net: pdk.state().net, shown: !net.hidden, text: net.innerText };
}"""


def test_going_offline_shows_at_once_and_the_seat_comes_back_online(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=5, bot_speed_ms=0)
    page = new_page()
    page.goto(live.seat_url(seat))
    before = wait_joined(page)
    for lang in LANGUAGES:
        store_language(page, lang)
        page.reload()
        wait_joined(page)
        page.wait_for_function("() => pdk.state().net === 'online'")
        page.context.set_offline(True)
        seen = page.evaluate(OFFLINE_NOW_JS)
        assert seen["net"] == "offline", lang
        assert seen["shown"], lang
        offline_words = strings(lang)["net.offlineRetry"].split("{s}")[0].strip()
        assert offline_words in seen["text"] or strings(lang)["net.connecting"] in seen["text"]
        assert page.locator("#app.offline").count() == 1
        if lang == "de":
            for width, height in ((390, 844), (1280, 800)):
                page.set_viewport_size({"width": width, "height": height})
                screenshot(page, f"offline-now-de-{width}.png")
        page.context.set_offline(False)
        page.wait_for_function("() => pdk.state().net === 'online'")
        assert state(page)["version"] == before["version"]
