"""Playing at the table in a real browser against the real server and its bots."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    Live,
    click_card,
    hand_codes,
    state,
    strings,
    take_turn_with_hint_or_pass,
    wait_joined,
    wait_my_turn_or_result,
    wait_version_above,
)

pytestmark = pytest.mark.browser

EN = strings("en")
SEED = 20240607
# A deal has at most 48 plays and a pass between each: far fewer of our own turns.
MAX_OWN_TURNS = 60


def open_seat(live: Live, new_page: Callable[..., Any], **table: Any) -> Any:
    body = {"seed": SEED, "bot_speed_ms": 0, **table}
    (seat, *_) = live.create_table(**body)
    page = new_page()
    page.goto(live.seat_url(seat))
    wait_joined(page)
    return page


def selected_codes(page: Any) -> list[str]:
    codes: list[str] = page.eval_on_selector_all(
        "#hand .card.selected", "cs => cs.map(c => c.dataset.code)"
    )
    return codes


def assert_last_card_flags_shown(page: Any, view: dict[str, Any]) -> None:
    me = view["seat"]
    for side, seat in (("right", (me + 1) % 3), ("left", (me + 2) % 3)):
        card = page.locator(f"#seat-{side} .seat-card")
        flagged = view["last_card"][seat]
        assert (card.locator(".badge.alarm").count() == 1) is flagged
        assert ("is-last" in (card.get_attribute("class") or "")) is flagged


def test_hints_and_passes_play_a_whole_deal_to_the_result_panel(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat(live, new_page)
    turns = 0
    while state(page)["view"]["result"] is None:
        snapshot = wait_my_turn_or_result(page)
        if snapshot["view"]["result"] is not None:
            break
        assert_last_card_flags_shown(page, snapshot["view"])
        take_turn_with_hint_or_pass(page)
        turns += 1
        assert turns < MAX_OWN_TURNS, "the deal did not end"

    page.wait_for_selector("#result-sheet[open]")
    result = state(page)["view"]["result"]
    rows = page.locator("#result-sheet tbody tr")
    assert rows.count() == 3
    # Our row comes first and shows the server's figures for our seat.
    me = state(page)["view"]["seat"]
    mine = rows.nth(0)
    assert mine.locator('[data-col="cardsLeft"]').inner_text() == str(result["cards_left"][me])
    total = result["deal_totals"][me]
    shown_total = mine.locator('[data-col="dealTotal"]').inner_text()
    assert shown_total == (f"+{total}" if total > 0 else str(total))
    assert page.locator("#result-sheet tr.winner").count() == 1
    assert page.locator("#result-title").inner_text() in {
        EN["result.youWin"],
        *(EN["result.winner"].format(name=n) for n in ("Anna", "Ben")),
    }
    # A one-deal match is over: the panel names the winner(s) and offers a new match.
    assert page.locator(".match-banner").is_visible()
    page.click("#btn-new-match")
    page.wait_for_function("() => pdk.state().view.result === null")
    assert len(hand_codes(page)) == 16


def test_an_illegal_selection_keeps_play_disabled_and_shows_the_servers_reason(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat(live, new_page)
    wait_my_turn_or_result(page)
    codes = hand_codes(page)
    # Lowest and highest card: two different ranks are never a combination.
    click_card(page, codes[0])
    click_card(page, codes[-1])
    assert page.get_attribute("#btn-play", "aria-disabled") == "true"
    version = state(page)["version"]
    # Playwright treats aria-disabled as disabled; a person can still press it.
    page.click("#btn-play", force=True)
    toast = page.locator("#toast")
    toast.wait_for(state="visible")
    assert toast.inner_text() == EN["reason.not_a_combination"]
    assert state(page)["version"] == version
    # The selection stays for the player to fix.
    assert page.locator("#hand .card.selected").count() == 2


def test_pass_is_locked_with_the_reason_when_leading(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat(live, new_page)
    # Play until we lead a fresh trick (the match's first lead or after two passes).
    for _ in range(MAX_OWN_TURNS):
        view = wait_my_turn_or_result(page)["view"]
        if view["result"] is None and view["table"] is None:
            break
        assert view["result"] is None, "the deal ended before we ever led"
        take_turn_with_hint_or_pass(page)
    assert page.get_attribute("#btn-pass", "aria-disabled") == "true"
    assert page.locator("#pass-why").inner_text() == EN["passWhy.leader_may_not_pass"]
    page.click("#btn-pass", force=True)
    assert page.locator("#toast").inner_text() == EN["reason.leader_may_not_pass"]


def test_reload_mid_deal_shows_the_same_hand_and_turn(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat(live, new_page)
    for _ in range(2):
        wait_my_turn_or_result(page)
        take_turn_with_hint_or_pass(page)
    before = wait_my_turn_or_result(page)
    assert before["view"]["result"] is None
    hand_before = hand_codes(page)
    assert 0 < len(hand_before) < 16

    page.reload()
    after = wait_joined(page)
    assert after["version"] == before["version"]
    assert after["view"]["turn"] == before["view"]["turn"] == after["view"]["seat"]
    assert hand_codes(page) == hand_before
    assert page.locator("#me.is-turn").count() == 1


def test_keyboard_hint_and_enter_play_for_us(live: Live, new_page: Callable[..., Any]) -> None:
    page = open_seat(live, new_page)
    for _ in range(MAX_OWN_TURNS):
        view = wait_my_turn_or_result(page)["view"]
        if not view["can_pass"]:
            break
        take_turn_with_hint_or_pass(page)
    before = state(page)
    cards_before = len(hand_codes(page))
    page.keyboard.press("h")
    page.wait_for_selector('#btn-play[aria-disabled="false"]')
    page.keyboard.press("Enter")
    wait_version_above(page, before["version"])
    page.wait_for_function(f"() => pdk.state().view.hand.length < {cards_before}")
    assert len(hand_codes(page)) < cards_before


def test_selecting_by_keyboard_and_clearing_with_escape(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat(live, new_page)
    codes = hand_codes(page)
    page.keyboard.press("ArrowRight")  # focus enters the hand
    page.keyboard.press("ArrowRight")
    page.keyboard.press(" ")
    selected = selected_codes(page)
    assert selected == [codes[1]]
    page.keyboard.press("Escape")
    assert page.locator("#hand .card.selected").count() == 0


def test_dragging_across_cards_selects_the_run(live: Live, new_page: Callable[..., Any]) -> None:
    page = open_seat(live, new_page)
    codes = hand_codes(page)
    first = page.locator(f'#hand .card[data-code="{codes[2]}"]').bounding_box()
    last = page.locator(f'#hand .card[data-code="{codes[5]}"]').bounding_box()
    assert first is not None
    assert last is not None
    y = first["y"] + first["height"] * 0.62
    page.mouse.move(first["x"] + 4, y)
    page.mouse.down()
    page.mouse.move(last["x"] + 4, y, steps=12)
    page.mouse.up()
    selected = selected_codes(page)
    assert selected == codes[2:6]


def test_a_newcomer_gets_a_table_against_anna_and_ben_at_once(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = new_page()
    page.goto(live.url + "/")
    joined = wait_joined(page)
    assert len(hand_codes(page)) == 16
    names = {page.inner_text("#seat-left-name"), page.inner_text("#seat-right-name")}
    assert names == {"Anna", "Ben"}
    # Seat placement: the next seat in turn order sits on our right.
    me = joined["view"]["seat"]
    right = next(s for s in joined["table"]["seats"] if s["seat"] == (me + 1) % 3)
    assert page.inner_text("#seat-right-name") == right["name"]
    # The seat survives a reload without a new table being opened.
    page.reload()
    assert wait_joined(page)["table"]["id"] == joined["table"]["id"]
