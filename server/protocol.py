"""The WebSocket wire format: every frame is one JSON object tagged by ``"type"``.

Decoding is strict (unknown fields, wrong types and unknown tags are refused)
and happens before anything reaches a room.  Each refusal maps to one reason
code in ``ProtocolErrorCode``; docs/protocol.md lists them all.  This module
knows frames only: ``server.presenter`` maps them to and from what rooms speak.
What a table accepts as a value (which emotes exist, the longest bot pause, what
a name is) belongs to the rooms; the presenter checks it, and refuses a value
out of range with the same ``invalid_message`` code as a field of a wrong type.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Annotated, Any, Literal, TypeAlias

import msgspec

from server.engine.actions import Event
from server.engine.view import PublicView, SeatView
from server.errors import ServerError
from server.fairness import CLIENT_SEED_PATTERN

__all__ = [
    "AutoMsg",
    "BackMsg",
    "BotSpeedMsg",
    "ClientMessage",
    "ClockInfo",
    "CloseCode",
    "DeltaMsg",
    "EmoteMsg",
    "EmoteReply",
    "EntropyMsg",
    "ErrorMsg",
    "FairnessInfo",
    "HintMsg",
    "HintReply",
    "InviteMsg",
    "InviteReply",
    "JoinMsg",
    "MakeBotMsg",
    "NewMatchMsg",
    "NextDealMsg",
    "OpenSeatMsg",
    "PassMsg",
    "PictureMsg",
    "PingMsg",
    "PlayMsg",
    "Pong",
    "ProtocolError",
    "ProtocolErrorCode",
    "RenameMsg",
    "ResyncMsg",
    "ResyncReason",
    "SeatInfo",
    "ServerMessage",
    "StateMsg",
    "TableInfo",
    "UpcomingInfo",
    "VersionedMessage",
    "WatchLinkMsg",
    "WatchMsg",
    "decode_client",
    "encode",
]


class ProtocolErrorCode(StrEnum):
    """Why a frame was refused before it reached a room."""

    MALFORMED_JSON = "malformed_json"
    UNKNOWN_TYPE = "unknown_type"
    INVALID_MESSAGE = "invalid_message"
    FRAME_TOO_LARGE = "frame_too_large"
    JOIN_REQUIRED = "join_required"
    ALREADY_JOINED = "already_joined"
    # The seat sent more frames than --actions-per-second allows; nothing was done.
    RATE_LIMITED = "rate_limited"


class CloseCode(IntEnum):
    """Why the server closed a game socket (docs/protocol.md, "Close codes")."""

    PROTOCOL_ERROR = 4400
    BAD_TOKEN = 4401
    UNKNOWN_TABLE = 4404
    TOO_SLOW = 4408
    # Newer sockets of the same seat took this one's place (``max_sockets_per_seat``).
    REPLACED = 4409
    # The table already has as many spectators as the server allows.
    TOO_MANY_SPECTATORS = 4429
    # The table could not be stored (Redis down, or another process moved it on):
    # reconnecting reloads it from Redis.
    TABLE_UNAVAILABLE = 4503


# --- client -> server -------------------------------------------------------


class JoinMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="join"):
    """Sit down at ``table`` on the seat ``token`` belongs to (the first frame)."""

    table: str
    # A missing token is a bad token (close 4401), not a malformed frame.
    token: str = ""
    # True: after the first full frame, ``delta`` frames (docs/protocol.md, "Deltas").
    # False, the default: a whole ``state`` (or ``watch``) frame after every change.
    deltas: bool = False


class PlayMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="play"):
    """Play these cards."""

    version: int
    cards: Annotated[list[str], msgspec.Meta(max_length=16)]


class PassMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="pass"):
    """Pass."""

    version: int


class HintMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="hint"):
    """Ask for the next hint."""

    version: int


class BotSpeedMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="bot_speed"):
    """Set the table's pause before each bot move."""

    version: int
    # In milliseconds; its range is the table's (``rooms.log.MAX_BOT_SPEED_MS``).
    ms: int


class NextDealMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="next_deal"):
    """Deal the match's next hand."""

    version: int


class NewMatchMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="new_match"):
    """Start a new match with the same settings (once the match is over)."""

    version: int


class RenameMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="rename"):
    """Set the sender's seat name (checked by ``rooms.names.clean_name``)."""

    version: int
    # The name rules, the raw text's length included, are the room's (``rooms.names``).
    name: str


class BackMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="back"):
    """ "I'm back": take the seat back from the stand-in (from the next turn on)."""

    version: int


class AutoMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="auto"):
    """托管: ``on`` hands the sender's seat to the stand-in, which plays each of its
    turns at the table's pace until an ``auto`` with ``on`` false (or a "back")."""

    version: int
    on: bool


class _HostSeatMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A host action aimed at one seat."""

    version: int
    seat: int


class InviteMsg(_HostSeatMsg, frozen=True, forbid_unknown_fields=True, tag="invite"):
    """Host only: a new invite for human seat ``seat``; its old token stops working."""


class MakeBotMsg(_HostSeatMsg, frozen=True, forbid_unknown_fields=True, tag="make_bot"):
    """Host only: a human seat that was left is played by a bot from now on."""


class OpenSeatMsg(_HostSeatMsg, frozen=True, forbid_unknown_fields=True, tag="open_seat"):
    """Host only, between deals: an invite whose first join makes bot seat ``seat`` human."""


class WatchLinkMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="watch_link"):
    """Host only: a (new) watch link for spectators; an older one stops working."""

    version: int


class EmoteMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="emote"):
    """A quick reaction from the fixed set, shown briefly at the sender's seat."""

    # One of the room's fixed set (``rooms.emotes.EMOTES``).
    emote: str


class EntropyMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="entropy"):
    """The sender's client seed for the upcoming deal, bound to the commitment it answers
    (``fairness.next.commitment``): 32 lowercase hex digits from a secure random source."""

    commitment: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
    seed: Annotated[str, msgspec.Meta(pattern=CLIENT_SEED_PATTERN)]


class ResyncReason(StrEnum):
    """Why a client that takes deltas asks for its full picture again."""

    # A delta's ``from`` is not the version the client holds (a frame went missing).
    GAP = "gap"
    # The patched picture's digest is not the delta's ``digest``.
    DIGEST = "digest"
    # An op did not fit the picture (no such key, an index past the end).
    PATCH = "patch"


class ResyncMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="resync"):
    """Send this socket its full picture again (a ``state`` or ``watch`` frame), after
    which deltas go on from it; no version (it is about what the client holds)."""

    reason: ResyncReason


class PingMsg(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="ping"):
    """Keep-alive; answered with ``pong``."""


ClientMessage: TypeAlias = (
    JoinMsg
    | PlayMsg
    | PassMsg
    | HintMsg
    | BotSpeedMsg
    | NextDealMsg
    | NewMatchMsg
    | RenameMsg
    | BackMsg
    | AutoMsg
    | InviteMsg
    | MakeBotMsg
    | OpenSeatMsg
    | WatchLinkMsg
    | EmoteMsg
    | EntropyMsg
    | ResyncMsg
    | PingMsg
)
# What a joined connection forwards to its room: every one carries a version.
VersionedMessage: TypeAlias = (
    PlayMsg
    | PassMsg
    | HintMsg
    | BotSpeedMsg
    | NextDealMsg
    | NewMatchMsg
    | BackMsg
    | AutoMsg
    | InviteMsg
    | MakeBotMsg
    | OpenSeatMsg
    | WatchLinkMsg
    | RenameMsg
)

_CLIENT_TYPES = frozenset(
    {
        "join",
        "play",
        "pass",
        "hint",
        "bot_speed",
        "next_deal",
        "new_match",
        "back",
        "auto",
        "invite",
        "make_bot",
        "open_seat",
        "watch_link",
        "emote",
        "entropy",
        "rename",
        "resync",
        "ping",
    }
)


# --- server -> client -------------------------------------------------------


class SeatInfo(msgspec.Struct, frozen=True):
    """One seat as every player sees it."""

    seat: int
    name: str
    kind: Literal["human", "bot"]
    level: str | None
    connected: bool
    # The stand-in played this seat's last turn, or (on_auto) plays all of them until
    # its human is back.
    auto: bool = False
    on_auto: bool = False


class ClockInfo(msgspec.Struct, frozen=True):
    """Whose turn clock runs: its deadline (server time, ms since the epoch) and the
    milliseconds left when the frame was made."""

    seat: int
    deadline: int
    remaining_ms: int


class UpcomingInfo(msgspec.Struct, frozen=True):
    """The deal dealt next (in this match or the next): its commitment, which each human
    seat answers with a client seed, and which seats' seeds are in."""

    match_no: int
    deal_no: int
    commitment: str
    received: list[bool]


class FairnessInfo(msgspec.Struct, frozen=True):
    """Provably fair shuffles (server.fairness): one commitment per deal of this match so
    far; the match's seed and salt once it is over; the client seeds mixed into each deal
    ("" for none); the upcoming deal while one is awaited."""

    commitments: list[str]
    seed: int | None = None
    salt: str | None = None
    entropy: list[list[str]] = msgspec.field(default_factory=list)
    next: UpcomingInfo | None = None


class TableInfo(msgspec.Struct, frozen=True):
    """The table around the game: seats, bot speed, match number, deal commitments,
    clock, spectators."""

    id: str
    seats: list[SeatInfo]
    bot_speed_ms: int
    humans: int
    match_no: int
    fairness: FairnessInfo | None = None
    host: int = 0
    turn_seconds: int = 0
    grace_seconds: int = 0
    clock: ClockInfo | None = None
    spectators: int = 0


class StateMsg(msgspec.Struct, frozen=True, tag="state"):
    """A seat's complete picture at ``version`` and the events that led to it."""

    version: int
    table: TableInfo
    view: SeatView
    events: list[Event]


class WatchMsg(msgspec.Struct, frozen=True, tag="watch"):
    """A spectator's picture at ``version``: the public view only, never a hand."""

    version: int
    table: TableInfo
    view: PublicView
    events: list[Event]


class DeltaMsg(msgspec.Struct, frozen=True, omit_defaults=True, tag="d"):
    """What changed in a socket's picture from version ``f`` (omitted: ``v`` - 1) to
    ``v``, in one-letter keys (it is the frame sent after every action): ``o`` patches
    its view's wire form (``server.deltas.wire``) and ``t`` its table info (omitted
    when unchanged), then the canonical
    JSON of the picture must have digest ``h``; ``e`` the events of a ``state`` frame,
    each a whole event or the index of the move in the view's ``moves`` it tells of
    (``server.deltas.compact_events``), omitted when they are exactly the moves
    appended (none when no move was)."""

    version: int = msgspec.field(name="v")
    ops: list[list[Any]] = msgspec.field(name="o")
    base: int | None = msgspec.field(default=None, name="f")
    table_ops: list[list[Any]] = msgspec.field(default_factory=list, name="t")
    digest: str = msgspec.field(default="", name="h")
    # None (left out): the events are the moves ``o`` appended (``server.deltas.wire``).
    events: list[Any] | None = msgspec.field(default=None, name="e")


class PictureMsg(msgspec.Struct, frozen=True, omit_defaults=True, tag="p"):
    """A socket that takes deltas gets its whole picture this way (at its join, after a
    resync, when a delta would be longer): ``k`` the kind of frame it stands for
    (``state`` or ``watch``), ``t`` the table info, ``w`` the view's wire form
    (``server.deltas.wire``), ``h`` the picture's digest, ``e`` as in a delta."""

    version: int = msgspec.field(name="v")
    kind: str = msgspec.field(name="k")
    table: TableInfo = msgspec.field(name="t")
    wire: list[Any] = msgspec.field(name="w")
    digest: str = msgspec.field(name="h")
    events: list[Any] = msgspec.field(default_factory=list, name="e")


class EmoteReply(msgspec.Struct, frozen=True, tag="emote"):
    """Seat ``seat`` reacted with ``emote``."""

    seat: int
    emote: str


class InviteReply(msgspec.Struct, frozen=True, tag="invite"):
    """A new link for the host alone: a seat invite or the watch link (``seat`` null)."""

    kind: Literal["seat", "watch"]
    seat: int | None
    token: str
    invite: str


class HintReply(msgspec.Struct, frozen=True, tag="hint"):
    """Hint number ``index`` of ``count`` (``count`` 0: nothing to play)."""

    version: int
    cards: list[str]
    index: int
    count: int


class ErrorMsg(msgspec.Struct, frozen=True, tag="error"):
    """One refused frame: a reason code, a message for people, the table's version."""

    code: str
    message: str
    version: int | None = None


class Pong(msgspec.Struct, frozen=True, tag="pong"):
    """The answer to ``ping``."""


ServerMessage: TypeAlias = (
    StateMsg
    | WatchMsg
    | DeltaMsg
    | PictureMsg
    | HintReply
    | EmoteReply
    | InviteReply
    | ErrorMsg
    | Pong
)


class ProtocolError(ServerError[ProtocolErrorCode]):
    """A frame refused before it reached a room."""


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
        # Includes bytes that are not UTF-8 (the transport hands those over as bytes).
        raise ProtocolError(ProtocolErrorCode.MALFORMED_JSON, str(exc)) from None
    except RecursionError:
        # msgspec refuses deep nesting this way; no message of ours nests past depth 3.
        raise ProtocolError(
            ProtocolErrorCode.INVALID_MESSAGE, "JSON nested too deeply for any message"
        ) from None


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
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return ProtocolError(ProtocolErrorCode.INVALID_MESSAGE, f"a message needs a type: {exc}")
    if envelope.type not in _CLIENT_TYPES:
        return ProtocolError(
            ProtocolErrorCode.UNKNOWN_TYPE, f"unknown message type {envelope.type!r}"
        )
    return ProtocolError(ProtocolErrorCode.INVALID_MESSAGE, str(exc))


def encode(message: ServerMessage) -> str:
    """One text frame (browsers hand binary frames over as Blobs, text as strings)."""
    return _encoder.encode(message).decode("utf-8")
