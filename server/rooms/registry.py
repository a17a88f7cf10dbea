"""The tables this process serves: rooms it owns, and forwarders to other owners.

A table has one owner in the whole cluster: the process holding its lease in
Redis (``TableStore.acquire``).  The first process a socket of an unowned table
reaches takes it and runs its ``Room``; a socket reaching any other process is
served by that process's ``Forwarder`` through the ``Bus``.  The registry
renews the leases of its rooms; a room whose lease was taken over (this
process stalled past its expiry) is closed, and its sockets reconnect.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket

from server import presenter

from .bus import Bus, ToOwner, ToProcess
from .clock import WallClock
from .forward import Forwarder, RemoteConnection, background
from .log import rebuild
from .room import DEFAULT_MAX_SPECTATORS, Room, RoomClosed
from .seating import SeatError
from .seats import SPECTATOR
from .store import Holder, Lease, LeaseLost, StoreError, TableStore
from .updates import Closing

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "DEFAULT_LEASE_SECONDS",
    "Registry",
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
# Forwarders read the lease this many times per lease period, and report
# their sockets to the owner every second look.
_POLLS_PER_LEASE = 6
_ALIVE_EVERY = 2
# An owner forgets a forwarded socket not reported for this many reports.
_ALIVE_MISSED = 4


class TableBusy(StoreError):
    """Another process owns the table and this registry cannot forward to it."""


def process_id() -> str:
    """A name for this process that no other process, now or later, has."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


class Registry:
    """This process's live rooms by table id, and forwarders for tables owned elsewhere."""

    def __init__(
        self,
        store: TableStore,
        *,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        bus: Bus | None = None,
        proc: str | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        max_frame_bytes: int = 16 * 1024,
        queue_size: int = 64,
        clock: WallClock | None = None,
        max_spectators: int = DEFAULT_MAX_SPECTATORS,
    ) -> None:
        self._store = store
        self._idle_seconds = idle_seconds
        self._bus = bus
        self.proc = bus.proc if bus is not None else (proc or process_id())
        self._lease_ms = max(1, round(lease_seconds * 1000))
        self._poll = lease_seconds / _POLLS_PER_LEASE
        self._max_frame_bytes = max_frame_bytes
        self._queue_size = queue_size
        self._clock = clock
        self._max_spectators = max_spectators
        self._rooms: dict[str, Room] = {}
        self._forwarders: dict[str, Forwarder] = {}
        self._remote: dict[tuple[str, str, int], RemoteConnection] = {}
        self._loading: dict[str, asyncio.Task[Room | Holder | None]] = {}
        self._keeper: asyncio.Task[None] | None = None
        self.draining = False
        if bus is not None:
            bus.on_owner_message = self._from_forwarder
            bus.on_process_message = self._from_owner

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

    @property
    def forwarded(self) -> int:
        """Sockets of this process served by forwarding to another owner."""
        return sum(f.sockets for f in self._forwarders.values())

    async def room(self, table_id: str) -> Room | Forwarder | None:
        """Where a socket of ``table_id`` attaches: this process's room (loaded, and
        the table taken, if nobody owns it) or a forwarder to the owner; None when
        Redis has no such table."""
        room = self.live(table_id)
        if room is not None:
            return room
        forwarder = self._forwarders.get(table_id)
        if forwarder is not None and not forwarder.closed:
            return forwarder
        claimed = await self.claim(table_id)
        if not isinstance(claimed, Holder):
            return claimed
        forwarder = self._forwarders.get(table_id)
        if forwarder is not None and not forwarder.closed:
            return forwarder
        if self._bus is None:
            raise TableBusy(f"table {table_id} is owned by {claimed.owner}")
        forwarder = Forwarder(
            table_id,
            bus=self._bus,
            store=self._store,
            claim=self.claim,
            local=self.live,
            poll_seconds=self._poll,
            alive_every=_ALIVE_EVERY,
            max_frame_bytes=self._max_frame_bytes,
            on_closed=self._forget_forwarder,
        )
        self._forwarders[table_id] = forwarder
        return forwarder

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
        got = await self._store.acquire(table_id, self.proc, self._lease_ms)
        if not isinstance(got, Lease):
            return got
        try:
            return await self._load(got)
        except BaseException:
            background(self._store.release(got), f"release-{table_id}")
            raise

    async def _load(self, lease: Lease) -> Room | None:
        table_id = lease.table_id
        loaded = await self._store.load(table_id)
        if loaded is None:
            return None
        meta, entries = loaded
        if self._bus is not None:
            await self._bus.listen_table(table_id)
        room = Room(
            meta,
            rebuild(meta, entries),
            self._store,
            lease,
            idle_seconds=self._idle_seconds,
            clock=self._clock,
            max_spectators=self._max_spectators,
            on_closed=self._forget,
        )
        self._rooms[table_id] = room
        room.start()
        log.info("table %s loaded at version %d (fence %d)", table_id, len(entries), lease.fence)
        return room

    def _forget(self, room: Room) -> None:
        if self._rooms.get(room.id) is room:
            del self._rooms[room.id]
            if self._bus is not None:
                background(self._bus.ignore_table(room.id), f"ignore-{room.id}")
        # The room shuts its forwarded sockets itself (each tells its process).
        for key in [k for k in self._remote if k[0] == room.id]:
            del self._remote[key]
        background(self._store.release(room.lease), f"release-{room.id}")

    def _forget_forwarder(self, forwarder: Forwarder) -> None:
        if self._forwarders.get(forwarder.id) is forwarder:
            del self._forwarders[forwarder.id]

    # --- leases ----------------------------------------------------------------

    def _start_keeper(self) -> None:
        if self._keeper is None:
            self._keeper = asyncio.create_task(self._keep_leases(), name="lease-keeper")

    async def _keep_leases(self) -> None:
        period = self._lease_ms / 3000
        while True:
            await asyncio.sleep(period)
            rooms = [r for r in self._rooms.values() if not r.closed]
            results = await asyncio.gather(
                *(self._store.renew(r.lease, self._lease_ms) for r in rooms),
                return_exceptions=True,
            )
            for room, result in zip(rooms, results, strict=True):
                if isinstance(result, LeaseLost):
                    log.warning("table %s: taken over by another process; closing", room.id)
                    background(room.stop(Closing.TABLE_UNAVAILABLE), f"stop-{room.id}")
                elif isinstance(result, Exception):
                    log.warning("table %s: cannot renew the lease: %s", room.id, result)
            self._reap(asyncio.get_running_loop().time())

    def _reap(self, now: float) -> None:
        """Forget forwarded sockets whose process stopped reporting them (it died)."""
        horizon = self._poll * _ALIVE_EVERY * _ALIVE_MISSED
        for key, conn in list(self._remote.items()):
            if now - conn.last_seen > horizon:
                del self._remote[key]
                room = self.live(key[0])
                if room is not None:
                    room.detach(conn)
                conn.drop()

    # --- the bus -----------------------------------------------------------------

    def _from_owner(self, message: ToProcess) -> None:
        forwarder = self._forwarders.get(message.table)
        if forwarder is not None:
            forwarder.deliver(message)

    def _from_forwarder(self, table_id: str, message: ToOwner) -> None:
        room = self.live(table_id)
        if room is None or room.lease.fence != message.fence:
            return  # meant for another owner (fencing decides which one is current)
        assert self._bus is not None
        now = asyncio.get_running_loop().time()
        if message.kind == "alive":
            for conn_id, seat, version in message.conns:
                known = self._remote.get((table_id, message.proc, conn_id))
                if known is None or not known.open:
                    self._attach_remote(room, message.proc, conn_id, seat)
                else:
                    known.last_seen = now
                    if version != room.version:
                        room.resync(known)
            return
        key = (table_id, message.proc, message.conn)
        conn = self._remote.get(key)
        if message.kind == "attach":
            if conn is None or not conn.open:
                token = message.token or None
                self._attach_remote(room, message.proc, message.conn, message.seat, token)
            else:
                conn.last_seen = now
                room.resync(conn)
        elif message.kind == "detach":
            if conn is not None:
                del self._remote[key]
                room.detach(conn)
                conn.drop()
        elif conn is not None:
            conn.last_seen = now
            self._submit_remote(room, conn, message.frame)

    def _attach_remote(
        self, room: Room, proc: str, conn_id: int, seat: int, token: str | None = None
    ) -> None:
        assert self._bus is not None
        # Any seat or a spectator: the room checks the token (an open bot seat's invite
        # makes that seat human on its first join).
        if seat != SPECTATOR and not 0 <= seat < len(room.meta.seats):
            log.warning("table %s: %s forwarded a socket for seat %d", room.id, proc, seat)
            return
        stale = self._remote.pop((room.id, proc, conn_id), None)
        if stale is not None:
            room.detach(stale)
            stale.drop()
        conn = RemoteConnection(
            self._bus, room.id, room.lease.fence, proc, conn_id, seat, self._queue_size
        )
        self._remote[(room.id, proc, conn_id)] = conn
        conn.start()

        async def attach() -> None:
            try:
                await room.attach(conn, token)
            except RoomClosed:
                conn.end(Closing.TABLE_UNAVAILABLE)
            except SeatError as exc:
                frame, code, reason = presenter.seat_refusal(exc)
                conn.push_frame(frame)
                conn.shut(code, reason)

        background(attach(), f"attach-{room.id}-{conn_id}")

    def _submit_remote(self, room: Room, conn: RemoteConnection, frame: str) -> None:
        # Read exactly as a local socket's frame: a forwarding process is no excuse.
        if conn.seat == SPECTATOR:
            conn.push_frame(
                presenter.read_watching(frame, self._max_frame_bytes, version=room.version)
            )
            return
        inbound = presenter.read(frame, self._max_frame_bytes, seat=conn.seat, version=room.version)
        if isinstance(inbound, presenter.Answer):
            conn.push_frame(inbound.frame)
        else:
            room.submit(conn, inbound.version, inbound.request)

    # --- shutting down -------------------------------------------------------------

    async def drain(self, why: Closing = Closing.SHUTDOWN) -> None:
        """Stop serving: every room closes and releases its lease (others take the
        tables at once), every socket is told to reconnect (to another process)."""
        self.draining = True
        forwarders = list(self._forwarders.values())
        rooms = list(self._rooms.values())
        await asyncio.gather(
            *(f.stop(why) for f in forwarders),
            *(r.stop(why) for r in rooms),
            return_exceptions=True,
        )
        # The rooms started their releases as they closed; make sure they reached Redis.
        await asyncio.gather(*(self._store.release(r.lease) for r in rooms), return_exceptions=True)

    async def close(self) -> None:
        """Stop every room and forwarder (sockets get 1001) and any load under way."""
        for task in list(self._loading.values()):
            task.cancel()
        await self.drain()
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)
