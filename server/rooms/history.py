"""A table's finished deals, rebuilt from its stored log for replays.

Only deals that are over are included: a replay shows every hand from the deal's
start, which must never happen while the deal is still played.  The log is read by
``log.Replay`` (the one replay) with a watcher; nothing is written: the log in Redis
is the record, so history works after a restart
and on any process.
"""

from __future__ import annotations

import msgspec

from server import engine
from server.engine import DealResult, Move

from .log import LogEntry, Replay, TableMeta

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


class _Deals:
    """Each deal a replay reads: its hands kept when dealt, the record made when it ends."""

    def __init__(self) -> None:
        self.records: list[DealRecord] = []
        self._hands: list[list[str]] = []

    def dealt(self, match_no: int, deal: engine.DealState) -> None:
        self._hands = [[engine.card_code(c) for c in hand] for hand in deal.hands]

    def ended(self, match_no: int, deal: engine.DealState) -> None:
        assert deal.result is not None
        self.records.append(
            DealRecord(
                match_no=match_no,
                deal_no=deal.deal_no,
                hands=self._hands,
                moves=list(deal.moves),
                result=deal.result,
            )
        )


def history(meta: TableMeta, entries: list[LogEntry]) -> History:
    """Replay ``entries`` and keep each deal that ended (raises ``EngineError`` if corrupt)."""
    deals = _Deals()
    replay = Replay(meta, deals)
    for entry in entries:
        replay.feed(entry)
    return History(
        table=meta.id,
        rules=meta.rules,
        seats=[SeatRecord(s.seat, s.name, s.kind, s.level) for s in meta.seats],
        deals=deals.records[-MAX_HISTORY_DEALS:],
    )
