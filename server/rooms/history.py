"""A table's finished deals, rebuilt from its stored log for replays.

Only deals that are over are included: a replay shows every hand from the deal's
start, which must never happen while the deal is still played.  The log is read by
``log.Replay`` (the one replay) with a watcher that keeps each deal as it ends.  The
log in Redis is the record, so history works after a restart and on any process.

A finished deal never changes, so ``HistoryCache`` keeps each table's replay (where it
has read to, and its finished deals already encoded) for the next request, which then
only reads the entries appended since: a bounded number of deals, least recently asked
for dropped first.  Answers are pages of the newest deals.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque

import msgspec

from server import engine
from server.engine import DealResult, Move

from .log import LogEntry, Replay, TableMeta

__all__ = [
    "DEFAULT_CACHE_DEALS",
    "DEFAULT_PAGE_DEALS",
    "MAX_HISTORY_PAGES",
    "DealRecord",
    "History",
    "HistoryCache",
    "PageOutOfRange",
    "SeatRecord",
    "TableHistory",
    "history",
]

# Deals in one answer (``--history-deals``): bounds the answer's size.
DEFAULT_PAGE_DEALS = 100
# How far back the pages reach: a table keeps its newest ``page_deals * MAX_HISTORY_PAGES``
# finished deals, so one table's history is bounded however long it is played.
MAX_HISTORY_PAGES = 10
# Finished deals kept encoded over all cached tables (``--history-cache-deals``):
# about 3.3 KB each as JSON, so the default holds about 33 MB.
DEFAULT_CACHE_DEALS = 10_000


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
    """One page of a table's finished deals, oldest first: page 0 holds the newest."""

    table: str
    rules: engine.Rules
    seats: list[SeatRecord]
    deals: list[DealRecord]
    page: int = 0
    pages: int = 1


class _Answer(msgspec.Struct, frozen=True):
    """``History`` as sent: the deals are encoded once, when they end."""

    table: str
    rules: engine.Rules
    seats: list[SeatRecord]
    deals: list[msgspec.Raw]
    page: int
    pages: int


class PageOutOfRange(ValueError):
    """The page asked for is past the oldest page kept."""

    def __init__(self, page: int, pages: int) -> None:
        super().__init__(f"page must be 0..{pages - 1} (0 is the newest), not {page}")
        self.page = page
        self.pages = pages


def _same_table(a: TableMeta, b: TableMeta) -> bool:
    # A replay depends on the rules and seeds only; seat names may change meanwhile.
    return (a.id, a.seed, a.secret, a.deals, a.rules, a.created_at, a.first_entropy) == (
        b.id,
        b.seed,
        b.secret,
        b.deals,
        b.rules,
        b.created_at,
        b.first_entropy,
    )


class TableHistory:
    """One table's log read so far, with its newest finished deals encoded."""

    def __init__(self, meta: TableMeta, keep: int) -> None:
        self.meta = meta
        self.deals: deque[bytes] = deque(maxlen=keep)
        self._replay = Replay(meta, self)
        self._hands: list[list[str]] = []

    @property
    def version(self) -> int:
        """Entries read so far."""
        return self._replay.version

    def dealt(self, match_no: int, deal: engine.DealState) -> None:
        """Keep the hands as dealt (they shrink as the deal is played)."""
        self._hands = [[engine.card_code(c) for c in hand] for hand in deal.hands]

    def ended(self, match_no: int, deal: engine.DealState) -> None:
        """Encode the finished deal once; the oldest kept is dropped past ``keep``."""
        assert deal.result is not None
        record = DealRecord(match_no, deal.deal_no, self._hands, list(deal.moves), deal.result)
        self.deals.append(msgspec.json.encode(record))

    def follows(self, meta: TableMeta, entries: list[LogEntry]) -> bool:
        """True if ``entries`` is this table's log read so far plus what came since."""
        return _same_table(self.meta, meta) and len(entries) >= self.version

    def read(self, entries: list[LogEntry]) -> None:
        """Read the entries after those already read (``EngineError`` if corrupt)."""
        for entry in entries[self.version :]:
            self._replay.feed(entry)

    def page(self, meta: TableMeta, page: int, page_deals: int) -> bytes:
        """The JSON answer for ``page`` (0: the newest ``page_deals`` deals)."""
        pages = max(1, -(-len(self.deals) // page_deals))
        if not 0 <= page < pages:
            raise PageOutOfRange(page, pages)
        end = len(self.deals) - page * page_deals
        chosen = [msgspec.Raw(self.deals[i]) for i in range(max(0, end - page_deals), end)]
        seats = [SeatRecord(s.seat, s.name, s.kind, s.level) for s in meta.seats]
        return msgspec.json.encode(_Answer(meta.id, meta.rules, seats, chosen, page, pages))


def history(
    meta: TableMeta, entries: list[LogEntry], page: int = 0, page_deals: int = DEFAULT_PAGE_DEALS
) -> History:
    """Replay ``entries`` afresh and answer ``page`` (``EngineError`` if the log is
    corrupt, ``PageOutOfRange``)."""
    table = TableHistory(meta, page_deals * MAX_HISTORY_PAGES)
    table.read(entries)
    return msgspec.json.decode(table.page(meta, page, page_deals), type=History)


class _Slot:
    def __init__(self, table: TableHistory) -> None:
        self.table = table
        # One request reads a table's new entries at a time; the others then find them read.
        self.lock = asyncio.Lock()
        self.weight = 1

    def weigh(self) -> int:
        """What the slot holds, in deals: its finished deals and its live match."""
        return 1 + len(self.table.deals)


class HistoryCache:
    """Tables' replays kept between requests, at most ``max_deals`` deals in all.

    A kept table counts its finished deals plus one for the match it is reading.
    The least recently asked-for tables are dropped first; a table that alone holds
    more is answered but not kept (0: nothing is kept).
    """

    def __init__(
        self, max_deals: int = DEFAULT_CACHE_DEALS, page_deals: int = DEFAULT_PAGE_DEALS
    ) -> None:
        self.max_deals = max_deals
        self.page_deals = page_deals
        self._slots: OrderedDict[str, _Slot] = OrderedDict()
        self._weight = 0

    def __len__(self) -> int:
        return len(self._slots)

    @property
    def deals(self) -> int:
        """Deals held over all kept tables (at most ``max_deals``)."""
        return self._weight

    def versions(self) -> dict[str, int]:
        """Entries read so far per kept table (for tests and operators)."""
        return {table_id: slot.table.version for table_id, slot in self._slots.items()}

    async def answer(self, meta: TableMeta, entries: list[LogEntry], page: int) -> bytes:
        """The JSON answer for ``page`` of ``meta``'s table whose log is ``entries``.

        Reads only the entries not read before when the table is kept; raises
        ``EngineError`` (the table is dropped) or ``PageOutOfRange``.
        """
        keep = self.page_deals * MAX_HISTORY_PAGES
        slot = self._slots.get(meta.id)
        if slot is None or not slot.table.follows(meta, entries):
            self._drop(meta.id)
            slot = _Slot(TableHistory(meta, keep))
            self._slots[meta.id] = slot
            self._weight += slot.weight
        self._slots.move_to_end(meta.id)
        async with slot.lock:
            table = slot.table
            if not table.follows(meta, entries):
                # Another request read a longer log meanwhile (ours was loaded before it).
                table = TableHistory(meta, keep)
            try:
                await asyncio.to_thread(table.read, entries)
            except engine.EngineError:
                if self._slots.get(meta.id) is slot:
                    self._drop(meta.id)
                raise
            found = table.page(meta, page, self.page_deals)
            if self._slots.get(meta.id) is slot:
                weight = slot.weigh()
                self._weight += weight - slot.weight
                slot.weight = weight
        while self._weight > self.max_deals:
            self._drop(next(iter(self._slots)))
        return found

    def _drop(self, table_id: str) -> None:
        slot = self._slots.pop(table_id, None)
        if slot is not None:
            self._weight -= slot.weight
