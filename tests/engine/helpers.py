"""Building exact game states for rule tests, and snapshotting them."""

from __future__ import annotations

import msgspec

from server import engine
from server.engine import DealState, MatchState, Pass, Play

__all__ = ["hand_codes", "make_state", "pass_", "play", "snapshot"]


def make_state(
    hands: list[str],
    *,
    rules: str | engine.Rules = "classic",
    turn: int = 0,
    deals: int = 1,
    needs_three: bool = False,
    played_any: list[bool] | None = None,
    deal_no: int = 1,
) -> MatchState:
    """A match whose current deal has exactly ``hands`` (codes split by spaces),
    ``turn`` to lead an empty table.  Hands need not make up a whole deck."""
    preset = engine.PRESETS[rules] if isinstance(rules, str) else rules
    deal = DealState(
        deal_no=deal_no,
        hands=[sorted(engine.parse_cards(h.split())) for h in hands],
        turn=turn,
        leader=turn,
        needs_three_of_spades=needs_three,
    )
    if played_any is not None:
        deal.played_any = list(played_any)
    return MatchState(rules=preset, seed=0, deals=deals, deal=deal)


def play(state: MatchState, seat: int, cards: str) -> list[engine.Event]:
    return engine.apply(state, Play(seat=seat, cards=cards.split()))


def pass_(state: MatchState, seat: int) -> list[engine.Event]:
    return engine.apply(state, Pass(seat=seat))


def hand_codes(state: MatchState, seat: int) -> list[str]:
    return [engine.card_code(c) for c in state.deal.hands[seat]]


def snapshot(state: MatchState) -> bytes:
    return msgspec.json.encode(state)
