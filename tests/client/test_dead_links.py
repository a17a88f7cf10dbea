"""Issue 28, defect 7: a friend's seat link that no longer works (the host sent a newer one,
or the table is gone) says so and offers a choice; it never opens a solo table silently."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    Live,
    RawSeat,
    Seat,
    screenshot,
    strings,
    wait_joined,
)

pytestmark = pytest.mark.browser


def replace_invite(live: Live, host_seat: Seat, seat: int) -> None:
    """The host asks for a new link for ``seat``: the old one stops at once."""
    host = RawSeat(live, host_seat)
    try:
        host.ws.send(json.dumps({"type": "invite", "seat": seat, "version": host.version}))
        while json.loads(host.ws.recv(timeout=30))["type"] != "invite":
            pass
    finally:
        host.close()


def tables_created(page: Any) -> list[str]:
    created: list[str] = []
    page.on(
        "request",
        lambda r: created.append(r.url) if r.method == "POST" and "/api/tables" in r.url else None,
    )
    return created


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_replaced_invite_link_says_so_and_opens_no_table_until_asked(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    host_seat, friend_seat = live.create_table(humans=2, bots=["easy"], bot_speed_ms=0)
    replace_invite(live, host_seat, friend_seat.seat)
    page = new_page(locale=LOCALES[lang])
    created = tables_created(page)
    page.goto(live.seat_url(friend_seat))
    page.wait_for_selector("#link-sheet[open]")
    words = strings(lang)
    assert page.inner_text("#link-title") == words["link.deadTitle"]
    assert words["link.deadText"] in page.inner_text("#link-sheet")
    assert page.inner_text("#status") == words["link.deadStatus"]
    assert created == []
    assert page.evaluate("pdk.state().table") is None
    if lang == "en":
        screenshot(page, "dead-link-390x844.png")
        page.set_viewport_size({"width": 1280, "height": 800})
        screenshot(page, "dead-link-1280x800.png")
    page.click("#btn-play-alone")
    mine = wait_joined(page)
    assert len(created) == 1
    assert mine["table"]["id"] != friend_seat.table
    assert mine["view"]["seat"] == 0


def test_a_friend_whose_seat_link_is_replaced_while_away_is_told_on_return(
    live: Live, new_page: Callable[..., Any]
) -> None:
    host_seat, friend_seat = live.create_table(humans=2, bots=["easy"], bot_speed_ms=0)
    page = new_page()
    page.goto(live.seat_url(friend_seat))
    assert wait_joined(page)["view"]["seat"] == 1
    created = tables_created(page)
    # The host hands the seat to someone else: this socket is closed, and the stored
    # seat no longer opens.
    replace_invite(live, host_seat, friend_seat.seat)
    page.wait_for_selector("#link-sheet[open]")
    page.reload()
    page.wait_for_selector("#link-sheet[open]")
    assert created == []
