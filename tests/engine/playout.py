"""Random play-outs through the public engine API, for tests that need real positions."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from server import engine
from server.engine import MatchState, NextDeal, Pass, Play

__all__ = ["conformance_position", "play_match", "random_action"]


def conformance_position(state: MatchState, ident: Any) -> dict[str, Any]:
    """The position of the seat to move, in the conformance tool's input format."""
    deal = state.deal
    seat = deal.turn
    return {
        "id": ident,
        "rules": state.rules.preset,
        "hand": [engine.card_code(c) for c in deal.hands[seat]],
        "table": list(deal.table.cards) if deal.table is not None else [],
        "next_has_one": len(deal.hands[(seat + 1) % 3]) == 1,
        "first_play": deal.needs_three_of_spades,
    }


def random_action(state: MatchState, rng: random.Random) -> Play | Pass | NextDeal:
    """A uniformly random legal action, chosen from what the seat view offers."""
    deal = state.deal
    if deal.result is not None:
        return NextDeal()
    seat = deal.turn
    view = engine.seat_view(state, seat)
    if view.can_pass and (not view.legal or rng.random() < 0.3):
        return Pass(seat=seat)
    ranks = rng.choice(view.legal)
    return Play(seat=seat, cards=engine.pick_cards(view.hand, ranks, view.must_include))


def play_match(
    rules: engine.Rules, seed: int, deals: int, rng: random.Random
) -> Iterator[tuple[MatchState, Play | Pass | NextDeal]]:
    """Play a whole match at random; yields (state before, action) for every action,
    then applies it.  The state is live: copy what you keep."""
    state = engine.new_match(rules, seed, deals)
    while state.winners is None:
        action = random_action(state, rng)
        yield state, action
        engine.apply(state, action)
