"""The game socket's fast paths: a frame written, or a message handed over, at once.

ASGI's ``send`` and ``receive`` are coroutines with a message dict and a queue
between the app and the socket; a game socket does a little synchronous work per
frame, so when this server's own WebSocket protocol is underneath, the session
writes and reads through these instead (each falls back to ASGI under another
server, a test client say).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from websockets.protocol import State
from websockets.server import ServerProtocol

__all__ = ["DirectReceive", "DirectText", "FrameSink", "FrameTaker", "frame_taker", "text_sender"]

# Where a game socket's messages go when they are handed over at once: the text of a
# text message (bytes when it is not UTF-8), or a binary message's bytes.
FrameSink = Callable[[str | bytes], None]
# Names the sink of a game socket's messages (None: back to ASGI ``receive``).
FrameTaker = Callable[[FrameSink | None], None]


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
    writable: asyncio.Event
    handshake_complete: bool
    close_sent: bool
    disconnected: bool
    initial_response: tuple[int, list[tuple[str, str]], bytes] | None

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
        self.conn.send_text(text.encode())
        self.transport.write(b"".join(self.conn.data_to_send()))
        return True


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
