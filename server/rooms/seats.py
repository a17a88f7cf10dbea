"""Who sits at a table: human sockets (as ``Listener``s) and bots.

A room never awaits a socket and never sees a frame: it hands each human seat's
listeners ``Update`` values, which they only enqueue (``server.connection``
is the socket side: it encodes through the presenter and sends from its own
writer task).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from server import bots
from server.bots import BotAction
from server.engine import SeatView

from .updates import Closing, Update

__all__ = ["MIN_BOT_BUDGET", "SPECTATOR", "BotSeat", "Listener"]

# The seat number of a spectator's socket: it sits nowhere and can do nothing.
SPECTATOR = -1

# Seconds a bot may think even at bot speed 0 before it falls back to a simple play.
MIN_BOT_BUDGET = 0.1


class Listener(Protocol):
    """One socket of one human seat, as its room sees it."""

    @property
    def seat(self) -> int:
        """The seat this socket sits at (fixed by its token)."""
        ...

    @property
    def open(self) -> bool:
        """False once the socket is gone or has been ended."""
        ...

    def push(self, update: Update) -> bool:
        """Queue ``update`` without waiting; False when the socket is (now) cut off."""
        ...

    def end(self, why: Closing) -> None:
        """End the socket from the server side (the first reason given sticks)."""
        ...


class BotSeat:
    """A computer player: pauses for the table's bot speed, then asks ``server.bots``.

    The bot thinks during the pause (its budget is the pause, at least
    ``MIN_BOT_BUDGET`` seconds), so a slow policy does not add to a long pause.
    """

    def __init__(self, seat: int, level: str) -> None:
        self.seat = seat
        self.level = level

    async def move(self, view: SeatView, seed: int, pause_seconds: float) -> BotAction:
        """The bot's action for ``view``, returned no sooner than ``pause_seconds``."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        action = await bots.decide(
            self.level, seed, view, budget=max(pause_seconds, MIN_BOT_BUDGET)
        )
        rest = pause_seconds - (loop.time() - started)
        if rest > 0:
            await asyncio.sleep(rest)
        return action
