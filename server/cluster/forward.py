"""Sockets of tables another process owns: forwarded through the ``Bus``.

On the owner, a socket of another process is a ``RemoteConnection``: to the
room it is one more listener of a seat (its own view only, the same bounded
queue, frames made by the same presenter), whose writer publishes each frame
to that process instead of writing a socket.  Its client frames arrive
verbatim and are read on the owner again, by the same ``table.read_frame``.

On the other process, a ``Forwarder`` holds its sockets of the table: to
the session it is a ``TableHandle`` like a local room.  It reads each client
frame here first, exactly as a local one (``table.read_frame``: a refused
frame, invalid UTF-8 included, is answered here and never crosses), and sends
the owner only the requests, verbatim.

It watches the table's lease: when the owner changes it attaches every socket
to the new one (each gets a full state, as after a reconnect), and when nobody
holds the table it takes the table itself and hands its sockets to the new
local room without closing them.  Frames from an owner whose fencing number is
not the current one are dropped.

When the owner offers it the table (every socket of the table is here:
node.py, "Handover"), it holds its sockets' next requests, answers ``yield``
behind everything it forwarded so far, and takes the table as soon as the
owner says ``yours`` (or the lease runs out): the held requests go to the local
room, in order, after each socket's full state.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable

import msgspec
from redis.exceptions import RedisError

from server import presenter
from server.connection import Connection
from server.engine import EngineError
from server.protocol import CloseCode
from server.rooms.room import Room, RoomClosed
from server.rooms.seating import SeatError
from server.rooms.store import Holder, StoreError
from server.rooms.tasks import background
from server.rooms.updates import Closing

from .bus import Bus, ToOwner, ToProcess
from .table import LocalTable, read_frame

__all__ = ["Forwarder", "RemoteConnection"]

log = logging.getLogger(__name__)

# Messages a forwarder queues for the owner before it refuses more (per table).
OUTBOX_SIZE = 256
# Lease looks a forwarder that answered a handover offer waits for the owner's
# ``yours`` before it forwards its held requests to the owner again (the owner
# never got the answer in time, or changed its mind).
YIELD_LOOKS = 6


async def attach_or_refuse(room: Room, conn: Connection, token_hash: str | None) -> None:
    """Seat ``conn`` in ``room``; a closed room ends it, and a token the room refuses (a
    revoked invite, a full gallery) gets its ``error`` frame and close code."""
    try:
        await room.attach(conn, token_hash)
    except RoomClosed:
        conn.end(Closing.TABLE_UNAVAILABLE)
    except SeatError as exc:
        frame, code, reason = presenter.seat_refusal(exc)
        conn.push_frame(frame)
        conn.shut(code, reason)


# Closes about one socket, not about the table: the socket ends here too (a slow reader;
# a revoked token; a full gallery; newer sockets of its seat).  Any other close means the
# owner let the table go.
_ENDS_THE_SOCKET = frozenset(
    {
        CloseCode.TOO_SLOW,
        CloseCode.BAD_TOKEN,
        CloseCode.TOO_MANY_SPECTATORS,
        CloseCode.REPLACED,
    }
)


class RemoteConnection(Connection):
    """A seat socket held by process ``proc``, as the owning room sees it."""

    def __init__(
        self, bus: Bus, table_id: str, fence: int, proc: str, conn_id: int, seat: int, queue: int
    ) -> None:
        super().__init__(seat, self._forward, queue)
        self._bus = bus
        self._table_id = table_id
        self._fence = fence
        self.proc = proc
        self.conn_id = conn_id
        self.last_seen = asyncio.get_running_loop().time()

    def _message(self, **fields: object) -> ToProcess:
        return msgspec.convert(
            {"table": self._table_id, "fence": self._fence, "conn": self.conn_id, **fields},
            ToProcess,
        )

    async def _forward(self, frame: str) -> None:
        await self._bus.to_process(self.proc, self._message(frame=frame))

    def shut(self, code: int, reason: str) -> None:
        """End the socket, and tell the process holding it to close it with ``code``."""
        if self.close_code is None:
            message = self._message(close=code, reason=reason)
            background(self._bus.to_process(self.proc, message), f"close-{self.conn_id}")
        super().shut(code, reason)

    def drop(self) -> None:
        """End it without telling the other process (which asked for it)."""
        if self.close_code is None:
            super().shut(1000, "detached")


class _Versioned(msgspec.Struct):
    version: int | None = None


_versioned = msgspec.json.Decoder(_Versioned)
_ids = itertools.count(1)

Claim = Callable[[str], Awaitable[Room | Holder | None]]


class Forwarder:
    """This process's sockets of one table that another process owns."""

    def __init__(
        self,
        table_id: str,
        *,
        bus: Bus,
        holder: Callable[[str], Awaitable[Holder | None]],
        claim: Claim,
        local: Callable[[str], Room | None],
        poll_seconds: float,
        alive_every: int,
        max_frame_bytes: int,
        on_closed: Callable[[Forwarder], None],
    ) -> None:
        self.id = table_id
        self._bus = bus
        self._holder = holder
        self._claim = claim
        self._local = local
        self._poll = poll_seconds
        self._alive_every = alive_every
        self._max_frame_bytes = max_frame_bytes
        self._on_closed = on_closed
        self._conns: dict[int, Connection] = {}
        self._tokens: dict[int, str] = {}  # conn id -> hash of the token it joined with
        self._ids: dict[int, int] = {}  # id(Connection) -> conn id
        self._seen: dict[int, int] = {}  # conn id -> last version it was sent
        self._fence: int | None = None
        # Set once this process took the table: its sockets are the local room's now.
        self._here: LocalTable | None = None
        self._version = 0
        # Client frames that arrived while no owner was known, in order.
        self._held: list[tuple[Connection, str]] = []
        # The fencing number of an owner this forwarder said ``yield`` to (frames are
        # held until that owner lets the table go), and how many looks ago.
        self._yielding: int | None = None
        self._yield_looks = 0
        # None ends the sender once everything before it went out.
        self._outbox: asyncio.Queue[ToOwner | None] = asyncio.Queue()
        self._wake = asyncio.Event()
        self._watcher = asyncio.create_task(self._watch(), name=f"forward-watch-{table_id}")
        self._sender = asyncio.create_task(self._send_loop(), name=f"forward-send-{table_id}")
        self.closed = False

    @property
    def version(self) -> int:
        """The table's version as last heard from its owner (or the local room's)."""
        return self._here.version if self._here is not None else self._version

    @property
    def sockets(self) -> int:
        """How many of this process's sockets sit at the table."""
        return len(self._conns)

    # --- the session's side (a ``TableHandle``) -----------------------------------

    async def attach(self, conn: Connection, token_hash: str | None = None) -> None:
        """Seat ``conn`` through the owner (or the room, once it is local); like ``Room``."""
        if self._here is not None:
            await self._here.attach(conn, token_hash)
            return
        if self.closed:
            raise RoomClosed(self.id)
        conn_id = next(_ids)
        self._conns[conn_id] = conn
        self._ids[id(conn)] = conn_id
        self._seen[conn_id] = -1
        self._tokens[conn_id] = token_hash or ""
        if self._fence is not None:
            self._post(
                "attach",
                conn=conn_id,
                seat=conn.seat,
                token=token_hash or "",
                deltas=conn.feed.deltas,
            )
        else:
            self._wake.set()

    def detach(self, conn: Connection) -> None:
        """Unseat ``conn``; the forwarder closes once it holds no socket."""
        if self._here is not None:
            self._here.detach(conn)
        conn_id = self._ids.pop(id(conn), None)
        if conn_id is None:
            return
        del self._conns[conn_id]
        self._seen.pop(conn_id, None)
        self._tokens.pop(conn_id, None)
        if self._fence is not None and self._here is None:
            self._post("detach", conn=conn_id)
        if not self._conns and self._here is None:
            self._close()

    def take(self, conn: Connection, frame: str | bytes) -> None:
        """Read a client frame here; a request goes to the owner (or the local room)."""
        if self._here is not None:
            self._here.take(conn, frame)
            return
        request = read_frame(conn, frame, self._max_frame_bytes, self.version)
        if request is None:
            return
        # The read above refused anything that is not UTF-8 JSON (``malformed_json``), so
        # this decodes a valid frame and cannot fail: what crosses is what was read.
        self._forward(conn, frame if isinstance(frame, str) else frame.decode("utf-8"))

    def _forward(self, conn: Connection, text: str) -> None:
        """Send a request the owner reads again (its version still decides), verbatim."""
        if self._here is not None:
            self._here.take(conn, text)
            return
        conn_id = self._ids.get(id(conn))
        if conn_id is None:
            return
        if self._fence is None or self._yielding is not None:
            # Between owners: the frame waits for the next one (its version still decides).
            if len(self._held) < OUTBOX_SIZE:
                self._held.append((conn, text))
            return
        if not self._post("submit", conn=conn_id, seat=conn.seat, frame=text):
            conn.shut(CloseCode.TOO_SLOW, "too many frames waiting for the table, reconnect")

    # --- the owner's side --------------------------------------------------------

    def deliver(self, message: ToProcess) -> None:
        """Hand a frame or close from the current owner to its socket here."""
        if message.handover:
            self._handover(message)
            return
        if message.fence != self._fence or self._here is not None:
            return  # from a former owner: fencing says it no longer speaks for the table
        conn = self._conns.get(message.conn)
        if conn is None:
            return
        if message.frame is not None:
            version = _versioned.decode(message.frame).version
            if version is not None:
                self._version = max(self._version, version)
                self._seen[message.conn] = version
            conn.push_frame(message.frame)
        elif message.close in _ENDS_THE_SOCKET:
            conn.shut(message.close, message.reason)
        else:
            # The owner let the table go (shutdown, lease lost): find the next one now.
            self._fence = None
            self._wake.set()

    def _handover(self, message: ToProcess) -> None:
        if self._here is not None or self.closed:
            return
        if message.handover == "offer":
            if message.fence == self._fence and self._yielding is None and self._conns:
                # Behind every request already queued for the owner: once it reads this,
                # it has read all of them.
                self._yielding = message.fence
                self._yield_looks = 0
                self._post("yield")
        elif message.fence == self._yielding:
            self._wake.set()  # "yours": the lease is free, take it on this look

    # --- inside ------------------------------------------------------------------

    def _post(self, kind: str, **fields: object) -> bool:
        assert self._fence is not None
        message = msgspec.convert(
            {"kind": kind, "fence": self._fence, "proc": self._bus.proc, **fields}, ToOwner
        )
        if self._outbox.qsize() >= OUTBOX_SIZE:
            return False
        self._outbox.put_nowait(message)
        return True

    async def _send_loop(self) -> None:
        while (message := await self._outbox.get()) is not None:
            try:
                await self._bus.to_owner(self.id, message)
            except (RedisError, OSError) as exc:
                log.warning("table %s: cannot forward %s: %s", self.id, message.kind, exc)

    async def _watch(self) -> None:
        tick = 0
        while not self.closed:
            # Cleared before the look: a "yours" that comes during it wakes the next one.
            self._wake.clear()
            try:
                if await self._check_owner(tick):
                    return
            except (RedisError, OSError) as exc:
                log.warning("table %s: cannot read the owner: %s", self.id, exc)
            except (StoreError, EngineError, msgspec.DecodeError) as exc:
                log.warning("table %s: cannot take over: %r", self.id, exc)
                self._shut_all(*presenter.close_for(Closing.TABLE_UNAVAILABLE))
                return
            tick += 1
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._until_next_look()):
                    await self._wake.wait()

    def _until_next_look(self) -> float:
        # Every forwarder of the process looks on the same beat, so the node can ask
        # Redis about all of their tables in one pipeline.
        return self._poll - asyncio.get_running_loop().time() % self._poll

    async def _check_owner(self, tick: int) -> bool:
        """One look at the lease; True once this forwarder's work is over."""
        holder = await self._holder(self.id)
        if self._yielding is not None:
            if (
                holder is not None
                and holder.fence == self._yielding
                and self._yield_looks < YIELD_LOOKS
            ):
                self._yield_looks += 1
                return False  # the owner is still handing over
            # Handed over (the lease is free or another's), or the owner never went on:
            # what was held goes where the lease says, below.
            self._yielding = None
            if holder is not None and holder.fence == self._fence:
                self._release_held()
        if holder is not None and holder.owner == self._bus.proc:
            room = self._local(self.id)
            if room is not None:
                await self._promote(room)
                return True
        if holder is None:
            claimed = await self._claim(self.id)
            if claimed is None:
                self._shut_all(CloseCode.UNKNOWN_TABLE, "unknown table")
                return True
            if isinstance(claimed, Room):
                await self._promote(claimed)
                return True
            holder = claimed
        if holder.fence != self._fence:
            self._fence = holder.fence
            for conn_id, conn in self._conns.items():
                token = self._tokens.get(conn_id, "")
                self._post(
                    "attach", conn=conn_id, seat=conn.seat, token=token, deltas=conn.feed.deltas
                )
            self._release_held()
        elif tick % self._alive_every == 0 and self._conns:
            conns = [(cid, c.seat, self._seen.get(cid, -1)) for cid, c in self._conns.items()]
            self._post("alive", conns=conns)
        return False

    async def _promote(self, room: Room) -> None:
        """This process now owns the table: its sockets move to the local room."""
        self._here = LocalTable(room, self._max_frame_bytes)
        self._fence = None
        conns = [(conn, self._tokens.get(cid) or None) for cid, conn in self._conns.items()]
        log.info("table %s: took over with %d forwarded socket(s)", self.id, len(conns))
        for conn, token in conns:
            await attach_or_refuse(room, conn, token)
        self._conns.clear()
        self._ids.clear()
        self._release_held()
        self._close()

    def _release_held(self) -> None:
        held = self._held
        self._held = []
        for conn, text in held:
            self._forward(conn, text)

    def _shut_all(self, code: int, reason: str) -> None:
        for conn in list(self._conns.values()):
            conn.shut(code, reason)
        self._close()

    def _close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._watcher is not asyncio.current_task():
            self._watcher.cancel()
        self._outbox.put_nowait(None)
        self._on_closed(self)

    async def stop(self, why: Closing) -> None:
        """End every socket (the process is going away) and stop watching."""
        self._shut_all(*presenter.close_for(why))
        self._sender.cancel()
        await asyncio.gather(self._watcher, self._sender, return_exceptions=True)
