"""Losing the server (killed, or frozen with its sockets open) and coming back, and
inviting a second person to the table."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    Live,
    click_card,
    hand_codes,
    state,
    strings,
    wait_joined,
)

pytestmark = pytest.mark.browser

EN = strings("en")
# client/js/net.js: a ping every PING_MS, and a socket silent for STALL_MS is given up.
PING_MS = 2000
STALL_MS = 4000


def test_server_restart_shows_offline_then_resumes_the_same_position(
    own_live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = own_live.create_table(seed=5, bot_speed_ms=0)
    page = new_page()
    page.goto(own_live.seat_url(seat))
    before = wait_joined(page)
    hand_before = hand_codes(page)
    assert page.locator("#net").is_hidden()

    own_live.process.kill()
    page.wait_for_selector("#net", state="visible")
    page.wait_for_function("() => pdk.state().net !== 'online'")
    assert page.locator("#app.offline").count() == 1

    own_live.process.start()
    page.wait_for_function("() => pdk.state().net === 'online'")
    page.wait_for_selector("#net", state="hidden")
    after = state(page)
    assert after["table"]["id"] == before["table"]["id"]
    assert after["version"] == before["version"]
    assert hand_codes(page) == hand_before


def test_a_two_person_table_offers_an_invite_link_that_joins_the_second_seat(
    live: Live, new_page: Callable[..., Any]
) -> None:
    host = new_page()
    host.goto(live.url + "/")
    first = wait_joined(host)
    # Even alone against bots the host has the seat panel: a bot seat can be opened to
    # a friend between deals, and a watch link handed out.
    assert host.locator("#btn-invite").is_visible()

    host.click("#btn-settings")
    host.click('label[for="seg-humans-2"]')
    host.click("#btn-apply-table")
    host.wait_for_selector("#confirm-sheet[open]")
    host.click("#confirm-ok")
    host.wait_for_function(
        f"() => pdk.state().table && pdk.state().table.id !== '{first['table']['id']}'"
    )
    assert state(host)["table"]["humans"] == 2
    # Seat 1 is the next in turn order: on the host's right, not yet connected.
    assert host.inner_text("#seat-right-name") == EN["seat.player"].format(n=2)
    assert host.inner_text("#seat-right .level") == EN["seat.away"]

    host.click("#btn-invite")
    link = host.input_value("#invite-list input")
    assert "#table=" in link
    assert "&token=" in link
    host.keyboard.press("Escape")

    guest = new_page()
    guest.goto(link)
    joined = wait_joined(guest)
    assert joined["view"]["seat"] == 1
    assert joined["table"]["id"] == state(host)["table"]["id"]
    # The secret leaves the address bar once the seat is stored.
    assert "token=" not in guest.url
    # The host (seat 0) sits on the guest's left; Ben (seat 2) on the right.
    assert guest.inner_text("#seat-left-name") == EN["seat.player"].format(n=1)
    assert guest.inner_text("#seat-right-name") == "Ben"
    host.wait_for_function(
        "() => pdk.state().table.seats.find(s => s.seat === 1).connected === true"
    )
    host.wait_for_selector(f"#seat-right .level:text-is('{EN['seat.human']}')")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_silent_stall_is_noticed_and_a_move_in_flight_is_reported_not_sent(
    lang: str, own_live: Live, new_page: Callable[..., Any]
) -> None:
    """SIGSTOP freezes the server with its sockets open: nothing arrives, nothing closes."""
    table = strings(lang)
    (seat,) = own_live.create_table(seed=7, bot_speed_ms=0)  # seat 0 leads the match
    page = new_page(locale=LOCALES[lang])
    # The page's timers (pings, the stall verdict) run on a clock the test can move.
    page.clock.install()
    page.goto(own_live.seat_url(seat))
    view = wait_joined(page)["view"]
    for code in view["hints"][0]:
        click_card(page, code)
    page.wait_for_selector('#btn-play[aria-disabled="false"]')
    pid = own_live.process.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        page.click("#btn-play")
        # Sent, not answered: the player sees it is on its way, and cannot send it twice.
        page.wait_for_selector('#controls[aria-busy="true"]')
        assert page.inner_text("#status") == table["net.pending"]
        assert page.get_attribute("#btn-play", "aria-disabled") == "true"
        # Noticed within seconds: a 4 s silence ends the socket, and the pings that find
        # it run every 2 s.  The page's clock runs through that at once.
        page.clock.run_for(STALL_MS + 2 * PING_MS)
        assert state(page)["net"] != "online"
        page.wait_for_function(
            "(text) => document.querySelector('#toast').textContent === text",
            arg=table["net.notConfirmed"],
        )
        assert page.locator("#net").is_visible()
        assert page.get_attribute("#controls", "aria-busy") == "false"
    finally:
        os.kill(pid, signal.SIGCONT)
    # Back: the client reconnects on its own and shows the server's position.
    page.wait_for_function("() => pdk.state().net === 'online'")
    page.wait_for_selector("#net", state="hidden")
    assert hand_codes(page) == sorted_like_page(page, state(page)["view"]["hand"])


def sorted_like_page(page: Any, codes: list[str]) -> list[str]:
    ranks, suits = "3456789TJQKA2", "SHDC"
    return sorted(codes, key=lambda c: (ranks.index(c[0]), suits.index(c[1])))


def test_an_idle_stall_is_shown_within_the_ping_interval(
    own_live: Live, new_page: Callable[..., Any]
) -> None:
    """Issue 28, defect 12: with nothing in flight, a frozen server is shown once a ping has
    gone one interval unanswered, before the socket is given up (STALL_MS)."""
    (seat,) = own_live.create_table(seed=7, bot_speed_ms=0)
    page = new_page()
    page.clock.install()
    page.goto(own_live.seat_url(seat))
    wait_joined(page)
    pid = own_live.process.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        # The next ping goes out within one interval; one more and its silence is shown.
        page.clock.run_for(2 * PING_MS)
        assert 2 * PING_MS < STALL_MS + PING_MS  # sooner than the socket is given up
        assert state(page)["net"] == "stalled"
        assert page.locator("#net").is_visible()
        assert page.inner_text("#net-text") == EN["net.stalled"]
    finally:
        os.kill(pid, signal.SIGCONT)
    page.wait_for_function("() => pdk.state().net === 'online'")
    page.wait_for_selector("#net", state="hidden")
