"""What the presenter's tests build frames of: a table's meta, the states of a bots'
match, and the card codes a decoded frame names (shared by test_presenter.py and
test_deltas.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from server import bots, engine
from server.rooms.log import SeatMeta, TableMeta

__all__ = ["card_codes", "play_match", "table_meta"]

# One card code, or a string of them run together (a hand, a move, in a view's wire form).
_CODES = re.compile(r"(?:[3-9TJQKA2][SHDC])+")


def table_meta(humans: int = 2, level: str = "normal") -> TableMeta:
    """Table0001: seats 0 .. humans-1 human (``P0``...), the rest bots of ``level``."""
    seats = [
        SeatMeta(seat=s, kind="human", name=f"P{s}", token_hash="x" * 64)
        if s < humans
        else SeatMeta(seat=s, kind="bot", name=f"B{s}", level=level)
        for s in range(3)
    ]
    return TableMeta(
        id="Table0001",
        rules=engine.Rules(),
        seed=5,
        deals=5,
        seats=seats,
        bot_speed_ms=300,
        created_at=0.0,
    )


def card_codes(value: Any) -> set[str]:
    """Every card code anywhere in a decoded frame (values and keys), strings of codes
    run together read code by code."""
    if isinstance(value, str):
        if not _CODES.fullmatch(value):
            return set()
        return {value[i : i + 2] for i in range(0, len(value), 2)}
    if isinstance(value, dict):
        return set().union(*(card_codes(k) | card_codes(v) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(card_codes(item) for item in value))
    return set()


def play_match(preset: str, seed: int, deals: int) -> Iterator[tuple[engine.MatchState, list[Any]]]:
    """Each state of a bots' match as it is reached, with the events that led to it."""
    state = engine.new_match(engine.PRESETS[preset], seed, deals)
    yield state, []
    turn = 0
    while state.winners is None:
        if state.deal.result is not None:
            events = engine.apply(state, engine.NextDeal())
        else:
            view = engine.seat_view(state, state.deal.turn, hints=engine.BOT_HINTS)
            events = engine.apply(state, bots.decide_now("normal", turn, view))
        turn += 1
        yield state, events
