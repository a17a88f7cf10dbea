"""What a seat's request is refused for before the room acts on it, from the table's
meta and match alone (the version check, the engine's rules and the host's rights
come before or after, in the room, the engine and ``seat_requests.py``)."""

from __future__ import annotations

from server.engine import MatchState, Pass, Play

from .commands import Rename, Request
from .log import NewMatch, TableMeta
from .names import NameRefused, clean_name
from .seating import SeatError, SeatReason, on_auto
from .updates import RoomError, RoomReason

__all__ = ["check", "cleaned"]


def check(request: Request, seat: int, meta: TableMeta, state: MatchState) -> None:
    """Raise the ``RoomError`` or ``SeatError`` that refuses ``request`` from ``seat``."""
    if isinstance(request, Play | Pass) and on_auto(meta.seats[seat]):
        raise SeatError(
            SeatReason.SEAT_ON_AUTO, "a stand-in plays this seat: say you are back first"
        )
    if isinstance(request, NewMatch) and state.winners is None:
        raise RoomError(RoomReason.MATCH_NOT_OVER, "the match is still going on")


def cleaned(request: Rename, seat: int) -> Rename:
    """``request`` for ``seat`` with its name cleaned; raises ``RoomError`` when the name
    is refused."""
    try:
        return Rename(seat=seat, name=clean_name(request.name))
    except NameRefused as exc:
        raise RoomError(RoomReason.INVALID_NAME, str(exc)) from exc
