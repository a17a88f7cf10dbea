"""A bot's only input is its seat's view: nothing else is reachable from it."""

from __future__ import annotations

import gc
from typing import Any

import msgspec
import pytest

from server.bots import make_bot
from server.engine import (
    PRESETS,
    DealState,
    MatchState,
    SeatView,
    apply,
    card_code,
    new_match,
    seat_view,
)

from .test_levels import PRESET_NAMES


def reachable(root: object) -> list[Any]:
    """Every object reachable from ``root`` through references the GC knows about."""
    seen: dict[int, Any] = {}
    stack: list[Any] = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen[id(obj)] = obj
        stack.extend(gc.get_referents(obj))
    return list(seen.values())


def mid_deal_state(preset: str, seed: int, moves: int) -> MatchState:
    state = new_match(PRESETS[preset], seed, 1)
    bots = [make_bot("normal", seed) for _ in range(3)]
    for _ in range(moves):
        if state.deal.result is not None:
            break
        apply(state, bots[state.deal.turn].choose(seat_view(state, state.deal.turn)))
    return state


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_view_reaches_no_game_state_and_no_other_seats_cards(preset: str) -> None:
    state = mid_deal_state(preset, 11, 12)
    seat = state.deal.turn
    view = seat_view(state, seat)
    objects = reachable(view)
    assert not any(isinstance(o, MatchState | DealState) for o in objects)
    assert all(o is not state.deal.hands for o in objects)
    hidden = {card_code(c) for s in range(3) if s != seat for c in state.deal.hands[s]}
    strings = {o for o in objects if isinstance(o, str)}
    assert hidden
    assert not hidden & strings


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_view_survives_the_wire_unchanged_and_bots_answer_the_same_from_the_copy(
    preset: str,
) -> None:
    state = mid_deal_state(preset, 5, 9)
    view = seat_view(state, state.deal.turn)
    copy = msgspec.msgpack.decode(msgspec.msgpack.encode(view), type=SeatView)
    assert copy == view
    for level in ("easy", "normal", "strong"):
        first = make_bot(level, 3, budget=0.005).choose(view)
        assert isinstance(first, type(make_bot(level, 3, budget=0.005).choose(copy)))
        if level != "strong":  # strong's clock may stop it at a different point
            assert make_bot(level, 3).choose(copy) == first
