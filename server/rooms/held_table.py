"""The table a room holds: its meta, its match and their numbers, and the versioned
writes that move them.

Every helper of a room reads the table here and every change of it goes through
here, so that the rule the room keeps (the write first, then the change in
memory, nobody told before either) has one place.  A write is checked against
the version the room holds and fenced by its lease (``store.py``); a write that
fails raises and changes nothing here, and the room closes.  Only the room's
task calls it.
"""

from __future__ import annotations

import msgspec

from server import engine

from .clock import WallClock
from .commit import Commit
from .log import TableMeta, TableState, rebuild
from .store import Lease, TableStore
from .turns import clock_for

__all__ = ["HeldTable"]


class HeldTable:
    """One live table's meta, match, match number, version and turn version, and the
    store and lease its writes go through."""

    # A thousand live tables each hold one: a slotted instance keeps no attribute dict.
    __slots__ = (
        "_clock",
        "_store",
        "lease",
        "match_no",
        "meta",
        "state",
        "turn_version",
        "version",
    )

    def __init__(
        self, meta: TableMeta, table: TableState, store: TableStore, lease: Lease, clock: WallClock
    ) -> None:
        self.meta = meta
        self.state: engine.MatchState = table.match
        self.match_no = table.match_no
        # How many actions the table has accepted (its Redis log length).
        self.version = table.version
        # The version at which the current turn began: a stored turn clock is this turn's
        # if it started there (``turns.clock_for``).
        self.turn_version = table.turn_version
        self._store = store
        # Every write goes through this lease: once another process has taken the
        # table, the store refuses it (LeaseLost) and the room closes.
        self.lease = lease
        self._clock = clock

    @property
    def between_deals(self) -> bool:
        """Whether the current deal is over (seats change hands only then)."""
        return self.state.deal.result is not None

    @property
    def bot_match(self) -> int:
        """The match a bot that hands its seat over now played part of (-1: the match is
        over, the next one is the new player's whole)."""
        return -1 if self.state.winners is not None else self.match_no

    def with_clock(self, meta: TableMeta) -> TableMeta:
        """``meta`` carrying the current turn's clock (a stored one runs on; a missing one
        starts now)."""
        if meta.first_deal_waits:
            return meta  # no turn before the first deal
        clock = clock_for(meta, self.state, self.turn_version, self._clock.now())
        return meta if clock == meta.clock else msgspec.structs.replace(meta, clock=clock)

    async def save_meta(self, meta: TableMeta) -> None:
        """Store ``meta`` (no log entry), then hold it; nothing to write when unchanged."""
        if meta == self.meta:
            return
        await self.write_meta(meta)

    async def write_meta(self, meta: TableMeta) -> None:
        """Store ``meta`` even if it looks unchanged, then hold it."""
        await self._store.save_meta(self.lease, self.version, meta)
        self.meta = meta

    async def deal_first(self, meta: TableMeta) -> None:
        """The table's first deal, dealt from the seeds ``meta`` keeps (no log entry
        carries them): store the meta, with the first turn's clock, and hold its match."""
        self.state = rebuild(meta, []).match
        await self.save_meta(self.with_clock(meta))

    async def append(self, commit: Commit) -> None:
        """Append ``commit``'s entries (and its meta, if changed) in one write, then hold
        what they made: the new version, meta, turn and, for a new match, the match."""
        meta = commit.meta
        self.version = await self._store.append(
            self.lease, self.version, commit.entries, None if meta == self.meta else meta
        )
        self.meta = meta
        self.turn_version = commit.turn_version
        if commit.new_match is not None:
            self.state = commit.new_match
            self.match_no += 1
