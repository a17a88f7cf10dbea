"""A seat opened in more tabs than a seat keeps (--max-sockets-per-seat, 4 by default):
the oldest tab is closed 4409, says so, and does not reconnect (reconnecting would push
one of the newer tabs out in turn).  A real server and a real Chromium."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import Live, strings, wait_joined

pytestmark = pytest.mark.browser

SOCKETS_PER_SEAT = 4


def test_the_oldest_tab_of_a_seat_steps_aside_and_says_why(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat, *_) = live.create_table(seed=5, bot_speed_ms=0)
    url = live.seat_url(seat)
    pages = []
    for _ in range(SOCKETS_PER_SEAT + 1):
        page = new_page()
        page.goto(url)
        wait_joined(page)
        pages.append(page)
    oldest = pages[0]
    oldest.wait_for_function("() => pdk.state().net === 'replaced'")
    # The top bar says it in a line that fits a phone; the toast says it all.
    assert oldest.inner_text("#net-text").strip() == strings("en")["net.replacedShort"]
    oldest.get_by_text(strings("en")["net.replaced"]).wait_for()
    # The newer tabs keep their seat: stepping aside pushed nobody else out.
    assert all(p.evaluate("pdk.state().net") == "online" for p in pages[1:])
    # The browser's "online" event retries a dropped socket at once (synchronously to
    # "connecting"); a tab that stepped aside stays aside.
    oldest.evaluate("window.dispatchEvent(new Event('online'))")
    assert oldest.evaluate("pdk.state().net") == "replaced"
