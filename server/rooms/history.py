"""A table's finished deals, rebuilt from its stored log for replays.

Only deals that are over are included: a replay shows every hand from the deal's
start, which must never happen while the deal is still played.  Nothing is kept in
memory or written: the log in Redis is the record, so history works after a restart
and on any process.
"""

from __future__ import annotations

import msgspec

from server import engine
from server.engine import DealResult, Move, NextDeal, Pass, Play

from .log import LogEntry, NewMatch, TableMeta, match_seed

__all__ = ["MAX_HISTORY_DEALS", "DealRecord", "History", "SeatRecord", "history"]

# The newest deals a history answer holds: bounds the answer's size and the replay work.
MAX_HISTORY_DEALS = 100


class SeatRecord(msgspec.Struct, frozen=True):
    """Who sat at a seat (names as the table shows them now)."""

    seat: int
    name: str
    kind: str
    level: str | None


class DealRecord(msgspec.Struct, frozen=True):
    """One finished deal: every hand as dealt, every move in order, and the result."""

    match_no: int
    deal_no: int
    hands: list[list[str]]
    moves: list[Move]
    result: DealResult


class History(msgspec.Struct, frozen=True):
    """A table's finished deals, oldest first (at most ``MAX_HISTORY_DEALS``, the newest)."""

    table: str
    rules: engine.Rules
    seats: list[SeatRecord]
    deals: list[DealRecord]


def _hands(state: engine.MatchState) -> list[list[str]]:
    return [[engine.card_code(c) for c in hand] for hand in state.deal.hands]


def history(meta: TableMeta, entries: list[LogEntry]) -> History:
    """Replay ``entries`` and keep each deal that ended (raises ``EngineError`` if corrupt)."""
    match_no = 0
    state = engine.new_match(meta.rules, match_seed(meta.seed, 0, meta.secret), meta.deals)
    dealt = _hands(state)
    deals: list[DealRecord] = []
    for entry in entries:
        if isinstance(entry, NewMatch):
            match_no += 1
            state = engine.new_match(
                meta.rules, match_seed(meta.seed, match_no, meta.secret), meta.deals, entry.entropy
            )
            dealt = _hands(state)
        elif isinstance(entry, Play | Pass | NextDeal):
            engine.apply(state, entry)
            deal = state.deal
            if isinstance(entry, NextDeal):
                dealt = _hands(state)
            elif deal.result is not None:
                deals.append(
                    DealRecord(
                        match_no=match_no,
                        deal_no=deal.deal_no,
                        hands=dealt,
                        moves=list(deal.moves),
                        result=deal.result,
                    )
                )
        # Bot-speed entries (older logs) change no cards.
    return History(
        table=meta.id,
        rules=meta.rules,
        seats=[SeatRecord(s.seat, s.name, s.kind, s.level) for s in meta.seats],
        deals=deals[-MAX_HISTORY_DEALS:],
    )
