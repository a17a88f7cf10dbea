"""What enters a room's inbox: every change to a table is one of these commands."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from server.bots import BotAction
from server.protocol import VersionedMessage

from .seats import Connection

__all__ = ["Attach", "BotMove", "Command", "Detach", "Idle", "Stop", "Submit"]


@dataclass(frozen=True, slots=True)
class Attach:
    conn: Connection
    done: asyncio.Future[None]


@dataclass(frozen=True, slots=True)
class Detach:
    conn: Connection


@dataclass(frozen=True, slots=True)
class Submit:
    conn: Connection
    message: VersionedMessage


@dataclass(frozen=True, slots=True)
class BotMove:
    seat: int
    version: int
    action: BotAction


@dataclass(frozen=True, slots=True)
class Idle:
    pass


@dataclass(frozen=True, slots=True)
class Stop:
    code: int
    reason: str


Command = Attach | Detach | Submit | BotMove | Idle | Stop
