"""The tables this process owns: their rooms, loaded from Redis on first use.

A table has one owner in the whole cluster: the process holding its lease in
Redis (``TableStore.acquire``).  The first process a socket of an unowned table
reaches takes it and runs its ``Room`` (sockets reaching any other process are
forwarded to it: ``server.cluster``).  The registry renews the leases of its
rooms; a room whose lease was taken over (this process stalled past its
expiry) is closed, and its sockets reconnect.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .audience import DEFAULT_MAX_SOCKETS_PER_SEAT
from .clock import MonotonicClock, WallClock, sleep_until
from .entropy import ENTROPY_WAIT_SECONDS
from .log import rebuild
from .room import DEFAULT_MAX_SPECTATORS, Room
from .store import Holder, Lease, LeaseLost, StoreError, TableStore
from .tasks import background
from .updates import Closing

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "DEFAULT_LEASE_SECONDS",
    "RENEWAL_GROUPS",
    "RENEWAL_GROUP_FILL",
    "Registry",
    "RoomHooks",
    "TableBusy",
    "process_id",
]

log = logging.getLogger(__name__)

# A room with no connection stays in memory this long (its bots keep playing),
# then it is dropped; the next connection rebuilds it from Redis.
DEFAULT_IDLE_SECONDS = 60.0
# How long a lease outlives its last renewal: the longest a table waits for a
# new owner after its owner died.  Renewed every third of it.
DEFAULT_LEASE_SECONDS = 3.0
# The rooms' leases are renewed in this many groups, one group every
# 1/RENEWAL_GROUPS of that third: each lease still once per third, but a thousand
# tables' renewals are no longer one burst that every table's next action waits
# behind (measured in docs/performance.md, session 9).
RENEWAL_GROUPS = 8
# Leases one group holds before the next group gets any (see ``_renewal_group``).
RENEWAL_GROUP_FILL = 32


class TableBusy(StoreError):
    """Another process owns the table (and nothing here forwards to it)."""


def process_id() -> str:
    """A name for this process that no other process, now or later, has."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


async def _nothing(room: Room) -> None:
    return None


@dataclass
class RoomHooks:
    """Callbacks the registry runs as its rooms load and close (the cluster node's: its
    bus subscriptions).  Not a source of rooms: the registry is.

    ``on_loaded`` runs before a new room is handed out; ``on_closed`` when it closed.
    """

    on_loaded: Callable[[Room], Awaitable[None]] = _nothing
    on_closed: Callable[[Room], None] = lambda room: None


class Registry:
    """This process's live rooms by table id; each table is taken and loaded at most once.

    Taking a table is acquiring its lease (``TableStore.acquire``); the registry
    renews the leases of its rooms every third of the lease, closes a room whose
    lease another process took (its writes would be refused anyway), and releases
    a room's lease when it closes.
    """

    def __init__(
        self,
        store: TableStore,
        *,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        proc: str | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        clock: WallClock | None = None,
        max_spectators: int = DEFAULT_MAX_SPECTATORS,
        max_sockets_per_seat: int = DEFAULT_MAX_SOCKETS_PER_SEAT,
        lease_clock: WallClock | None = None,
        entropy_wait_seconds: float = ENTROPY_WAIT_SECONDS,
        renewal_fill: int = RENEWAL_GROUP_FILL,
    ) -> None:
        self._store = store
        self._entropy_wait_seconds = entropy_wait_seconds
        self._idle_seconds = idle_seconds
        self.proc = proc or process_id()
        self._lease_ms = max(1, round(lease_seconds * 1000))
        self._lease_seconds = self._lease_ms / 1000
        self._clock = clock
        # The leases' time: when to renew, and until when a room's lease is surely held
        # (monotonic unless a test injects one).
        self._lease_clock: WallClock = lease_clock or MonotonicClock()
        self._max_spectators = max_spectators
        self._max_sockets_per_seat = max_sockets_per_seat
        self._rooms: dict[str, Room] = {}
        # The same rooms, in RENEWAL_GROUPS groups of (nearly) equal size.
        self._renewal_groups: list[dict[str, Room]] = [{} for _ in range(RENEWAL_GROUPS)]
        self._renewal_fill = renewal_fill
        self._loading: dict[str, asyncio.Task[Room | Holder | None]] = {}
        self._keeper: asyncio.Task[None] | None = None
        self.hooks: list[RoomHooks] = []
        self.draining = False

    def live(self, table_id: str) -> Room | None:
        """The room of ``table_id`` if it is loaded here and still running."""
        room = self._rooms.get(table_id)
        return room if room is not None and not room.closed else None

    def __len__(self) -> int:
        """Rooms loaded here (the live tables of this process)."""
        return len(self._rooms)

    @property
    def owned(self) -> list[str]:
        """The tables this process owns (runs the room of) right now."""
        return sorted(self._rooms)

    async def room(self, table_id: str) -> Room | None:
        """The live room of ``table_id``, taking and loading the table if nobody holds it;
        None if Redis has no such table, ``TableBusy`` if another process holds it."""
        claimed = await self.claim(table_id)
        if isinstance(claimed, Holder):
            raise TableBusy(f"table {table_id} is owned by {claimed.owner}")
        return claimed

    async def claim(self, table_id: str) -> Room | Holder | None:
        """Take ``table_id`` if nobody holds it, loading it once however many ask:
        the room, the live lease's ``Holder``, or None if Redis has no such table."""
        room = self.live(table_id)
        if room is not None:
            return room
        if self.draining:
            holder = await self._store.holder(table_id)
            return holder or Holder("draining", 0)
        self._start_keeper()
        task = self._loading.get(table_id)
        if task is None:
            task = asyncio.create_task(self._claim(table_id), name=f"claim-{table_id}")
            self._loading[table_id] = task
            task.add_done_callback(lambda _: self._loading.pop(table_id, None))
        # One waiter giving up (its socket closed) must not cancel the load for the others.
        return await asyncio.shield(task)

    async def _claim(self, table_id: str) -> Room | Holder | None:
        asked = self._lease_clock.now()
        got = await self._store.acquire(table_id, self.proc, self._lease_ms)
        if not isinstance(got, Lease):
            return got
        try:
            return await self._load(got, asked + self._lease_seconds)
        except BaseException:
            background(self._store.release(got), f"release-{table_id}")
            raise

    async def _load(self, lease: Lease, lease_until: float) -> Room | None:
        table_id = lease.table_id
        loaded = await self._store.load(table_id)
        if loaded is None:
            return None
        meta, entries = loaded
        room = Room(
            meta,
            rebuild(meta, entries),
            self._store,
            lease,
            idle_seconds=self._idle_seconds,
            clock=self._clock,
            max_spectators=self._max_spectators,
            max_sockets_per_seat=self._max_sockets_per_seat,
            lease_clock=self._lease_clock,
            lease_seconds=self._lease_seconds,
            lease_until=lease_until,
            on_closed=self._forget,
            entropy_wait_seconds=self._entropy_wait_seconds,
        )
        for hooks in self.hooks:
            await hooks.on_loaded(room)
        self._rooms[table_id] = room
        self._renewal_group()[table_id] = room
        room.start()
        log.info("table %s loaded at version %d (fence %d)", table_id, len(entries), lease.fence)
        return room

    def _renewal_group(self) -> dict[str, Room]:
        # Filled up to ``renewal_fill`` before the next is used: a process with a few
        # tables renews them in one script call per third, not in eight (every process
        # of a cluster pays these, whatever its share of the tables); past eight full
        # groups they spread evenly.
        for group in self._renewal_groups:
            if 0 < len(group) < self._renewal_fill:
                return group
        return min(self._renewal_groups, key=len)

    def _forget(self, room: Room) -> None:
        if self._rooms.get(room.id) is room:
            del self._rooms[room.id]
        for group in self._renewal_groups:
            if group.get(room.id) is room:
                del group[room.id]
        for hooks in self.hooks:
            hooks.on_closed(room)
        background(self._store.release(room.lease), f"release-{room.id}")

    # --- leases ----------------------------------------------------------------

    def _start_keeper(self) -> None:
        if self._keeper is None:
            self._keeper = asyncio.create_task(self._keep_leases(), name="lease-keeper")

    async def _keep_leases(self) -> None:
        # One group per step, on a fixed schedule, so each room is renewed every
        # third of its lease: a slow reply holds up the groups after it only until
        # it comes, and the schedule does not slip by it.
        step = self._lease_ms / 3000 / RENEWAL_GROUPS
        clock = self._lease_clock
        due = clock.now()
        for group in itertools.cycle(self._renewal_groups):
            due += step
            await sleep_until(clock, due)
            rooms = [r for r in group.values() if not r.closed]
            if not rooms:
                continue
            sent = clock.now()
            results = await self._store.renew_all([r.lease for r in rooms], self._lease_ms)
            for room, result in zip(rooms, results, strict=True):
                if result is None:
                    room.lease_renewed(sent + self._lease_seconds)
                elif isinstance(result, LeaseLost):
                    log.warning("table %s: taken over by another process; closing", room.id)
                    background(room.stop(Closing.TABLE_UNAVAILABLE), f"stop-{room.id}")
                elif isinstance(result, Exception):
                    log.warning("table %s: cannot renew the lease: %s", room.id, result)

    # --- shutting down -------------------------------------------------------------

    async def drain(self, why: Closing = Closing.SHUTDOWN) -> None:
        """Stop serving: every room closes and releases its lease (others take the
        tables at once), every socket is told to reconnect (to another process)."""
        self.draining = True
        rooms = list(self._rooms.values())
        await asyncio.gather(*(r.stop(why) for r in rooms), return_exceptions=True)
        # The rooms started their releases as they closed; make sure they reached Redis.
        await asyncio.gather(*(self._store.release(r.lease) for r in rooms), return_exceptions=True)

    async def close(self) -> None:
        """Stop every room (sockets get 1001), any load under way, and the lease keeper."""
        for task in list(self._loading.values()):
            task.cancel()
        await self.drain()
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)
