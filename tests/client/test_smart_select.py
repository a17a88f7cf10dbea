"""Issue 28, card apps' smart select: a tap on one card selects a whole play containing it,
taken from the plays the server lists for our turn; the same card tapped again moves on to
the next listed play, and after the last the selection is empty; a drag still selects the
run it crosses.  Every selection is checked against the server's own list (``legal``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    SIZES,
    Live,
    click_card,
    find_seed,
    hand_codes,
    take_turn_with_hint_or_pass,
    wait_joined,
    wait_my_turn_or_result,
)

from server import engine

pytestmark = pytest.mark.browser

RANKS = "3456789TJQKA2"
MAX_TURNS = 40


def ranks_of(cards: list[str]) -> str:
    return "".join(sorted((c[0] for c in cards), key=RANKS.index))


def selected(page: Any) -> list[str]:
    codes: list[str] = page.eval_on_selector_all(
        "#hand .card.selected", "cs => cs.map(c => c.dataset.code)"
    )
    return codes


def seat_zero_leads_with_unhinted_plays(state: Any) -> bool:
    """Seat 0 leads and the server lists plays of several lengths beyond its hints."""
    if state.deal.turn != 0:
        return False
    view = engine.seat_view(state, 0)
    hinted = {ranks_of(h) for h in view.hints}
    # A short list: tapping through all of it stays quick.
    return len(view.legal) <= 36 and len({len(p) for p in view.legal if p not in hinted}) >= 2


def open_at_my_turn(live: Live, new_page: Callable[..., Any], *, lead: bool, size: str) -> Any:
    """A page at its own turn: leading the deal (seat 0 holds the 3 of spades), or
    following a play it can beat (its turns before that taken with Hint or Pass)."""
    seed, _ = find_seed("classic", seat_zero_leads_with_unhinted_plays) if lead else (11, None)
    (seat,) = live.create_table(seed=seed, bot_speed_ms=0, deals=1)
    width, height = SIZES[size]
    page = new_page(width=width, height=height, smart_select=True)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    for _ in range(MAX_TURNS):
        view = wait_my_turn_or_result(page)["view"]
        assert view["result"] is None, "the deal ended first"
        if lead or (view["table"] is not None and view["hints"]):
            return page
        take_turn_with_hint_or_pass(page)
    raise AssertionError("no turn to test in this deal")


def cycle(page: Any, code: str, listed: int) -> list[list[str]]:
    """Tap ``code`` until the selection is empty again (at most once per ``listed`` play
    and once more); every selection on the way."""
    seen: list[list[str]] = []
    for _ in range(listed + 1):
        click_card(page, code)
        now = selected(page)
        if not now:
            return seen
        seen.append(now)
    raise AssertionError(f"tapping {code} never came back to no selection: {seen}")


@pytest.mark.parametrize("size", ["390x844", "844x390"])
def test_following_a_tap_selects_the_smallest_listed_play_with_the_card_then_cycles(
    size: str, live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_at_my_turn(live, new_page, lead=False, size=size)
    view = page.evaluate("pdk.state().view")
    assert view["table"] is not None
    # The card with the most listed plays (a single and a bomb, say): the cycle is longest.
    code = max(view["hand"], key=lambda c: sum(c[0] in p for p in view["legal"]))
    with_rank = [p for p in view["legal"] if code[0] in p]
    picks = cycle(page, code, len(view["legal"]))
    # Each a listed play holding the tapped card, each listed play once, smallest first.
    assert all(code in p for p in picks)
    assert sorted(ranks_of(p) for p in picks) == sorted(with_rank)
    assert len(picks[0]) == min(len(p) for p in with_rank)
    smallest_first = sorted(with_rank, key=lambda p: (len(p), view["legal"].index(p)))
    assert [ranks_of(p) for p in picks] == smallest_first
    # The first pick is playable at once, and Play sends exactly it.
    click_card(page, code)
    assert page.get_attribute("#btn-play", "aria-disabled") == "false"
    before = len(view["moves"])
    page.click("#btn-play")
    page.wait_for_function("(n) => pdk.state().view.moves.length > n", arg=before)
    played = page.evaluate("pdk.state().view.moves")[before]
    assert played["seat"] == view["seat"]
    assert sorted(played["cards"]) == sorted(picks[0])


def test_leading_a_tap_selects_the_servers_first_hint_with_the_card(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_at_my_turn(live, new_page, lead=True, size="360x740")
    view = page.evaluate("pdk.state().view")
    assert view["table"] is None
    assert view["must_include"] == "3S"
    # A card of the server's first hint: that hint is the first pick, 3 of spades and all.
    hint = view["hints"][0]
    code = "3S"  # in every listed play: the whole list is cycled through
    picks = cycle(page, code, len(view["legal"]))
    assert sorted(picks[0]) == sorted(hint)
    assert all("3S" in p and code in p for p in picks)
    assert all(ranks_of(p) in view["legal"] for p in picks)
    # The server's hints with the card first, in its order; then the other listed plays
    # with it, fewest cards first.
    hinted = [ranks_of(h) for h in view["hints"] if code in h]
    rest = [p for p in view["legal"] if code[0] in p and p not in hinted]
    rest.sort(key=lambda p: (len(p), view["legal"].index(p)))
    assert [ranks_of(p) for p in picks] == list(dict.fromkeys(hinted)) + rest


def test_a_card_no_listed_play_holds_and_a_drag_are_selected_card_by_card(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_at_my_turn(live, new_page, lead=False, size="390x844")
    view = page.evaluate("pdk.state().view")
    listed = "".join(view["legal"])
    lone = next((c for c in view["hand"] if c[0] not in listed), None)
    if lone is not None:
        click_card(page, lone)
        assert selected(page) == [lone]
        click_card(page, lone)
        assert selected(page) == []
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
    assert selected(page) == codes[2:6]
