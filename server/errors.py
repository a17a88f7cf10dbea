"""The root of every refusal the server explains: a stable reason code and a message.

Each layer refines it with its own reason enum (``engine.Reason``,
``protocol.ProtocolErrorCode``, ``rooms.RoomReason``, ``config.ConfigReason``,
``redis_embedded.EmbeddedRedisReason``).  A reason's value is its wire code:
``server.presenter`` turns any ``ServerError`` that reaches a client into one
``error`` frame, and the CLI prints the start-up ones.  This module imports
nothing from the rest of ``server`` so the pure engine may build on it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Generic, TypeVar

__all__ = ["ServerError"]

R = TypeVar("R", bound=StrEnum)


class ServerError(Exception, Generic[R]):
    """Base of every explained refusal; ``reason`` is the stable code, ``message`` for people.

    A layer's error is ``ServerError[ItsReason]``, so its reasons are typed.
    """

    def __init__(self, reason: R, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason.value!r}, {self.message!r})"
