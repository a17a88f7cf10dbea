"""One game socket's outgoing side: a bounded queue of frames and its writer task.

A room never awaits a socket.  It hands each update to ``Connection.push``,
which encodes it (``server.presenter``) and writes it at once when the socket
can take it without waiting and no frame is ahead of it (the usual case: no
task wakes per frame); otherwise it enqueues, and the writer task does the
sending, in order.  When a client falls so far behind that its bounded queue is
full, it is cut off (close code 4408) and may reconnect for a fresh full state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from server import presenter
from server.inbox import Inbox
from server.protocol import CloseCode
from server.rooms.updates import Closing, Update

__all__ = ["Connection", "SendNow", "Sender"]

Sender = Callable[[str], Awaitable[None]]
# Writes a frame at once if the socket can take it without waiting; False if not.
SendNow = Callable[[str], bool]


class Connection:
    """One socket of one human seat, with a bounded outgoing queue (a room ``Listener``)."""

    def __init__(
        self, seat: int, send: Sender, queue_size: int, send_now: SendNow | None = None
    ) -> None:
        if queue_size < 1:
            raise ValueError("the outgoing queue holds at least one frame")
        self._seat = seat
        self._send = send
        self._send_now = send_now
        self._queue: Inbox[str] = Inbox(queue_size)
        self._writer: asyncio.Task[None] | None = None
        # The writer holds a frame it has taken from the queue but not yet sent.
        self._sending = False
        # Why the server ended this connection (a WebSocket close code), if it did.
        self.close_code: int | None = None
        self.close_reason = ""
        # What this socket was last shown (whether it takes deltas: set at the join).
        self.feed = presenter.Feed()

    @property
    def seat(self) -> int:
        """The seat this socket sits at."""
        return self._seat

    def start(self) -> asyncio.Task[None]:
        """Start the writer; the task ends when the socket fails or the server shuts it."""
        self._writer = asyncio.create_task(self._write_loop(), name=f"writer-seat{self._seat}")
        return self._writer

    @property
    def open(self) -> bool:
        """False once the server ended the socket or its writer stopped."""
        return self.close_code is None and not (self._writer is not None and self._writer.done())

    def push(self, update: Update) -> bool:
        """Queue a room's ``update`` as a frame; False when the connection is (now) cut off."""
        if not self.open:
            return False
        text = presenter.frame(update, self.feed)
        # None: a socket taking deltas whose picture did not change is told nothing.
        return True if text is None else self.push_frame(text)

    def push_frame(self, frame: str) -> bool:
        """Queue an encoded ``frame`` without waiting; False when the connection is cut off."""
        if not self.open:
            return False
        # Nothing ahead of it: straight to the socket, unless the socket would make
        # the sender wait (then the writer task takes it, in order, as any other).
        if (
            self._send_now is not None
            and not self._sending
            and self._queue.empty()
            and self._send_now(frame)
        ):
            return True
        try:
            self._queue.put_nowait(frame)
        except asyncio.QueueFull:
            self.shut(CloseCode.TOO_SLOW, "too slow: outgoing queue full, reconnect")
            return False
        return True

    def end(self, why: Closing) -> None:
        """End the connection for a room's reason ``why``."""
        self.shut(*presenter.close_for(why))

    def shut(self, code: int, reason: str) -> None:
        """End the connection from the server side; the socket handler closes with ``code``."""
        if self.close_code is not None:
            return
        self.close_code = code
        self.close_reason = reason
        if self._writer is not None:
            self._writer.cancel()

    async def _write_loop(self) -> None:
        while True:
            frame = await self._queue.get()
            self._sending = True
            await self._send(frame)
            self._sending = False
            # Not held while waiting for the next one: a seat's last frame is a few KiB,
            # and every live table has a socket waiting here.
            del frame
