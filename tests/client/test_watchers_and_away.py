"""Issue 28, defects 6 and 10: what a spectator is offered (no "New match", no history,
the watched seat's card count), and how a friend who closed the tab is shown ("Away")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    Live,
    RawSeat,
    play_to_result,
    screenshot,
    strings,
    wait_joined,
)

pytestmark = pytest.mark.browser


def watch_link(host: Any) -> str:
    """A watch link, asked for in the host's seat panel."""
    host.click("#btn-invite")
    host.click('[data-action="watch_link"]')
    host.wait_for_selector(".host-watch input")
    link: str = host.input_value(".host-watch input")
    host.keyboard.press("Escape")
    return link


def test_a_spectator_sees_the_watched_seats_count_and_is_offered_no_seat_actions(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=11, bot_speed_ms=0, deals=1)
    host = new_page()
    host.goto(live.seat_url(seat))
    wait_joined(host)
    watcher = new_page()
    watcher.goto(watch_link(host))
    watcher.wait_for_function("() => pdk.state().view && pdk.state().view.watching")
    # No history for a watch token (the server answers it 401): no button for it.
    assert watcher.locator("#btn-history").is_hidden()
    # Seat 0 is watched from below, with no hand: its count is shown in its strip.
    count = watcher.evaluate("() => pdk.state().view.counts[0]")
    assert watcher.inner_text("#me-info .me-count") == str(count)

    play_to_result(host)
    watcher.wait_for_function("() => pdk.state().view.match_over")
    watcher.wait_for_selector("#result-sheet[open]")
    assert watcher.locator("#btn-new-match").count() == 0
    assert watcher.locator("#btn-next-deal").count() == 0
    assert watcher.locator("#after-deal").is_hidden()
    # The count follows the deal (it is no longer the count dealt).
    final = watcher.evaluate("() => pdk.state().view.counts[0]")
    assert watcher.inner_text("#me-info .me-count") == str(final)
    for width, height in ((390, 844), (1280, 800)):
        watcher.set_viewport_size({"width": width, "height": height})
        screenshot(watcher, f"watching-result-{width}x{height}.png")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_friend_who_closed_the_tab_is_shown_as_away(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    host_seat, friend_seat = live.create_table(
        seed=5, humans=2, bots=["easy"], turn_seconds=0, bot_speed_ms=0
    )
    host = new_page(locale=LOCALES[lang])
    host.goto(live.seat_url(host_seat))
    wait_joined(host)
    friend = RawSeat(live, friend_seat)
    host.wait_for_function("() => pdk.state().table.seats[1].connected")
    # Seat 1 sits on the host's right.
    assert host.inner_text("#seat-right .level") == strings(lang)["seat.human"]
    friend.close()
    host.wait_for_function("() => !pdk.state().table.seats[1].connected")
    away = host.inner_text("#seat-right .level")
    assert away == strings(lang)["seat.away"]
    # The tab is closed: nothing is reconnecting, and no language says it is.
    assert away == {"en": "Away", "de": "Abwesend", "zh-Hans": "已离开", "it": "Assente"}[lang]
