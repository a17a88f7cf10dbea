"""This process in the cluster: its rooms (``Registry``), its forwarders, its bus.

The socket handler asks ``Node.table`` for the ``TableHandle`` a socket of a
table attaches to: the local room (the table is taken if nobody holds it) or a
``Forwarder`` to the process that owns it.  As an owner, the node turns the
forwarders' messages into ``RemoteConnection`` listeners of its rooms, hands
their frames to the same ``LocalTable.take`` as local ones, and forgets sockets
whose process stopped reporting.
"""

from __future__ import annotations

import asyncio
import logging

from server.rooms.registry import Registry, RoomHooks
from server.rooms.room import Room
from server.rooms.seats import SPECTATOR
from server.rooms.store import Holder, TableStore
from server.rooms.tasks import background
from server.rooms.updates import Closing

from .bus import Bus, ToOwner, ToProcess
from .forward import Forwarder, RemoteConnection, attach_or_refuse
from .table import LocalTable, TableHandle

__all__ = ["Node"]

log = logging.getLogger(__name__)

# Forwarders read the lease this many times per lease period, and report their
# sockets to the owner every second look.
_POLLS_PER_LEASE = 6
_ALIVE_EVERY = 2
# An owner forgets a forwarded socket not reported for this many reports.
_ALIVE_MISSED = 4


class _HolderLooks:
    """Forwarders' lease looks of one beat, sent to Redis as one pipeline."""

    def __init__(self, store: TableStore) -> None:
        self._store = store
        self._pending: dict[str, list[asyncio.Future[Holder | None]]] = {}
        self._flusher: asyncio.Task[None] | None = None

    async def get(self, table_id: str) -> Holder | None:
        """Who holds ``table_id`` (None: nobody), asked together with this beat's others."""
        future: asyncio.Future[Holder | None] = asyncio.get_running_loop().create_future()
        self._pending.setdefault(table_id, []).append(future)
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush(), name="lease-looks")
        return await future

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # the other forwarders woken on this beat join in
        batch, self._pending = self._pending, {}
        self._flusher = None
        try:
            holders = await self._store.holders(list(batch))
        except Exception as exc:  # each forwarder handles (logs) the error itself
            for futures in batch.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(exc)
            return
        for futures, holder in zip(batch.values(), holders, strict=True):
            for future in futures:
                if not future.done():
                    future.set_result(holder)


class Node:
    """Where each socket of this process is served, and the owner's side of the bus."""

    def __init__(
        self,
        registry: Registry,
        bus: Bus,
        store: TableStore,
        *,
        lease_seconds: float,
        max_frame_bytes: int,
        queue_size: int,
    ) -> None:
        self.registry = registry
        self._bus = bus
        self._store = store
        self._poll = lease_seconds / _POLLS_PER_LEASE
        self._max_frame_bytes = max_frame_bytes
        self._queue_size = queue_size
        self._forwarders: dict[str, Forwarder] = {}
        self._remote: dict[tuple[str, str, int], RemoteConnection] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._holders = _HolderLooks(store)
        registry.hooks.append(RoomHooks(on_loaded=self._listen, on_closed=self._room_closed))
        bus.on_owner_message = self._from_forwarder
        bus.on_process_message = self._from_owner

    @property
    def proc(self) -> str:
        """This process's id in the cluster (the owner named in its leases)."""
        return self.registry.proc

    @property
    def draining(self) -> bool:
        """True from the start of a graceful shutdown."""
        return self.registry.draining

    @property
    def forwarded(self) -> int:
        """Sockets of this process served by forwarding to another owner."""
        return sum(f.sockets for f in self._forwarders.values())

    async def table(self, table_id: str) -> TableHandle | None:
        """Where a socket of ``table_id`` attaches: this process's room (loaded, and
        the table taken, if nobody owns it) or a forwarder to the owner; None when
        Redis has no such table."""
        self._start_reaper()
        room = self.registry.live(table_id)
        if room is not None:
            return LocalTable(room, self._max_frame_bytes)
        forwarder = self._forwarders.get(table_id)
        if forwarder is not None and not forwarder.closed:
            return forwarder
        claimed = await self.registry.claim(table_id)
        if isinstance(claimed, Room):
            return LocalTable(claimed, self._max_frame_bytes)
        if claimed is None:
            return None
        forwarder = self._forwarders.get(table_id)
        if forwarder is not None and not forwarder.closed:
            return forwarder
        forwarder = Forwarder(
            table_id,
            bus=self._bus,
            holder=self._holders.get,
            claim=self.registry.claim,
            local=self.registry.live,
            poll_seconds=self._poll,
            alive_every=_ALIVE_EVERY,
            max_frame_bytes=self._max_frame_bytes,
            on_closed=self._forget_forwarder,
        )
        self._forwarders[table_id] = forwarder
        return forwarder

    def _forget_forwarder(self, forwarder: Forwarder) -> None:
        if self._forwarders.get(forwarder.id) is forwarder:
            del self._forwarders[forwarder.id]

    # --- the registry's rooms --------------------------------------------------------

    async def _listen(self, room: Room) -> None:
        # Before the room is handed out: forwarders' messages must reach it from the start.
        await self._bus.listen_table(room.id)

    def _room_closed(self, room: Room) -> None:
        background(self._bus.ignore_table(room.id), f"ignore-{room.id}")
        # The room shuts its forwarded sockets itself (each tells its process).
        for key in [k for k in self._remote if k[0] == room.id]:
            del self._remote[key]

    def _start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap_forever(), name="remote-reaper")

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self._poll * _ALIVE_EVERY)
            self._reap(asyncio.get_running_loop().time())

    def _reap(self, now: float) -> None:
        """Forget forwarded sockets whose process stopped reporting them (it died)."""
        horizon = self._poll * _ALIVE_EVERY * _ALIVE_MISSED
        for key, conn in list(self._remote.items()):
            if now - conn.last_seen > horizon:
                del self._remote[key]
                room = self.registry.live(key[0])
                if room is not None:
                    room.detach(conn)
                conn.drop()

    # --- the bus -----------------------------------------------------------------

    def _from_owner(self, message: ToProcess) -> None:
        forwarder = self._forwarders.get(message.table)
        if forwarder is not None:
            forwarder.deliver(message)

    def _from_forwarder(self, table_id: str, message: ToOwner) -> None:
        room = self.registry.live(table_id)
        if room is None or room.lease.fence != message.fence:
            return  # meant for another owner (fencing decides which one is current)
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
                self._attach_remote(
                    room, message.proc, message.conn, message.seat, token, message.deltas
                )
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
            # Read exactly as a local socket's frame: a forwarding process is no excuse.
            LocalTable(room, self._max_frame_bytes).take(conn, message.frame)

    def _attach_remote(
        self,
        room: Room,
        proc: str,
        conn_id: int,
        seat: int,
        token: str | None = None,
        deltas: bool = False,
    ) -> None:
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
        conn.feed.deltas = deltas
        self._remote[(room.id, proc, conn_id)] = conn
        conn.start()

        background(attach_or_refuse(room, conn, token), f"attach-{room.id}-{conn_id}")

    # --- shutting down -------------------------------------------------------------

    async def drain(self, why: Closing = Closing.SHUTDOWN) -> None:
        """Stop serving: forwarded sockets are told to reconnect, every room closes
        and releases its lease (others take the tables at once)."""
        self.registry.draining = True
        await asyncio.gather(
            *(f.stop(why) for f in list(self._forwarders.values())), return_exceptions=True
        )
        await self.registry.drain(why)

    async def close(self) -> None:
        """Drain, then stop the reaper and the registry's own tasks."""
        await self.drain()
        if self._reaper is not None:
            self._reaper.cancel()
            await asyncio.gather(self._reaper, return_exceptions=True)
        await self.registry.close()
