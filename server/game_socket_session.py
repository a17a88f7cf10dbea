"""A game socket's session: join, seat, then frames in and updates out until it closes.

The app's front (``server.game_front``) routes a WebSocket on ``GAME_SOCKET_PATH`` here.  The
first frame must be a join naming the table and a token; the token is checked
before anything is loaded or changed.  The node hands the session a
``TableHandle`` (``server.cluster.table``): the room itself, or a forwarder to
the process that owns the table; the session does not ask which.  Then a
``Connection`` carries the table's updates out, and a ``_FrameReader`` hands
each frame to the table (``TableHandle.take``) under the seat's rate limit: a
flood is cut off here, and the table reads the frame the one way every frame is
read (``table.read_frame``).  Under this server's transport the
frames reach the reader straight from the socket (``transport.DirectReceive``);
otherwise the read loop feeds it from ASGI ``receive``.  Whatever ends the socket, the room
hears of it (``detach``) and the client gets a close code that says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import msgspec
from redis.exceptions import RedisError
from starlette.websockets import WebSocket

from server import metrics, presenter
from server.cluster.node import Node
from server.cluster.table import TableHandle
from server.config import Settings
from server.connection import Connection, SendNow
from server.engine import EngineError
from server.errors import ServerError
from server.protocol import CloseCode, JoinMsg, ProtocolError, ProtocolErrorCode
from server.rooms import seat_takeover
from server.rooms.room import RoomClosed
from server.rooms.seating import SeatError, SeatReason, retired_reason
from server.rooms.seats import SPECTATOR
from server.rooms.store import StoreError, TableStore
from server.rooms.tokens import hash_token, seat_for_token, valid_table_id
from server.rooms.updates import Closing
from server.seat_limits import FLOOD_BACKOFF_CLOSE, FloodBackoff, SeatLimits
from server.transport import FrameTaker, mark_seated

__all__ = ["serve"]

log = logging.getLogger(__name__)

_CLOSE_TIMEOUT_SECONDS = 2.0

_TOO_FAST = ProtocolError(
    ProtocolErrorCode.RATE_LIMITED, "too many messages from this seat; slow down"
)
# A socket that keeps sending after this many bursts' worth of refusals in a row is
# closed with 1008 (policy violation): a person never does that, a flood always does.
_FLOOD_FACTOR = 4
_FLOODING = 1008
# The server failed on a frame (a bug): the socket is closed, and reconnecting resumes.
_SERVER_ERROR = 1011


async def _receive_frame(websocket: WebSocket) -> str | bytes | None:
    """The next frame, or None once the client has gone."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        return None
    text: str | None = message.get("text")
    if text is not None:
        return text
    data: bytes = message.get("bytes") or b""
    return data


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    with contextlib.suppress(Exception):
        async with asyncio.timeout(_CLOSE_TIMEOUT_SECONDS):
            await websocket.close(code, reason)


async def _refuse(websocket: WebSocket, error: ServerError[Any]) -> None:
    """An error frame, then close 4400: nothing is known about this socket yet."""
    with contextlib.suppress(Exception):
        await websocket.send_text(presenter.error_frame(error, None))
    await _close(websocket, CloseCode.PROTOCOL_ERROR, error.message[:120])


async def _read_join(websocket: WebSocket, max_bytes: int, within: float) -> JoinMsg | None:
    try:
        async with asyncio.timeout(within):
            frame = await _receive_frame(websocket)
    except TimeoutError:
        late = ProtocolError(ProtocolErrorCode.JOIN_REQUIRED, "no join message in time")
        await _refuse(websocket, late)
        return None
    if frame is None:
        return None
    try:
        return presenter.read_join(frame, max_bytes)
    except ProtocolError as exc:
        await _refuse(websocket, exc)
        return None


async def serve(
    websocket: WebSocket,
    node: Node,
    store: TableStore,
    seat_limiter: SeatLimits,
    settings: Settings,
    send_now: SendNow | None,
    take_frames: FrameTaker | None = None,
) -> None:
    """One game socket, from its handshake to its close: the join, the seat its token
    opens, then frames to the room and the room's updates back (``send_now`` writes a
    frame at once when the transport can, see ``server.connection``; ``take_frames``
    lets the transport hand frames over as they arrive, see ``transport.DirectReceive``)."""
    await websocket.accept()
    if node.draining:
        await _close(websocket, 1012, "server restarting, reconnect")
        return
    join = await _read_join(
        websocket, settings.max_frame_bytes, float(settings.join_timeout_seconds)
    )
    if join is None:
        return
    # The token is checked before anything is loaded or changed: a wrong one touches nothing.
    try:
        meta = await store.load_meta(join.table) if valid_table_id(join.table) else None
    except (RedisError, OSError) as exc:
        log.warning("cannot read table %s: %s", join.table, exc)
        await _close(websocket, CloseCode.TABLE_UNAVAILABLE, "table store unreachable")
        return
    if meta is None:
        await _close(websocket, CloseCode.UNKNOWN_TABLE, "unknown table")
        return
    # The watch link's hash goes last: a match there seats a spectator.
    seat = seat_for_token(join.token, [*(s.token_hash for s in meta.seats), meta.watch_hash])
    token_hash = hash_token(join.token)
    if seat is None:
        # A quick-match player given a bot seat (rooms/seat_takeover.py).
        seat = await seat_takeover.seat_given(meta, token_hash)
    if seat is None:
        reason = retired_reason(meta, token_hash)
        if reason is not None:
            # A link that used to work says why it stopped (a new one was made, or it
            # was for a seat that was only open between deals).
            await _refuse_seat(websocket, SeatError(reason, _RETIRED_MESSAGES[reason]))
        else:
            await _close(websocket, CloseCode.BAD_TOKEN, "bad token")
        return
    if seat == len(meta.seats):
        seat = SPECTATOR
    # The room keeps its own meta; this handler lives as long as the socket and need not.
    del meta

    if seat != SPECTATOR:
        try:
            await seat_limiter.admit(join.table, seat)
        except FloodBackoff as exc:
            # A seat that flooded waits (growing with each flood) before it joins again.
            with contextlib.suppress(Exception):
                await websocket.send_text(presenter.error_frame(exc, None))
            await _close(websocket, FLOOD_BACKOFF_CLOSE, exc.message)
            return

    # Joined: the transport closes this socket to make room only after unjoined ones.
    mark_seated(websocket.scope, join.table)
    conn = Connection(seat, websocket.send_text, settings.outgoing_queue_size, send_now)
    conn.feed.deltas = join.deltas
    writer = conn.start()
    try:
        room = await _attach(node, join.table, conn, token_hash)
    except SeatError as exc:
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
        await _refuse_seat(websocket, exc)
        return
    if room is None:
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
        await _close(websocket, conn.close_code or CloseCode.UNKNOWN_TABLE, "table unavailable")
        return
    frames = _FrameReader(room, conn, seat_limiter)
    reader = asyncio.create_task(_read_loop(websocket, frames, take_frames))
    metrics.game_socket_opened()
    try:
        await asyncio.wait({reader, writer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        metrics.game_socket_closed()
        reader.cancel()
        writer.cancel()
        await asyncio.gather(reader, writer, return_exceptions=True)
        room.detach(conn)
    if conn.close_code is not None:
        await _close(websocket, conn.close_code, conn.close_reason)


_RETIRED_MESSAGES = {
    SeatReason.INVITE_REVOKED: "this link was replaced by a new one: ask the host for it",
    SeatReason.INVITE_EXPIRED: "this invite was for a seat open between deals; it has expired",
}


async def _refuse_seat(websocket: WebSocket, error: SeatError) -> None:
    """An error frame saying why the token opens nothing (any more), then the close."""
    frame, code, reason = presenter.seat_refusal(error)
    with contextlib.suppress(Exception):
        await websocket.send_text(frame)
    await _close(websocket, code, reason)


async def _attach(
    node: Node, table_id: str, conn: Connection, token_hash: str | None = None
) -> TableHandle | None:
    # A room may close between lookup and attach (idle, storage failure); then load it anew.
    for _ in range(3):
        try:
            room = await node.table(table_id)
        except (RedisError, OSError, StoreError, EngineError, msgspec.DecodeError) as exc:
            # A log that no longer replays (EngineError, DecodeError) is reported, not raised.
            log.warning("cannot load table %s: %r", table_id, exc)
            conn.shut(CloseCode.TABLE_UNAVAILABLE, "table store unreachable")
            return None
        if room is None:
            return None
        try:
            await room.attach(conn, token_hash)
        except RoomClosed:
            continue
        return room
    conn.end(Closing.TABLE_UNAVAILABLE)
    return None


class _FrameReader:
    """A seated socket's frames, handed to its table under the seat's rate limit (a
    flood is cut off).  Synchronous: the transport may call ``take`` from its own
    callback."""

    __slots__ = ("_conn", "_key", "_limiter", "_refused_in_a_row", "_table", "done")

    def __init__(self, table: TableHandle, conn: Connection, limiter: SeatLimits) -> None:
        self._table = table
        self._conn = conn
        self._limiter = limiter
        # A seat's sockets share one allowance; each spectator has its own.
        self._key: object = (
            limiter.seat_key(table.id, conn.seat) if conn.seat != SPECTATOR else conn
        )
        self._refused_in_a_row = 0
        # True once the socket is being closed for what it sent: later frames are dropped.
        self.done = False

    def take(self, frame: str | bytes) -> None:
        """Handle one frame; never raises (a failure ends the socket with 1011)."""
        if self.done:
            return
        try:
            self._take(frame)
        except Exception:
            log.exception("game socket: a frame could not be handled")
            self.done = True
            self._conn.shut(_SERVER_ERROR, "internal error")

    def _take(self, frame: str | bytes) -> None:
        conn, table = self._conn, self._table
        if not self._limiter.allow(self._key):
            metrics.rate_limited("actions")
            self._refused_in_a_row += 1
            if self._refused_in_a_row > _FLOOD_FACTOR * self._limiter.burst:
                # Not a fast player but a flood: stop spending work on its frames.
                self.done = True
                if conn.seat != SPECTATOR:
                    self._limiter.flooded(table.id, conn.seat)
                conn.shut(_FLOODING, "flooding: too many messages, slow down")
                return
            conn.push_frame(presenter.error_frame(_TOO_FAST, table.version))
            return
        self._refused_in_a_row = 0
        table.take(conn, frame)


async def _read_loop(
    websocket: WebSocket, frames: _FrameReader, take_frames: FrameTaker | None
) -> None:
    """Feed the socket's frames to ``frames`` until the client goes or ``frames`` is
    done.  Under our transport, frames arrive at ``frames.take`` straight from the
    socket once the ones queued before have been read here; this loop then waits
    for the disconnect."""
    if take_frames is not None:
        take_frames(frames.take)
    try:
        while not frames.done:
            frame = await _receive_frame(websocket)
            if frame is None:
                return
            frames.take(frame)
    finally:
        if take_frames is not None:
            take_frames(None)
