"""Ratings in a real Chromium: after a match the player sees the rating change under the
result, their statistics and rating in the lobby sheet, and themselves on the leaderboard."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import Live, screenshot, state, take_turn_with_hint_or_pass, wait_joined

pytestmark = pytest.mark.browser
# Its tests read what the whole server holds (quick match's queue, the lists of open
# tables, the leaderboard): a server of its own, not the one other modules share.
OWN_SERVER = True

BOT_SEAT = 2
# A one-deal match has at most 48 plays and a pass between each.
MAX_STEPS = 200


def js_number(value: float) -> str:
    """``value`` as JavaScript's String() writes it (2.0 is "2")."""
    return str(value).removesuffix(".0")


def wait_at(page: Any, table: str) -> None:
    page.wait_for_function(
        "(t) => window.pdk && pdk.state().table?.id === t && pdk.state().view !== null", arg=table
    )


def play_both_to_the_end(pages: list[Any]) -> None:
    """Each page takes its turns until the match is over (the bot answers in between)."""
    for _ in range(MAX_STEPS):
        views = [state(page)["view"] for page in pages]
        if all(v["match_over"] for v in views):
            return
        for page, view in zip(pages, views, strict=True):
            if view["result"] is None and view["turn"] == view["seat"]:
                take_turn_with_hint_or_pass(page)
                break
        else:
            pages[0].wait_for_function(
                "(bot) => { const v = pdk.state().view;"
                " return v.result !== null || v.turn !== bot; }",
                arg=BOT_SEAT,
            )
            pages[1].wait_for_function(
                "(v0) => pdk.state().version >= v0", arg=state(pages[0])["version"]
            )
    raise AssertionError("the match did not end")


def test_after_a_match_the_rating_change_statistics_and_leaderboard_show(
    live: Live, new_page: Callable[..., Any]
) -> None:
    table = live.post("/api/tables", {"humans": 2, "bots": ["easy"], "bot_speed_ms": 0, "deals": 1})
    host = new_page(width=390, height=844)
    host.goto(f"{live.url}{table['seats'][0]['invite']}")
    wait_joined(host)
    guest = new_page(width=390, height=844)
    guest.goto(live.url)
    wait_joined(guest)
    # The guest gets a player identity first, then takes seat 1 by the room code.
    guest.click("#btn-people")
    guest.wait_for_function("() => document.querySelector('#lobby-name').value !== ''")
    name = guest.input_value("#lobby-name")
    guest.fill("#lobby-code", table["code"])
    guest.click("#lobby-code-form button")
    wait_at(guest, table["table"])
    play_both_to_the_end([host, guest])

    line = guest.wait_for_selector("#result-sheet[open] #result-rating")
    assert line is not None
    text = line.text_content() or ""
    assert "→" in text
    player = guest.evaluate("() => JSON.parse(localStorage.getItem('pdk.player')).credential")
    with urllib.request.urlopen(
        f"{live.url}/api/players/{player.partition('.')[0]}", timeout=10
    ) as response:
        profile = json.loads(response.read())
    last = profile["last"]
    assert f"{js_number(last['before'])} → {js_number(last['after'])}" in text
    # The host played without an identity: nothing to show there.
    assert host.query_selector("#result-rating") is None

    guest.click("#result-sheet .sheet-actions .btn:not(.btn-play)")
    guest.click("#btn-people")
    guest.select_option("#lobby-board-track", "bots")
    row = guest.wait_for_selector("#lobby-board li.mine")
    assert row is not None
    assert name in (row.text_content() or "")
    assert (guest.text_content("#lobby-stats") or "").startswith("1 ")
    assert guest.is_hidden("#lobby-no-rating")
    guest.eval_on_selector("#lobby-ratings-title", "e => e.scrollIntoView()")
    screenshot(guest, "ratings-390.png")
    guest.set_viewport_size({"width": 1280, "height": 800})
    guest.eval_on_selector("#lobby-ratings-title", "e => e.scrollIntoView()")
    screenshot(guest, "ratings-1280.png")
