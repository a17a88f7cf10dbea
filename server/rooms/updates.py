"""What a room tells the people at its table, in game terms (the presenter makes frames).

A room hands each human seat's sockets ``Update`` values and ends them with a
``Closing``; it never sees the wire format.  ``server.presenter`` encodes
updates as frames and maps closings to WebSocket close codes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from server.engine import Event, PublicView, SeatView
from server.errors import ServerError
from server.fairness import Reveal, Upcoming

from .log import TableMeta

__all__ = [
    "Closing",
    "EmoteShown",
    "HintAnswer",
    "InviteIssued",
    "Refused",
    "RoomError",
    "RoomReason",
    "StateUpdate",
    "TableSnapshot",
    "Update",
    "WatchUpdate",
]


class RoomReason(StrEnum):
    """Why a room refused a request before the engine saw it (checked in this order)."""

    STALE_VERSION = "stale_version"
    MATCH_NOT_OVER = "match_not_over"
    INVALID_NAME = "invalid_name"


class RoomError(ServerError[RoomReason]):
    """A request the room refused; it changed nothing."""


class Closing(StrEnum):
    """Why a room ended a socket."""

    SHUTDOWN = "shutdown"
    IDLE = "idle"
    # The table could not be stored (Redis down, or another process moved it on);
    # reconnecting reloads it from Redis.
    TABLE_UNAVAILABLE = "table_unavailable"
    # The token this socket joined with was revoked (a new invite or watch link, or
    # its seat was handed to a bot).
    REVOKED = "revoked"
    # Newer sockets of the same seat took its place (a seat keeps the newest
    # ``max_sockets_per_seat``).
    REPLACED = "replaced"


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """The table around the game at one moment: who sits where, who is connected."""

    meta: TableMeta
    connected: tuple[bool, ...]
    bot_speed_ms: int
    match_no: int
    # server.fairness: commitments to this match's deals so far; seed and salt once over.
    commitments: tuple[str, ...] = ()
    reveal: Reveal | None = None
    # rooms/entropy.py: the client seeds mixed into each deal so far, and the upcoming deal.
    entropy: tuple[tuple[str, ...], ...] = ()
    upcoming: Upcoming | None = None
    spectators: int = 0
    # Wall-clock seconds when the snapshot was taken (the clock's time left is from it).
    now: float = 0.0
    # The presenter's: the table info made of this snapshot, shared by every seat's frame.
    frames: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class StateUpdate:
    """A seat's whole picture at ``version``, with the events that led to it.

    ``full``: sent whole even to a socket that takes deltas (it asked to resync).
    ``frames`` is the presenter's: what it made of this update, kept for the seat's
    other sockets (the update is shared by them)."""

    version: int
    table: TableSnapshot
    view: SeatView
    events: list[Event]
    full: bool = False
    frames: dict[object, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class WatchUpdate:
    """A spectator's picture at ``version``: the public view, never a hand (``full``
    and ``frames`` as in ``StateUpdate``)."""

    version: int
    table: TableSnapshot
    view: PublicView
    events: list[Event]
    full: bool = False
    frames: dict[object, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EmoteShown:
    """Seat ``seat`` reacted with ``emote``."""

    seat: int
    emote: str


@dataclass(frozen=True, slots=True)
class InviteIssued:
    """A new seat invite (``seat``) or watch link (``seat`` None), for the host alone."""

    table_id: str
    seat: int | None
    token: str


@dataclass(frozen=True, slots=True)
class HintAnswer:
    """Hint number ``index`` of ``count`` for the asking socket (``count`` 0: none)."""

    version: int
    cards: list[str]
    index: int
    count: int


@dataclass(frozen=True, slots=True)
class Refused:
    """A request refused (by the room or the engine) while the table was at ``version``."""

    version: int
    error: ServerError[Any]


Update = StateUpdate | WatchUpdate | HintAnswer | EmoteShown | InviteIssued | Refused
