"""What enters a room's inbox: every change to a table is one of these commands."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from server.bots import BotAction
from server.engine import NextDeal, Pass, Play

from .log import BotSpeed, NewMatch
from .seats import Listener
from .updates import Closing

__all__ = [
    "AskHint",
    "Attach",
    "BotMove",
    "Command",
    "Detach",
    "Idle",
    "Rename",
    "Request",
    "Resync",
    "Stop",
    "Submit",
]


@dataclass(frozen=True, slots=True)
class Rename:
    """Seat ``seat`` asks to be called ``name`` (a table setting, kept in the meta)."""

    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class AskHint:
    """The next hint of the asking seat's cycle (changes nothing, so nothing is stored)."""


# What a human seat may ask of its table: an engine action, a table change, or a hint.
Request = Play | Pass | NextDeal | NewMatch | BotSpeed | Rename | AskHint


@dataclass(frozen=True, slots=True)
class Attach:
    """Seat ``listener``; ``done`` resolves once it is seated and its state queued."""

    listener: Listener
    done: asyncio.Future[None]


@dataclass(frozen=True, slots=True)
class Detach:
    """Unseat ``listener`` (its socket has gone)."""

    listener: Listener


@dataclass(frozen=True, slots=True)
class Submit:
    """``request`` from ``listener``'s seat, made against table ``version``."""

    listener: Listener
    version: int
    request: Request
    # When the request arrived (perf_counter), for pdk_action_latency_seconds.
    received: float = field(default_factory=time.perf_counter)


@dataclass(frozen=True, slots=True)
class BotMove:
    """A bot's decision for ``seat``, made against table ``version``."""

    seat: int
    version: int
    action: BotAction


@dataclass(frozen=True, slots=True)
class Resync:
    """Send ``listener`` its full state again (it may have missed frames)."""

    listener: Listener


@dataclass(frozen=True, slots=True)
class Idle:
    """The idle timer fired: close the room if nobody is connected."""


@dataclass(frozen=True, slots=True)
class Stop:
    """Close the room, ending every socket for ``why``."""

    why: Closing


Command = Attach | Detach | Submit | BotMove | Resync | Idle | Stop
