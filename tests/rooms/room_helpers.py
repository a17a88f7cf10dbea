"""Helpers for the rooms tests: tables straight in the store, in-memory socket ends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
import redis.asyncio as aioredis

from server import engine
from server.connection import Connection
from server.rooms.log import LogEntry, TableMeta
from server.rooms.store import Lease, TableStore
from server.rooms.tables import CreatedSeat, CreateTableRequest, build_table

__all__ = [
    "GUARD_SECONDS",
    "START",
    "STORE_TTL_SECONDS",
    "FakeClock",
    "Socket",
    "lease_of",
    "log_of",
    "new_table",
    "seed_where_leader_is",
    "take_over",
]

# The expiry the rooms tests' store gives tables.
STORE_TTL_SECONDS = 3600
# Long enough for anything that is not hung: a guard, never a speed check.
GUARD_SECONDS = 20.0


# When a test's injected clock starts.
START = 1_800_000_000.0


@dataclass
class _Timer:
    when: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class FakeClock:
    """Wall-clock time that stands still until ``advance``; timers fire then."""

    t: float = START
    timers: list[_Timer] = field(default_factory=list)

    def now(self) -> float:
        return self.t

    def call_at(self, when: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(when, callback)
        self.timers.append(timer)
        if when <= self.t:  # already due: soon, as a real timer with no delay left
            asyncio.get_running_loop().call_soon(self._fire, timer)
        return timer

    def _fire(self, timer: _Timer) -> None:
        if not timer.cancelled:
            timer.cancelled = True
            timer.callback()

    def pending(self) -> list[float]:
        """When the timers not yet fired or cancelled are due."""
        return sorted(t.when for t in self.timers if not t.cancelled)

    def advance(self, seconds: float) -> None:
        self.t += seconds
        for timer in list(self.timers):
            if timer.when <= self.t:
                self._fire(timer)


def seed_where_leader_is(seat: int, rules: engine.Rules | None = None) -> int:
    """The first seed whose first deal is led by ``seat`` (the holder of the 3 of spades)."""
    rules = rules or engine.Rules()
    return next(s for s in range(1000) if engine.new_match(rules, s).deal.turn == seat)


async def new_table(store: TableStore, **fields: object) -> tuple[TableMeta, list[CreatedSeat]]:
    request = msgspec.convert(fields, CreateTableRequest)
    meta, seats = build_table(request)
    await store.create(meta)
    return meta, seats


async def log_of(store: TableStore, table_id: str) -> list[LogEntry]:
    """The table's log as Redis holds it."""
    loaded = await store.load(table_id)
    assert loaded is not None
    return loaded[1]


async def lease_of(store: TableStore, table_id: str, owner: str = "test-writer") -> Lease:
    """Take ``table_id`` for ``owner`` (a minute's lease), as a server process would."""
    lease = await store.acquire(table_id, owner, 60_000)
    assert isinstance(lease, Lease), lease
    return lease


# The fence goes up and the lease changes hands in one script: nothing (the owner's
# lease keeper renewing) can slip in between, as it could between a DEL and an acquire.
_TAKE_OVER = """
local fence = redis.call('INCR', KEYS[1])
redis.call('SET', KEYS[2], fence .. ' ' .. ARGV[1], 'PX', 60000)
return fence
"""


async def take_over(redis: aioredis.Redis, table_id: str, owner: str = "successor") -> Lease:
    """As if the table's owner had stalled past its lease and ``owner`` had taken it."""
    keys = [f"pdk:{{{table_id}}}:fence", f"pdk:{{{table_id}}}:lease"]
    fence = await redis.eval(_TAKE_OVER, 2, *keys, owner)  # type: ignore[misc]
    return Lease(table_id, owner, int(fence))


class Socket:
    """The far end of a ``Connection``: frames land in a queue, decoded."""

    def __init__(self, seat: int, queue_size: int = 256) -> None:
        self.frames: asyncio.Queue[dict[str, object]] = asyncio.Queue()
        self.conn = Connection(seat, self._send, queue_size)
        self.conn.start()

    async def _send(self, frame: str) -> None:
        self.frames.put_nowait(msgspec.json.decode(frame))

    async def next(self, kind: str | None = None) -> dict[str, object]:
        """The next frame (of type ``kind``, skipping others)."""
        while True:
            frame = await asyncio.wait_for(self.frames.get(), GUARD_SECONDS)
            if kind is None or frame["type"] == kind:
                return frame

    async def state_where(
        self, predicate: Callable[[dict[str, object]], bool]
    ) -> dict[str, object]:
        while True:
            frame = await self.next("state")
            if predicate(frame):
                return frame
