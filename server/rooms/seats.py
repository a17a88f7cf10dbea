"""Who sits at a table: human connections (one or more sockets per seat) and bots.

A room never awaits a socket.  It hands each frame to ``Connection.push``, which
only enqueues; the connection's own writer task does the sending.  When a
client falls so far behind that its bounded queue is full, it is cut off
(close code 4408) and may reconnect for a fresh full state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from server import bots
from server.bots import BotAction
from server.engine import SeatView
from server.protocol import CloseCode

__all__ = ["MIN_BOT_BUDGET", "BotSeat", "Connection"]

# Seconds a bot may think even at bot speed 0 before it falls back to a simple play.
MIN_BOT_BUDGET = 0.1

Sender = Callable[[str], Awaitable[None]]


class Connection:
    """One socket of one human seat, with a bounded outgoing queue."""

    def __init__(self, seat: int, send: Sender, queue_size: int) -> None:
        if queue_size < 1:
            raise ValueError("the outgoing queue holds at least one frame")
        self.seat = seat
        self._send = send
        self._queue: asyncio.Queue[str] = asyncio.Queue(queue_size)
        self._writer: asyncio.Task[None] | None = None
        # Why the server ended this connection (a WebSocket close code), if it did.
        self.close_code: int | None = None
        self.close_reason = ""

    def start(self) -> asyncio.Task[None]:
        """Start the writer; the task ends when the socket fails or the server shuts it."""
        self._writer = asyncio.create_task(self._write_loop(), name=f"writer-seat{self.seat}")
        return self._writer

    @property
    def open(self) -> bool:
        return self.close_code is None and not (self._writer is not None and self._writer.done())

    def push(self, frame: str) -> bool:
        """Queue ``frame`` without waiting; False when the connection is (now) cut off."""
        if not self.open:
            return False
        try:
            self._queue.put_nowait(frame)
        except asyncio.QueueFull:
            self.shut(CloseCode.TOO_SLOW, "too slow: outgoing queue full, reconnect")
            return False
        return True

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
            await self._send(frame)


class BotSeat:
    """A computer player: pauses for the table's bot speed, then asks ``server.bots``.

    The bot thinks during the pause (its budget is the pause, at least
    ``MIN_BOT_BUDGET`` seconds), so a slow policy does not add to a long pause.
    """

    def __init__(self, seat: int, level: str) -> None:
        self.seat = seat
        self.level = level

    async def move(self, view: SeatView, seed: int, pause_seconds: float) -> BotAction:
        loop = asyncio.get_running_loop()
        started = loop.time()
        action = await bots.decide(
            self.level, seed, view, budget=max(pause_seconds, MIN_BOT_BUDGET)
        )
        rest = pause_seconds - (loop.time() - started)
        if rest > 0:
            await asyncio.sleep(rest)
        return action
