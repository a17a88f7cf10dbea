"""Issue 13, defect 1: a long play from the left or right seat shows every card, whole, at
every size (a trio must never look like a pair because its third card is off screen)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    HIDDEN_CARDS_JS,
    SIZES,
    Live,
    RawSeat,
    find_seed,
    screenshot,
    wait_joined,
)

from server import engine

pytestmark = pytest.mark.browser

LONG_PLAYS = [("straight", 12), ("pair_run", 10), ("airplane", 10)]
# Seen from seat 0: seat 1 (next in turn) sits on the right, seat 2 on the left.
SIDES = {"right": 1, "left": 2}


def opening_play(kind: str, length: int, seat: int) -> tuple[int, list[str]]:
    """A "sixteen" seed where ``seat`` leads the deal and can open with that long play."""

    def test(state: engine.MatchState) -> list[str] | None:
        if state.deal.turn != seat:
            return None
        view = engine.seat_view(state, seat)
        for ranks in view.legal:
            if len(ranks) != length:
                continue
            cards = engine.pick_cards(view.hand, ranks, view.must_include)
            probe = engine.replay(state.rules, state.seed, state.deals, [])
            (played, *_) = engine.apply(probe, engine.Play(seat=seat, cards=cards))
            if isinstance(played, engine.Played) and played.kind == kind:
                return cards
        return None

    return find_seed("sixteen", test)


@pytest.mark.parametrize(("kind", "length"), LONG_PLAYS)
def test_a_long_play_from_either_side_shows_every_card_at_every_size(
    kind: str, length: int, live: Live, new_page: Callable[..., Any]
) -> None:
    for side, seat in SIDES.items():
        seed, cards = opening_play(kind, length, seat)
        seats = live.create_table(seed=seed, rules="sixteen", humans=3, bot_speed_ms=0)
        page = new_page()
        page.goto(live.seat_url(seats[0]))
        wait_joined(page)
        other = RawSeat(live, seats[seat])
        try:
            other.play(cards)
        finally:
            other.close()
        page.wait_for_function(
            f"() => document.querySelectorAll('#pile-{side} .play .card').length === {length}"
        )
        for size, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
            hidden = page.evaluate(HIDDEN_CARDS_JS, side)
            assert not hidden, f"{kind} from the {side} at {size}: {hidden}"
            if size == "360x740" and side == "left":
                screenshot(page, f"long-play-{kind}.png")
