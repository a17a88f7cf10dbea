"""The WebSocket wire format: every frame is one JSON object tagged by ``"type"``.

Decoding is strict (unknown fields, wrong types and unknown tags are refused)
and happens in the connection handler, so nothing malformed ever reaches a room.
Each refusal maps to one reason code in ``ProtocolErrorCode``; docs/protocol.md
lists them all.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Annotated, Literal, TypeAlias

import msgspec

from server.engine.actions import Event
from server.engine.view import SeatView

__all__ = [
    "MAX_BOT_SPEED_MS",
    "BotSpeedMsg",
    "ClientMessage",
    "CloseCode",
    "ErrorMsg",
    "HintMsg",
    "HintReply",
    "JoinMsg",
    "NewMatchMsg",
    "NextDealMsg",
    "PassMsg",
    "PingMsg",
    "PlayMsg",
    "Pong",
    "ProtocolError",
    "ProtocolErrorCode",
    "SeatInfo",
    "ServerMessage",
    "StateMsg",
    "TableInfo",
    "VersionedMessage",
    "decode_client",
    "encode",
]

MAX_BOT_SPEED_MS = 5000


class ProtocolErrorCode(StrEnum):
    """Reason codes the server itself produces (engine refusals use ``engine.Reason``)."""

    MALFORMED_JSON = "malformed_json"
    UNKNOWN_TYPE = "unknown_type"
    INVALID_MESSAGE = "invalid_message"
    FRAME_TOO_LARGE = "frame_too_large"
    JOIN_REQUIRED = "join_required"
    ALREADY_JOINED = "already_joined"
    STALE_VERSION = "stale_version"
    MATCH_NOT_OVER = "match_not_over"
    TABLE_UNAVAILABLE = "table_unavailable"


class CloseCode(IntEnum):
    PROTOCOL_ERROR = 4400
    BAD_TOKEN = 4401
    UNKNOWN_TABLE = 4404
    TOO_SLOW = 4408
    # The table could not be stored (Redis down, or another process moved it on):
    # reconnecting reloads it from Redis.
    TABLE_UNAVAILABLE = 4503


# --- client -> server -------------------------------------------------------


class JoinMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="join"):
    table: str
    # A missing token is a bad token (close 4401), not a malformed frame.
    token: str = ""


class PlayMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="play"):
    version: int
    cards: Annotated[list[str], msgspec.Meta(max_length=16)]


class PassMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="pass"):
    version: int


class HintMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="hint"):
    version: int


class BotSpeedMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="bot_speed"):
    version: int
    ms: Annotated[int, msgspec.Meta(ge=0, le=MAX_BOT_SPEED_MS)]


class NextDealMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="next_deal"):
    version: int


class NewMatchMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="new_match"):
    version: int


class PingMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="ping"):
    pass


ClientMessage: TypeAlias = (
    JoinMsg | PlayMsg | PassMsg | HintMsg | BotSpeedMsg | NextDealMsg | NewMatchMsg | PingMsg
)
# What a joined connection forwards to its room: every one carries a version.
VersionedMessage: TypeAlias = PlayMsg | PassMsg | HintMsg | BotSpeedMsg | NextDealMsg | NewMatchMsg

_CLIENT_TYPES = frozenset(
    {"join", "play", "pass", "hint", "bot_speed", "next_deal", "new_match", "ping"}
)


# --- server -> client -------------------------------------------------------


class SeatInfo(msgspec.Struct, frozen=True):
    seat: int
    name: str
    kind: Literal["human", "bot"]
    level: str | None
    connected: bool


class TableInfo(msgspec.Struct, frozen=True):
    id: str
    seats: list[SeatInfo]
    bot_speed_ms: int
    humans: int
    match_no: int


class StateMsg(msgspec.Struct, frozen=True, tag="state"):
    version: int
    table: TableInfo
    view: SeatView
    events: list[Event]


class HintReply(msgspec.Struct, frozen=True, tag="hint"):
    version: int
    cards: list[str]
    index: int
    count: int


class ErrorMsg(msgspec.Struct, frozen=True, tag="error"):
    code: str
    message: str
    version: int | None = None


class Pong(msgspec.Struct, frozen=True, tag="pong"):
    pass


ServerMessage: TypeAlias = StateMsg | HintReply | ErrorMsg | Pong


class ProtocolError(Exception):
    """A frame refused before it reached a room."""

    def __init__(self, code: ProtocolErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Envelope(msgspec.Struct):
    type: str


_decoder = msgspec.json.Decoder(ClientMessage)
_envelope_decoder = msgspec.json.Decoder(_Envelope)
_encoder = msgspec.json.Encoder()


def decode_client(frame: str | bytes, max_bytes: int) -> ClientMessage:
    """Decode one client frame or raise ``ProtocolError`` with the reason code."""
    size = len(frame) if isinstance(frame, bytes) else _utf8_size(frame, max_bytes)
    if size > max_bytes:
        raise ProtocolError(
            ProtocolErrorCode.FRAME_TOO_LARGE, f"frame of {size} bytes exceeds {max_bytes}"
        )
    try:
        return _decoder.decode(frame)
    except msgspec.ValidationError as exc:
        raise _classify(frame, exc) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(ProtocolErrorCode.MALFORMED_JSON, str(exc)) from None


def _utf8_size(text: str, max_bytes: int) -> int:
    """The frame's UTF-8 size, or a lower bound of it that already exceeds ``max_bytes``."""
    # Every character takes 1..4 bytes: skip the encode when the answer is already clear.
    if len(text) > max_bytes or len(text) * 4 <= max_bytes:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def _classify(frame: str | bytes, exc: msgspec.ValidationError) -> ProtocolError:
    """Tell an unknown ``type`` apart from a known type with bad fields (rare path)."""
    try:
        envelope = _envelope_decoder.decode(frame)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return ProtocolError(ProtocolErrorCode.INVALID_MESSAGE, f"a message needs a type: {exc}")
    if envelope.type not in _CLIENT_TYPES:
        return ProtocolError(
            ProtocolErrorCode.UNKNOWN_TYPE, f"unknown message type {envelope.type!r}"
        )
    return ProtocolError(ProtocolErrorCode.INVALID_MESSAGE, str(exc))


def encode(message: ServerMessage) -> str:
    """One text frame (browsers hand binary frames over as Blobs, text as strings)."""
    return _encoder.encode(message).decode("utf-8")
