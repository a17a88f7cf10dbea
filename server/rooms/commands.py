"""What enters a room's inbox: every change to a table is one of these commands."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from server.bots import BotAction
from server.engine import NextDeal, Pass, Play

from .entropy import EntropyDue, GiveEntropy
from .log import BotSpeed, NewMatch
from .seats import Listener
from .updates import Closing

__all__ = [
    "AskHint",
    "Attach",
    "Back",
    "BotMove",
    "Command",
    "Detach",
    "Idle",
    "InviteSeat",
    "MakeBot",
    "OpenSeat",
    "Rename",
    "Request",
    "Resync",
    "SeatRequest",
    "SendEmote",
    "SetAuto",
    "StandinDue",
    "Stop",
    "Submit",
    "WatchLink",
]


@dataclass(frozen=True, slots=True)
class Rename:
    """Seat ``seat`` asks to be called ``name`` (a table setting, kept in the meta)."""

    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class AskHint:
    """The next hint of the asking seat's cycle (changes nothing, so nothing is stored)."""


@dataclass(frozen=True, slots=True)
class Back:
    """ "I'm back": the seat's human takes it back from the stand-in."""


@dataclass(frozen=True, slots=True)
class SetAuto:
    """托管: the seat's human hands it to the stand-in (``on``) or takes it back."""

    on: bool


@dataclass(frozen=True, slots=True)
class InviteSeat:
    """Host: a new invite for human seat ``seat`` (its old token is revoked)."""

    seat: int


@dataclass(frozen=True, slots=True)
class MakeBot:
    """Host: a human seat that was left becomes a bot."""

    seat: int


@dataclass(frozen=True, slots=True)
class OpenSeat:
    """Host, between deals: an invite that makes bot seat ``seat`` a person's."""

    seat: int


@dataclass(frozen=True, slots=True)
class WatchLink:
    """Host: a new watch link for spectators."""


@dataclass(frozen=True, slots=True)
class SendEmote:
    """A quick reaction to show at the sender's seat (rate limited, never stored)."""

    emote: str


# A change of who sits where (``seat_requests``): hand-back, or one of the host's controls.
SeatRequest = Back | SetAuto | InviteSeat | MakeBot | OpenSeat | WatchLink

# What a human seat may ask of its table: an engine action, a table change, a seat
# change, a hint or an emote.
Request = (
    Play
    | Pass
    | NextDeal
    | NewMatch
    | BotSpeed
    | AskHint
    | SeatRequest
    | SendEmote
    | Rename
    | GiveEntropy
)


@dataclass(frozen=True, slots=True)
class Attach:
    """Seat ``listener``; ``done`` resolves once it is seated and its state queued."""

    listener: Listener
    done: asyncio.Future[None]
    # The SHA-256 of the token the socket joined with: the room checks it against its
    # own meta, so a token revoked after the socket's check still opens nothing.
    token_hash: str | None = None


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
    # Set for a stand-in's move for a human seat: the ticket of the arming that asked
    # for it (``StandIn.ticket``); a move whose ticket is no longer current is dropped.
    standin_ticket: int | None = None


@dataclass(frozen=True, slots=True)
class StandinDue:
    """A human seat's clock or grace time ran out (or it is on auto): stand in for it.

    ``ticket`` numbers the arming of the stand-in that set the timer: any change of
    turn, socket or seat arms it again with a new one, and a stale one is dropped."""

    seat: int
    ticket: int


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


Command = Attach | Detach | Submit | BotMove | StandinDue | Resync | Idle | Stop | EntropyDue
