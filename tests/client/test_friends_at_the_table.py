"""Two people and a bot in Chromium: one closes the tab, the table keeps moving with a
stand-in, and the person comes back to play their own turns again; the host's seat
panel and a spectator's view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client_helpers import (
    MAX_OWN_TURNS,
    TOUR_SEEN_JS,
    WAIT_MS,
    Live,
    state,
    strings,
    take_turn_with_hint_or_pass,
    wait_joined,
)

EN = strings("en")
MATCH_DEALS = 5


# Whether the page's player has something to do: deal on, or take their turn.
CAN_ACT_JS = """(v) => Boolean(v) && ((v.result !== null && !v.match_over)
  || (v.result === null && v.turn === v.seat))"""


def keep_playing(page: Any, until: str) -> dict[str, Any]:
    """Play ``page``'s turns (and deal on) until the JS expression ``until`` holds.

    Each step waits for the next thing to happen on the page (``until``, or something for
    us to do), so a slow machine only makes it slower."""
    for _ in range(MATCH_DEALS * MAX_OWN_TURNS):
        page.wait_for_function(f"() => ({until}) || ({CAN_ACT_JS})(pdk.state().view)")
        if page.evaluate(until):
            return state(page)
        current = state(page)
        if current["view"]["result"] is not None:
            page.click("#btn-continue")
            page.wait_for_function(f"() => pdk.state().version > {current['version']}")
        else:
            take_turn_with_hint_or_pass(page)
    raise AssertionError(f"the match went on and {until} never held")


def test_one_friend_closes_the_tab_the_other_plays_on_and_the_first_comes_back(
    live: Live, browser: Any, new_page: Callable[..., Any]
) -> None:
    host_seat, friend_seat = live.create_table(
        humans=2,
        bots=["easy"],
        deals=MATCH_DEALS,
        bot_speed_ms=100,
        turn_seconds=0,
        grace_seconds=5,
    )
    host = new_page()
    host.goto(live.seat_url(host_seat))
    wait_joined(host)
    friend_context = browser.new_context(
        viewport={"width": 390, "height": 844}, reduced_motion="reduce"
    )
    # Not this friend's first game: the tour's dialog would cover the table.
    friend_context.add_init_script(TOUR_SEEN_JS)
    try:
        friend = friend_context.new_page()
        friend.set_default_timeout(WAIT_MS)
        friend.goto(live.seat_url(friend_seat))
        wait_joined(friend)
        host.wait_for_function("() => pdk.state().table.seats[1].connected")

        friend.close()
        host.wait_for_function("() => !pdk.state().table.seats[1].connected")
        # The host plays on; once seat 1's turn has waited the grace time, a stand-in
        # plays it and seat 1 is marked auto on the host's screen.
        keep_playing(host, "pdk.state().table.seats[1].auto")
        assert (
            host.locator('.seat-card[data-seat="1"] .badge.auto').inner_text() == EN["badge.auto"]
        )

        # The friend comes back (the seat is remembered in this browser): reconnecting
        # hands the seat back, and their next turn is theirs to play.
        friend = friend_context.new_page()
        friend.set_default_timeout(WAIT_MS)
        friend.goto(live.url + "/")
        back = wait_joined(friend)
        assert back["view"]["seat"] == 1
        friend.wait_for_function("() => !pdk.state().table.seats[1].auto")
        assert friend.locator("#auto-banner").is_hidden()
        while True:
            keep_playing(
                host,
                "(() => { const v = pdk.state().view;"
                " return v.result === null && v.turn === 1; })()",
            )
            if state(friend)["view"]["turn"] == 1:
                break
        before = state(friend)
        take_turn_with_hint_or_pass(friend)
        after = state(friend)
        assert after["version"] > before["version"]
        own = [m for m in after["view"]["moves"] if m["seat"] == 1]
        assert own, "the friend's own move is on the table"
        assert not after["table"]["seats"][1]["auto"]
    finally:
        friend_context.close()


def test_the_host_panel_reissues_an_invite_and_hands_out_a_watch_link(
    live: Live, browser: Any, new_page: Callable[..., Any]
) -> None:
    host_seat, friend_seat = live.create_table(humans=2, bots=["easy"], bot_speed_ms=0)
    host = new_page()
    host.goto(live.seat_url(host_seat))
    wait_joined(host)
    host.click("#btn-invite")
    # This browser joined through its invite, so it knows no other link yet: ask for one.
    host.click('.host-seat[data-seat="1"] [data-action="invite"]')
    old = host.input_value('.host-seat[data-seat="1"] input')
    assert old != live.seat_url(friend_seat)
    host.click('.host-seat[data-seat="1"] [data-action="invite"]')
    host.wait_for_function(
        f"() => document.querySelector('.host-seat[data-seat=\"1\"] input').value !== '{old}'"
    )
    fresh = host.input_value('.host-seat[data-seat="1"] input')
    assert "&token=" in fresh

    host.click('[data-action="watch_link"]')
    host.wait_for_selector(".host-watch input")
    watch_link = host.input_value(".host-watch input")
    assert "&watch=" in watch_link
    host.keyboard.press("Escape")

    # Neither the first invite nor the one before it opens the seat; the new one does.
    for dead in (live.seat_url(friend_seat), old):
        stale = new_page()
        stale.goto(dead)
        # Refused (4401): the page says the link is dead (tests/client/test_dead_links.py).
        stale.wait_for_selector("#link-sheet[open]")
    guest = new_page()
    guest.goto(fresh)
    assert wait_joined(guest)["view"]["seat"] == 1

    watcher = new_page()
    watcher.goto(watch_link)
    watcher.wait_for_function("() => pdk.state().view && pdk.state().view.watching")
    assert watcher.locator("#hand").is_hidden()
    assert watcher.locator("#controls").is_hidden()
    host.wait_for_selector("#watchers:not([hidden])")
    assert "1" in host.inner_text("#watchers")


def test_a_table_for_friends_gets_the_turn_clock_chosen_in_the_settings(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = new_page()
    page.goto(live.url + "/")
    first = wait_joined(page)
    assert first["table"]["turn_seconds"] == 0  # alone against bots: no clock
    page.click("#btn-settings")
    assert page.locator("#clock-row").is_hidden()
    page.click('label[for="seg-humans-2"]')
    assert page.locator("#clock-row").is_visible()
    page.click('label[for="seg-clock-60"]')
    page.click("#btn-apply-table")
    page.wait_for_selector("#confirm-sheet[open]")
    page.click("#confirm-ok")
    page.wait_for_function(
        f"() => pdk.state().table && pdk.state().table.id !== '{first['table']['id']}'"
    )
    assert state(page)["table"]["turn_seconds"] == 60
