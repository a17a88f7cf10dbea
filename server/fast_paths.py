"""The game socket's fast paths: a frame written, or a message handed over, at once.

ASGI's ``send`` and ``receive`` are coroutines with a message dict and a queue
between the app and the socket; a game socket does a little synchronous work per
frame, so when this server's own WebSocket protocol is underneath, the session
writes and reads through these instead (each falls back to ASGI under another
server, a test client say).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable

from websockets.protocol import State
from websockets.server import ServerProtocol

__all__ = [
    "COALESCE_MAX_BYTES",
    "DirectReceive",
    "DirectText",
    "FrameSink",
    "FrameTaker",
    "WriteBatch",
    "frame_taker",
    "text_frame_head",
    "text_sender",
    "write_batch",
]

# Bytes of frames one socket may hold unwritten until the end of a loop turn; past
# this its frames go to the transport at once (whose high-water mark then pauses the
# sender as before).  uvicorn's transports pause above 64 KiB.
COALESCE_MAX_BYTES = 64 * 1024

# Where a game socket's messages go when they are handed over at once: the text of a
# text message (bytes when it is not UTF-8), or a binary message's bytes.
FrameSink = Callable[[str | bytes], None]
# Names the sink of a game socket's messages (None: back to ASGI ``receive``).
FrameTaker = Callable[[FrameSink | None], None]


# The first two bytes of a final, unmasked text frame of each length below 126.
_SHORT_HEADS = [bytes((0x81, n)) for n in range(126)]


def text_frame_head(length: int) -> bytes:
    """The header of a final, unmasked, uncompressed text frame of ``length`` bytes
    (RFC 6455 5.2: a 7-bit length, or 126 and 16 bits, or 127 and 64 bits)."""
    if length < 126:
        return _SHORT_HEADS[length]
    if length < 65536:
        return b"\x81\x7e" + length.to_bytes(2, "big")
    return b"\x81\x7f" + length.to_bytes(8, "big")


class WriteBatch:
    """The sockets of one event loop holding frames not yet written to their transports.

    A room tells every socket of a table in one go, and a socket may get several
    frames in one turn of the loop (a state and an answer, the frames of forwarded
    tables...): each frame's bytes stay in the socket's protocol buffer, and one
    callback at the end of the turn writes each socket's bytes in one
    ``transport.write`` (one system call instead of one per frame).  Anything else
    that writes to the socket (ping, close, ASGI ``send``) takes the protocol's
    whole buffer first, so frames keep their order.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._held: list[DirectText] = []
        # Frames handed over and transport writes made (for tests and diagnostics).
        self.frames = 0
        self.writes = 0

    def hold(self, socket: DirectText) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(socket)

    def flush(self) -> None:
        held, self._held = self._held, []
        for socket in held:
            self.writes += socket.write_held()


_BATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, WriteBatch] = (
    weakref.WeakKeyDictionary()
)


def write_batch(loop: asyncio.AbstractEventLoop) -> WriteBatch:
    """The ``WriteBatch`` of ``loop`` (one per loop: a test may run several servers)."""
    batch = _BATCHES.get(loop)
    if batch is None:
        batch = _BATCHES[loop] = WriteBatch(loop)
    return batch


class DirectText:
    """Mixin for the WebSocket protocol: a text frame written at once, without awaiting.

    ASGI ``send`` is a coroutine that waits for the transport to be
    writable and goes through the ASGI message dict; the game socket writes a
    frame per action, and while output flows (the usual case) none of that has
    to wait.  ``send_text_now`` writes exactly what ``send`` would write for a
    ``websocket.send`` message, and refuses (False) in every case where ``send``
    would wait or fail: the caller then takes the awaitable path, which waits or
    raises as it always did.
    """

    conn: ServerProtocol
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    writable: asyncio.Event
    handshake_complete: bool
    close_sent: bool
    disconnected: bool
    initial_response: tuple[int, list[tuple[str, str]], bytes] | None
    # Bytes of frames in the protocol's buffer waiting for the end of the turn.
    _held_bytes = 0
    _batch: WriteBatch | None = None

    def send_text_now(self, text: str) -> bool:
        """Write ``text`` as one text frame now; False when it must go the awaitable way."""
        if (
            not self.handshake_complete
            or self.close_sent
            or self.disconnected
            or self.initial_response is not None
            or not self.writable.is_set()
            or self.conn.state is not State.OPEN
            or self.transport.is_closing()
        ):
            return False
        data = text.encode()
        conn = self.conn
        if conn.expect_continuation_frame or conn.extensions or conn.debug:
            conn.send_text(data)  # what websockets checks, logs or encodes, it does
        else:
            # websockets' own bytes for an unmasked, uncompressed text frame, without its
            # Frame object, checks and copies into a BytesIO (a third of this method).
            conn.writes.append(text_frame_head(len(data)))
            conn.writes.append(data)
        batch = self._batch
        if batch is None:
            batch = self._batch = write_batch(self.loop)
        batch.frames += 1
        if self._held_bytes == 0:
            batch.hold(self)
        self._held_bytes += len(data)
        if self._held_bytes >= COALESCE_MAX_BYTES:
            batch.writes += self.write_held()
        return True

    def write_held(self) -> int:
        """Write the frames held since the last write in one ``transport.write``; the
        writes made (0 when another path took them first, or the socket closed)."""
        self._held_bytes = 0
        output = self.conn.data_to_send()
        if not output or self.transport.is_closing():
            return 0
        self.transport.write(b"".join(output))
        return 1


def text_sender(send: object) -> Callable[[str], bool] | None:
    """The ``send_text_now`` of the WebSocket behind ASGI ``send``, if it is one of ours
    (None under another server, a test client say: use ``send`` then)."""
    owner = getattr(send, "__self__", None)
    return owner.send_text_now if isinstance(owner, DirectText) else None


class DirectReceive:
    """Mixin for the WebSocket protocol: each message handed to a sink at once.

    The protocol hands a message to the app through a queue that the app's ``receive``
    awaits, and stops reading the socket until the app has taken it: a queue, a
    task wake-up and two changes to the event loop's watch list per message.  A
    game socket's session does the same, synchronous work with every message, so
    once it names a sink (``take_frames``) a whole message goes straight to it,
    from the protocol's own ``data_received``.  Order is kept: while anything is
    still queued (messages that came before the sink) new ones queue behind it,
    and the disconnect always takes the queue.  Nothing goes to the sink after our
    close frame (the queue path drops those messages too).  The frames are parsed,
    size-checked and unmasked by websockets as before; only the hand-over changes.
    """

    on_frame: FrameSink | None = None

    def take_frames(self, sink: FrameSink | None) -> None:
        """From now on hand whole messages to ``sink`` (None: back to the queue)."""
        self.on_frame = sink


def frame_taker(receive: object) -> FrameTaker | None:
    """The ``take_frames`` of the WebSocket behind ASGI ``receive``, if it is one of
    ours (None under another server: frames then come through ``receive``)."""
    owner = getattr(receive, "__self__", None)
    return owner.take_frames if isinstance(owner, DirectReceive) else None
