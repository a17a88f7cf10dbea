"""A socket refused or ended: the ``error`` frame of any ``ServerError``, the close of
a join the room refused, and the close code of each way a room ends a socket.

``error_frame`` is the one place an error becomes a frame (and is counted),
``close_for`` the one mapping from a room's ``Closing`` to a WebSocket close.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from server import metrics
from server.engine import Reason
from server.errors import ServerError
from server.fairness import EntropyReason
from server.protocol import CloseCode, ErrorMsg, ProtocolErrorCode, encode
from server.rooms.seating import SeatError, SeatReason
from server.rooms.updates import Closing, RoomReason

__all__ = ["WIRE_REASONS", "close_for", "error_frame", "seat_refusal"]

# Every reason enum whose codes reach a client in an ``error`` frame (docs/protocol.md
# lists them, and the client words each one).
WIRE_REASONS: tuple[type[StrEnum], ...] = (
    ProtocolErrorCode,
    RoomReason,
    SeatReason,
    Reason,
    EntropyReason,
)

_CLOSINGS: dict[Closing, tuple[int, str]] = {
    Closing.SHUTDOWN: (1001, "server shutting down"),
    Closing.IDLE: (1001, "idle"),
    Closing.TABLE_UNAVAILABLE: (CloseCode.TABLE_UNAVAILABLE, "table unavailable, reconnect"),
    Closing.REVOKED: (CloseCode.BAD_TOKEN, "invite revoked: ask the host for a new link"),
    Closing.REPLACED: (CloseCode.REPLACED, "this seat was opened elsewhere since"),
}


def error_frame(error: ServerError[Any], version: int | None) -> str:
    """The ``error`` frame for ``error``: its reason's value is the code (``version`` is
    ``None`` before the join).  Every refusal a client hears passes here, so it is
    counted here (``pdk_refusals_total``)."""
    metrics.refused(error.reason.value)
    return encode(ErrorMsg(code=error.reason.value, message=error.message, version=version))


def seat_refusal(error: SeatError) -> tuple[str, int, str]:
    """A join refused by the room (a revoked or expired token, a full gallery): the
    ``error`` frame, then the close code and reason."""
    code = (
        CloseCode.TOO_MANY_SPECTATORS
        if error.reason is SeatReason.TOO_MANY_SPECTATORS
        else CloseCode.BAD_TOKEN
    )
    return error_frame(error, None), code, error.message[:120]


def close_for(why: Closing) -> tuple[int, str]:
    """The WebSocket close code and reason text that end a socket for ``why``."""
    return _CLOSINGS[why]
