"""Frames in, requests out: what a client's frame asks of its room, or the answer it
gets at once without the room hearing of it."""

from __future__ import annotations

from dataclasses import dataclass

from server.engine import NextDeal, Pass, Play
from server.protocol import (
    AutoMsg,
    BackMsg,
    BotSpeedMsg,
    EmoteMsg,
    EntropyMsg,
    HintMsg,
    InviteMsg,
    JoinMsg,
    MakeBotMsg,
    NewMatchMsg,
    NextDealMsg,
    OpenSeatMsg,
    PassMsg,
    PingMsg,
    PlayMsg,
    Pong,
    ProtocolError,
    ProtocolErrorCode,
    RenameMsg,
    ResyncMsg,
    VersionedMessage,
    WatchLinkMsg,
    decode_client,
    encode,
)
from server.rooms.commands import (
    AskHint,
    Back,
    InviteSeat,
    MakeBot,
    OpenSeat,
    Rename,
    Request,
    SendEmote,
    SetAuto,
    WatchLink,
)
from server.rooms.emotes import EMOTES
from server.rooms.entropy import GiveEntropy
from server.rooms.log import MAX_BOT_SPEED_MS, BotSpeed, NewMatch
from server.rooms.seating import SeatError, SeatReason

from .refusals import error_frame

__all__ = [
    "PONG",
    "Answer",
    "Inbound",
    "Resync",
    "ToRoom",
    "read",
    "read_join",
    "read_watching",
    "request_for",
]

PONG = encode(Pong())


@dataclass(frozen=True, slots=True)
class ToRoom:
    """Hand ``request``, made against table ``version``, to the socket's room."""

    version: int
    request: Request


@dataclass(frozen=True, slots=True)
class Answer:
    """Send ``frame`` back to this socket only; the room never hears of it."""

    frame: str


@dataclass(frozen=True, slots=True)
class Resync:
    """Send this socket its full picture again (its client lost track of it)."""

    reason: str


Inbound = ToRoom | Answer | Resync


def read_join(raw: str | bytes, max_bytes: int) -> JoinMsg:
    """A socket's first frame, which must be a ``join``; raises ``ProtocolError``."""
    message = decode_client(raw, max_bytes)
    if not isinstance(message, JoinMsg):
        raise ProtocolError(ProtocolErrorCode.JOIN_REQUIRED, "the first message must be join")
    return message


def read(raw: str | bytes, max_bytes: int, *, seat: int, version: int) -> Inbound:
    """What to do with one frame from a joined socket at ``seat`` (table at ``version``)."""
    message = _decode_joined(raw, max_bytes, version)
    if isinstance(message, Answer):
        return message
    if isinstance(message, EmoteMsg):
        # An emote changes nothing at the table, so it is never stale.
        return ToRoom(version, SendEmote(message.emote))
    if isinstance(message, EntropyMsg):
        # Bound to the commitment it answers, not to a version.
        return ToRoom(version, GiveEntropy(message.commitment, message.seed))
    if isinstance(message, ResyncMsg):
        return Resync(message.reason.value)
    return ToRoom(message.version, request_for(message, seat))


def read_watching(raw: str | bytes, max_bytes: int, *, version: int) -> str | Resync:
    """The answer to one frame from a spectator's socket: nothing it sends reaches the
    room, but it may ask for its full picture again."""
    message = _decode_joined(raw, max_bytes, version)
    if isinstance(message, Answer):
        return message.frame
    if isinstance(message, ResyncMsg):
        return Resync(message.reason.value)
    return error_frame(
        SeatError(SeatReason.SPECTATOR, "spectators watch; they cannot act"), version
    )


def _decode_joined(
    raw: str | bytes, max_bytes: int, version: int
) -> VersionedMessage | EmoteMsg | EntropyMsg | ResyncMsg | Answer:
    """A joined socket's frame, or the answer it gets at once (refusal, pong, second join)."""
    try:
        message = decode_client(raw, max_bytes)
    except ProtocolError as exc:
        return Answer(error_frame(exc, version))
    if isinstance(message, PingMsg):
        return Answer(PONG)
    if isinstance(message, JoinMsg):
        refusal = ProtocolError(
            ProtocolErrorCode.ALREADY_JOINED,
            "this socket has already joined; open a new one to switch",
        )
        return Answer(error_frame(refusal, version))
    if (out_of_range := _out_of_range(message)) is not None:
        refusal = ProtocolError(ProtocolErrorCode.INVALID_MESSAGE, out_of_range)
        return Answer(error_frame(refusal, version))
    return message


def _out_of_range(message: VersionedMessage | EmoteMsg | EntropyMsg | ResyncMsg) -> str | None:
    """What is wrong with a well-formed message's value by the table's own ranges (the
    protocol knows the frames' shapes, the rooms what a table accepts), or None."""
    if isinstance(message, EmoteMsg) and message.emote not in EMOTES:
        return f"unknown emote {message.emote[:32]!r}: one of {', '.join(EMOTES)}"
    if isinstance(message, BotSpeedMsg) and not 0 <= message.ms <= MAX_BOT_SPEED_MS:
        return f"a bot pause is 0 to {MAX_BOT_SPEED_MS} ms, not {message.ms}"
    return None


def request_for(message: VersionedMessage, seat: int) -> Request:
    """The room request a message from ``seat`` asks for (the seat comes from its token)."""
    if isinstance(message, PlayMsg):
        return Play(seat=seat, cards=list(message.cards))
    if isinstance(message, PassMsg):
        return Pass(seat=seat)
    if isinstance(message, HintMsg):
        return AskHint()
    if isinstance(message, NextDealMsg):
        return NextDeal()
    if isinstance(message, NewMatchMsg):
        return NewMatch()
    if isinstance(message, RenameMsg):
        return Rename(seat=seat, name=message.name)
    if isinstance(message, BackMsg):
        return Back()
    if isinstance(message, AutoMsg):
        return SetAuto(on=message.on)
    if isinstance(message, InviteMsg):
        return InviteSeat(message.seat)
    if isinstance(message, MakeBotMsg):
        return MakeBot(message.seat)
    if isinstance(message, OpenSeatMsg):
        return OpenSeat(message.seat)
    if isinstance(message, WatchLinkMsg):
        return WatchLink()
    assert isinstance(message, BotSpeedMsg)
    return BotSpeed(ms=message.ms, seat=seat)
