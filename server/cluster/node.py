"""This process in the cluster: its rooms (``Registry``), its forwarders, its bus.

The socket handler asks ``Node.table`` for the ``TableHandle`` a socket of a
table attaches to: the local room (the table is taken if nobody holds it) or a
``Forwarder`` to the process that owns it.  As an owner, the node turns the
forwarders' messages into ``RemoteConnection`` listeners of its rooms, hands
their frames to the same ``LocalTable.take`` as local ones, and forgets sockets
whose process stopped reporting.

Handover: ownership follows the players.  The proxy sends every socket of a
table to one process (it hashes the table id in the socket's URL), so a table
is forwarded only when its owner is not that process: the owner died and its
sockets moved, the proxy's replicas changed, or a socket came without the id.
An owner whose sockets all arrive forwarded from one other process, for
``handover_seconds`` in a row and after owning the table that long, offers it
to that process; the process holds its sockets' next requests and answers
``yield`` behind everything it forwarded before; the owner lets the room run
what it already queued, stops it, releases the lease and says ``yours``; the
process takes the table (the fenced lease: nobody else can write meanwhile)
and hands its held requests to the new room, in order.  The hold time is the
hysteresis: a table moves at most once per ``handover_seconds`` per process,
and only towards a process that holds every one of its sockets.
"""

from __future__ import annotations

import asyncio
import logging

from redis.exceptions import RedisError

from server.rooms.registry import Registry, RoomHooks
from server.rooms.room import Room
from server.rooms.seats import SPECTATOR
from server.rooms.store import Holder, StoreError, TableStore
from server.rooms.tasks import background
from server.rooms.updates import Closing

from .bus import Bus, ToOwner, ToProcess
from .forward import Forwarder, RemoteConnection, attach_or_refuse
from .table import LocalTable, TableHandle

__all__ = ["DEFAULT_HANDOVER_SECONDS", "Node"]

log = logging.getLogger(__name__)

# Forwarders read the lease this many times per lease period, and report their
# sockets to the owner every second look.
_POLLS_PER_LEASE = 6
_ALIVE_EVERY = 2
# An owner forgets a forwarded socket not reported for this many reports.
_ALIVE_MISSED = 4
# How long every socket of a table must have come from one other process (and the
# owner must have held the table) before the owner hands the table to it; 0: never.
DEFAULT_HANDOVER_SECONDS = 5.0
# An offer not answered within this many lease looks lapses (the answer is ignored).
_OFFER_LOOKS = 2


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
        handover_seconds: float = DEFAULT_HANDOVER_SECONDS,
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
        self._handover_seconds = handover_seconds
        # Per owned table: when it was loaded here; since when all its sockets came
        # from one other process (and which); an open offer (to whom, fence, until).
        self._loaded_at: dict[str, float] = {}
        self._lonely: dict[str, tuple[str, float]] = {}
        self._offers: dict[str, tuple[str, int, float]] = {}
        self._handing: set[str] = set()
        self.handovers = 0
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

    @property
    def frames_forwarded(self) -> int:
        """Game frames this process sent to another through the bus, since it started."""
        return self._bus.frames_forwarded

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
        self._loaded_at[room.id] = asyncio.get_running_loop().time()

    def _room_closed(self, room: Room) -> None:
        background(self._bus.ignore_table(room.id), f"ignore-{room.id}")
        self._loaded_at.pop(room.id, None)
        self._lonely.pop(room.id, None)
        self._offers.pop(room.id, None)
        # The room shuts its forwarded sockets itself (each tells its process).
        for key in [k for k in self._remote if k[0] == room.id]:
            del self._remote[key]

    def _start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap_forever(), name="remote-reaper")

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self._poll * _ALIVE_EVERY)
            now = asyncio.get_running_loop().time()
            self._reap(now)
            self._consider_handovers(now)

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

    # --- handover ------------------------------------------------------------------

    def _consider_handovers(self, now: float) -> None:
        """Offer each table whose sockets have all been on one other process for
        ``handover_seconds`` (and that this process has owned as long) to it."""
        if self._handover_seconds <= 0 or self.draining:
            return
        lonely: dict[str, tuple[str, float]] = {}
        for table_id in {key[0] for key in self._remote}:
            room = self.registry.live(table_id)
            if room is None or table_id in self._handing:
                continue
            listeners = room.listeners
            procs = {c.proc if isinstance(c, RemoteConnection) else "" for c in listeners}
            if len(procs) != 1 or "" in procs:
                continue  # a local socket, or sockets on several processes: stay
            proc = procs.pop()
            was = self._lonely.get(table_id)
            since = was[1] if was is not None and was[0] == proc else now
            lonely[table_id] = (proc, since)
            offer = self._offers.get(table_id)
            if offer is not None and offer[2] >= now:
                continue
            if offer is not None:  # lapsed unanswered: wait the whole time again
                del self._offers[table_id]
                lonely[table_id] = (proc, now)
                continue
            held = now - self._loaded_at.get(table_id, now)
            if min(now - since, held) >= self._handover_seconds:
                fence = room.lease.fence
                self._offers[table_id] = (proc, fence, now + self._poll * _OFFER_LOOKS)
                message = ToProcess(table=table_id, fence=fence, conn=0, handover="offer")
                background(self._bus.to_process(proc, message), f"offer-{table_id}")
        self._lonely = lonely

    def _yielded(self, room: Room, proc: str) -> None:
        """``proc`` answered this process's offer of ``room``'s table: hand it over."""
        offer = self._offers.pop(room.id, None)
        now = asyncio.get_running_loop().time()
        if offer is None or offer[:2] != (proc, room.lease.fence) or offer[2] < now:
            return  # no such offer, or it lapsed: the forwarder stops waiting on its own
        self._handing.add(room.id)
        background(self._hand_over(room, proc), f"handover-{room.id}")

    async def _hand_over(self, room: Room, proc: str) -> None:
        try:
            gone = [key for key in self._remote if key[0] == room.id and key[1] == proc]
            conns = [self._remote.pop(key) for key in gone]
            for conn in conns:
                room.detach(conn)  # behind the requests already queued: they run first
            # Anyone who came here meanwhile gets 4503 and reconnects (to the new owner).
            await room.stop(Closing.TABLE_UNAVAILABLE)
            await self._store.release(room.lease)
            for conn in conns:
                conn.drop()
            yours = ToProcess(table=room.id, fence=room.lease.fence, conn=0, handover="yours")
            await self._bus.to_process(proc, yours)
            self.handovers += 1
            log.info("table %s: handed over to %s", room.id, proc)
        except (RedisError, OSError, StoreError) as exc:
            # The lease runs out on its own; the forwarder takes the table then.
            log.warning("table %s: handover to %s: %s", room.id, proc, exc)
        finally:
            self._handing.discard(room.id)

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
        if message.kind == "yield":
            self._yielded(room, message.proc)
            return
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
