"""Between the wire and the rooms, without I/O: messages in, requests out; updates in, frames out.

The room actor deals in engine actions and seat views; ``server.protocol``
defines the frames.  This module is the only place that knows both, the way
a sans-I/O protocol object sits between a socket and an application:

- ``read_join`` and ``read`` turn one client frame into what should happen
  (a join, a request for the room, or an answer for the sender alone);
- ``frame`` turns a room's ``Update`` into one text frame: for a socket that takes
  deltas (its ``Feed`` says so) a ``d`` frame from the picture it was last shown,
  made by ``server.deltas`` from two pictures of the one projection (so it carries
  nothing the full frame would not), or its whole picture as a ``p`` frame;
- ``error_frame`` is the single mapping from a ``ServerError`` to an ``error``
  frame (its reason's value is the wire code), and ``close_for`` the single
  mapping from a room's ``Closing`` to a WebSocket close code.

``server.connection`` and ``server.app`` do the sending and receiving.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from msgspec.structs import astuple

from server import deltas, metrics
from server.engine import NextDeal, Pass, Play, PublicView, Reason, SeatView
from server.errors import ServerError
from server.fairness import EntropyReason
from server.protocol import (
    AutoMsg,
    BackMsg,
    BotSpeedMsg,
    ClockInfo,
    CloseCode,
    DeltaMsg,
    EmoteMsg,
    EmoteReply,
    EntropyMsg,
    ErrorMsg,
    FairnessInfo,
    HintMsg,
    HintReply,
    InviteMsg,
    InviteReply,
    JoinMsg,
    MakeBotMsg,
    NewMatchMsg,
    NextDealMsg,
    OpenSeatMsg,
    PassMsg,
    PictureMsg,
    PingMsg,
    PlayMsg,
    Pong,
    ProtocolError,
    ProtocolErrorCode,
    RenameMsg,
    ResyncMsg,
    SeatInfo,
    StateMsg,
    TableInfo,
    UpcomingInfo,
    VersionedMessage,
    WatchLinkMsg,
    WatchMsg,
    decode_client,
    encode,
)
from server.rooms.clock import remaining_ms
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
from server.rooms.seating import SeatError, SeatReason, on_auto
from server.rooms.tokens import invite_path
from server.rooms.updates import (
    Closing,
    EmoteShown,
    HintAnswer,
    InviteIssued,
    Refused,
    RoomReason,
    StateUpdate,
    TableSnapshot,
    Update,
    WatchUpdate,
)

__all__ = [
    "PONG",
    "WIRE_REASONS",
    "Answer",
    "Feed",
    "Inbound",
    "Resync",
    "ToRoom",
    "close_for",
    "error_frame",
    "frame",
    "read",
    "read_join",
    "read_watching",
    "request_for",
    "seat_refusal",
    "table_info",
]

# Every reason enum whose codes reach a client in an ``error`` frame (docs/protocol.md
# lists them, and the client words each one).
WIRE_REASONS: tuple[type[StrEnum], ...] = (
    ProtocolErrorCode,
    RoomReason,
    SeatReason,
    Reason,
    EntropyReason,
)

PONG = encode(Pong())

_CLOSINGS: dict[Closing, tuple[int, str]] = {
    Closing.SHUTDOWN: (1001, "server shutting down"),
    Closing.IDLE: (1001, "idle"),
    Closing.TABLE_UNAVAILABLE: (CloseCode.TABLE_UNAVAILABLE, "table unavailable, reconnect"),
    Closing.REVOKED: (CloseCode.BAD_TOKEN, "invite revoked: ask the host for a new link"),
    Closing.REPLACED: (CloseCode.REPLACED, "this seat was opened elsewhere since"),
}


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


class Feed:
    """What one socket was last shown: its picture, the view it shows and its version.

    ``deltas``: the socket joined asking for deltas; otherwise every change is
    sent whole and nothing is kept.  Written only by ``frame``, in the order the
    socket's frames are queued (the order it receives them).
    """

    __slots__ = ("deltas", "picture", "public", "version", "view")

    def __init__(self, deltas: bool = False) -> None:
        self.deltas = deltas
        # {"t": table info, "v": the view's wire form}, and the view it is of.
        self.picture: dict[str, Any] | None = None
        self.view: SeatView | PublicView | None = None
        # The wire form's public fields (``_Public.wire``): whose ops are shared.
        self.public: list[Any] | None = None
        self.version = -1


class _Public:
    """What every socket of one table at one version shares of its picture (a table
    with more than one socket: seats and spectators): the wire form of the view's
    public fields (``deltas.compact_public``), the digest's CRC-32 as far as them, the
    ops to them from an earlier version's, the events as deltas carry them.  Made by
    the first socket's frame, kept in the snapshot's ``frames``
    (one per broadcast, the last version's), used by another socket's only when its
    view's public fields equal ``source``'s: a picture holds only what its own view shows."""

    __slots__ = (
        "_fields",
        "crc",
        "events",
        "events_of",
        "ops",
        "ops_from",
        "source",
        "version",
        "wire",
    )

    def __init__(
        self, version: int, source: SeatView | PublicView, wire: list[Any], crc: int
    ) -> None:
        self.version, self.source, self.wire, self.crc = version, source, wire, crc
        # The ops to ``wire`` from ``ops_from``, an earlier version's (the one the
        # table's sockets were last shown, as a rule the same for all of them).
        self.ops_from: list[Any] | None = None
        self.ops: list[Any] = []
        self.events_of: list[Any] | None = None
        self.events: list[Any] = []
        self._fields: tuple[Any, ...] | None = None

    def fields(self) -> tuple[Any, ...]:
        """``source``'s public fields, for the table's other sockets to compare theirs
        with (made when the second one comes)."""
        if self._fields is None:
            self._fields = astuple(self.source)[:_PUBLIC_FIELDS]
        return self._fields


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


def table_info(table: TableSnapshot) -> TableInfo:
    """The ``table`` part of a ``state`` frame (bots always count as connected)."""
    meta = table.meta
    return TableInfo(
        id=meta.id,
        seats=[
            SeatInfo(
                seat=s.seat,
                name=s.name,
                kind=s.kind,
                level=s.level,
                connected=s.kind == "bot" or table.connected[s.seat],
                auto=s.kind == "human" and s.standins > 0,
                on_auto=on_auto(s),
            )
            for s in meta.seats
        ],
        bot_speed_ms=table.bot_speed_ms,
        humans=meta.humans,
        match_no=table.match_no,
        fairness=FairnessInfo(
            commitments=list(table.commitments),
            seed=table.reveal.seed if table.reveal else None,
            salt=table.reveal.salt if table.reveal else None,
            entropy=[list(seeds) for seeds in table.entropy],
            next=None
            if table.upcoming is None
            else UpcomingInfo(
                match_no=table.upcoming.match_no,
                deal_no=table.upcoming.deal_no,
                commitment=table.upcoming.commitment,
                received=list(table.upcoming.received),
            ),
        ),
        turn_seconds=meta.turn_seconds,
        grace_seconds=meta.grace_seconds,
        clock=_clock_info(table),
        spectators=table.spectators,
    )


def _clock_info(table: TableSnapshot) -> ClockInfo | None:
    clock = table.meta.clock
    if clock is None:
        return None
    return ClockInfo(
        seat=clock.seat,
        deadline=round(clock.deadline * 1000),
        remaining_ms=remaining_ms(clock, table.now),
    )


def frame(update: Update, feed: Feed | None = None) -> str | None:
    """The text frame that tells a socket ``update``; ``feed`` is what that socket
    was last shown (None: a socket that is sent every picture whole).  None when
    there is nothing to tell: the socket takes deltas and its picture is unchanged."""
    if isinstance(update, StateUpdate | WatchUpdate):
        if feed is None or not feed.deltas:
            return full_frame(update)
        return _frame_for(update, feed)
    if isinstance(update, EmoteShown):
        return encode(EmoteReply(seat=update.seat, emote=update.emote))
    if isinstance(update, InviteIssued):
        return encode(
            InviteReply(
                kind="watch" if update.seat is None else "seat",
                seat=update.seat,
                token=update.token,
                invite=invite_path(update.table_id, update.seat, update.token),
            )
        )
    if isinstance(update, HintAnswer):
        return encode(
            HintReply(
                version=update.version, cards=update.cards, index=update.index, count=update.count
            )
        )
    assert isinstance(update, Refused)
    return error_frame(update.error, update.version)


def full_frame(update: StateUpdate | WatchUpdate) -> str:
    """The whole ``state`` (or ``watch``) frame of ``update``, made once per update."""
    text: str | None = update.frames.get("full")
    if text is None:
        message: StateMsg | WatchMsg
        if isinstance(update, StateUpdate):
            message = StateMsg(
                version=update.version,
                table=_table_info_of(update.table),
                view=update.view,
                events=update.events,
            )
        else:
            message = WatchMsg(
                version=update.version,
                table=_table_info_of(update.table),
                view=update.view,
                events=update.events,
            )
        text = update.frames["full"] = encode(message)
    return text


# A view's public fields come first (``engine.view._Public``), as in the wire form.
_PUBLIC_FIELDS = len(deltas.wire.PUBLIC_FIELDS)


def _lent(feed: Feed) -> tuple[SeatView | PublicView, list[Any]] | None:
    """The view ``feed`` last showed and its wire form, whose moves' wire forms the next
    one reuses (None before its first picture)."""
    if feed.view is None or feed.picture is None:
        return None
    return feed.view, feed.picture["v"]


def _public(update: StateUpdate | WatchUpdate, feed: Feed) -> _Public:
    """The table's shared part of ``update``'s picture (``_Public``), made once per
    snapshot and version for every seat and spectator whose view's public fields are
    the same.  ``feed``'s picture lends its moves' wire forms (each move is made into
    one once)."""
    view = update.view
    shared: _Public | None = update.table.frames.get("public")
    if (
        shared is not None
        and shared.version == update.version
        and (shared.source is view or shared.fields() == astuple(view)[:_PUBLIC_FIELDS])
    ):
        return shared
    wire = deltas.compact_public(view, _lent(feed))
    shared = _Public(
        update.version, view, wire, deltas.public_crc(_table_prefix(update.table), wire)
    )
    update.table.frames["public"] = shared
    return shared


def _picture(
    update: StateUpdate | WatchUpdate, feed: Feed
) -> tuple[dict[str, Any], str, _Public | None]:
    """The picture a socket taking deltas keeps of ``update`` (``{"t": table info, "v":
    the view's wire form}``, of the very table info and view a whole frame encodes), its
    digest, and the part of it the table's other sockets share (None at a table with one
    socket), made once per update; the table info and the shared part once per snapshot.
    ``feed``'s picture lends its moves' wire forms (each move is made into one once)."""
    made: tuple[dict[str, Any], str, _Public | None] | None = update.frames.get("picture")
    if made is None:
        table, view = update.table, update.view
        shared: _Public | None = None
        if sum(table.connected) + (table.spectators > 0) < 2:
            # Nobody to share with: the wire form whole, in one pass.
            wire = deltas.compact(view, _lent(feed))
            digest = deltas.picture_digest(_table_prefix(table), deltas.wire_json(wire))
        else:
            shared = _public(update, feed)
            if isinstance(view, SeatView):
                own = deltas.compact_seat(view)
                wire = shared.wire + own
                digest = deltas.seat_digest(shared.crc, own)
            else:
                wire, digest = shared.wire, deltas.seat_digest(shared.crc, None)
        shown = {"t": _table_info_of(table), "v": wire}
        made = update.frames["picture"] = (shown, digest, shared)
    return made


def _picture_frame(
    update: StateUpdate | WatchUpdate, shown: dict[str, Any], digest: str, shared: _Public | None
) -> str:
    """The whole picture as a ``p`` frame, made once per update."""
    text: str | None = update.frames.get("p")
    if text is None:
        text = update.frames["p"] = encode(
            PictureMsg(
                version=update.version,
                kind="state" if isinstance(update, StateUpdate) else "watch",
                table=shown["t"],
                wire=shown["v"],
                digest=digest,
                events=_compact_events(update, shared),
            )
        )
    return text


def _table_ops(base: TableInfo, table: TableSnapshot) -> list[Any]:
    """The ops from table info ``base`` to ``table``'s, made once per snapshot and base."""
    info = _table_info_of(table)
    if base is info:
        return []
    # Looked up before comparing: the table's other sockets hold the same base.
    key = f"ops {id(base)}"
    made: tuple[TableInfo, list[Any]] | None = table.frames.get(key)
    if made is None or made[0] is not base:
        made = table.frames[key] = (base, [] if base == info else deltas.diff(base, info))
    return made[1]


def _compact_events(update: StateUpdate | WatchUpdate, shared: _Public | None) -> list[Any]:
    """The update's events as delta frames carry them, made once per update, or once
    per broadcast with ``shared`` (its view holds the moves the events are of as this
    one does)."""
    if shared is None:
        events: list[Any] | None = update.frames.get("events")
        if events is None:
            events = update.frames["events"] = deltas.compact_events(
                update.events, update.view.moves
            )
        return events
    if shared.events_of is not update.events:
        shared.events = deltas.compact_events(update.events, update.view.moves)
        shared.events_of = update.events
    return shared.events


def _delta_events(
    update: StateUpdate | WatchUpdate, shared: _Public | None, old: list[Any], new: list[Any]
) -> Any:
    """A delta's events: None (left out) when they are exactly the moves it appends."""
    events = _compact_events(update, shared)
    if events == deltas.appended(old, new):
        return None
    return events


def _view_ops(
    shared: _Public | None, base_public: list[Any] | None, old: list[Any], new: list[Any]
) -> list[Any]:
    """The ops from wire form ``old`` to ``new``; with ``shared``, those of the public
    fields made once per earlier public fields (``base_public``, ``old``'s), for every
    socket of the table."""
    if shared is None or base_public is None or len(old) != len(new):
        return deltas.view_ops(old, new)
    if shared.ops_from is not base_public:
        shared.ops = deltas.view_ops(base_public, shared.wire)
        shared.ops_from = base_public
    if len(new) == _PUBLIC_FIELDS:
        return shared.ops
    return shared.ops + deltas.view_ops(old[_PUBLIC_FIELDS:], new[_PUBLIC_FIELDS:], _PUBLIC_FIELDS)


def _table_prefix(table: TableSnapshot) -> int:
    """The CRC-32 of a picture's JSON up to its view (``server.deltas.table_prefix``),
    made once per snapshot for every seat."""
    crc: int | None = table.frames.get("table crc")
    if crc is None:
        crc = table.frames["table crc"] = deltas.table_prefix(
            deltas.canonical(_table_info_of(table))
        )
    return crc


def _table_info_of(table: TableSnapshot) -> TableInfo:
    info: TableInfo | None = table.frames.get("table")
    if info is None:
        info = table.frames["table"] = table_info(table)
    return info


# A delta this long is compared with the whole frame, and the shorter one is sent (a
# new deal changes most of a picture).
_COMPARE_OVER = 1024


def _frame_for(update: StateUpdate | WatchUpdate, feed: Feed) -> str | None:
    """The frame that brings ``feed`` to ``update`` (None: it already shows it), and
    ``feed`` moved on to it."""
    shown, digest, shared = _picture(update, feed)
    base, base_version, base_public = feed.picture, feed.version, feed.public
    feed.picture, feed.view, feed.version = shown, update.view, update.version
    feed.public = None if shared is None else shared.wire
    if base is None or update.full:
        return _picture_frame(update, shown, digest, shared)
    # The seat's sockets usually hold the same picture: one delta made for all of them.
    made: tuple[dict[str, Any], str | None] | None = update.frames.get(id(base))
    if made is None or made[0] is not base:
        ops = _view_ops(shared, base_public, base["v"], shown["v"])
        table_ops = _table_ops(base["t"], update.table)
        text: str | None = None
        # A change nobody sees (a new watch link's hash) is not worth a frame.
        if ops or table_ops or update.events or update.version != base_version:
            text = encode(
                DeltaMsg(
                    version=update.version,
                    base=None if base_version == update.version - 1 else base_version,
                    ops=ops,
                    table_ops=table_ops,
                    digest=digest,
                    events=_delta_events(update, shared, base["v"], shown["v"]),
                )
            )
            if len(text) > _COMPARE_OVER:
                whole = _picture_frame(update, shown, digest, shared)
                if len(whole) <= len(text):
                    text = whole
        made = update.frames[id(base)] = (base, text)
    return made[1]


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
