"""Who may sit where: host controls, invites, the watch link, stand-in bookkeeping.

Pure functions from one ``TableMeta`` to the next; the room actor calls them and
stores the result through the versioned store path.  A refusal raises
``SeatError`` with a reason code and changes nothing.  The host is seat 0, the
seat that created the table (always a human).
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from server.errors import ServerError

from .clock import AUTO_AFTER
from .log import RetiredToken, SeatMeta, TableMeta
from .tables import BOT_NAMES, human_name

__all__ = [
    "HOST_SEAT",
    "MAX_RETIRED_TOKENS",
    "SeatError",
    "SeatReason",
    "after_standin",
    "claim_open_seat",
    "expire_open_invites",
    "hand_back",
    "make_bot",
    "mark_joined",
    "on_auto",
    "open_seat",
    "reissue_invite",
    "retired_reason",
    "set_watch_link",
]

HOST_SEAT = 0
# Retired token hashes kept to explain refusals; older ones are plain bad tokens.
MAX_RETIRED_TOKENS = 16


class SeatReason(StrEnum):
    """Why a seat change or seat action was refused; the value is the wire code."""

    NOT_HOST = "not_host"
    NO_SUCH_SEAT = "no_such_seat"
    HOST_SEAT = "host_seat"
    SEAT_NOT_HUMAN = "seat_not_human"
    SEAT_NOT_BOT = "seat_not_bot"
    SEAT_PRESENT = "seat_present"
    NOT_BETWEEN_DEALS = "not_between_deals"
    SEAT_ON_AUTO = "seat_on_auto"
    INVITE_REVOKED = "invite_revoked"
    INVITE_EXPIRED = "invite_expired"
    SPECTATOR = "spectator"
    TOO_MANY_SPECTATORS = "too_many_spectators"
    TOO_MANY_EMOTES = "too_many_emotes"


class SeatError(ServerError[SeatReason]):
    """A seat change or seat action refused; ``reason`` is the wire reason code."""


def on_auto(seat: SeatMeta) -> bool:
    """The stand-in plays this seat's turns at once until its human hands back."""
    return seat.kind == "human" and seat.standins >= AUTO_AFTER


def _with_seat(meta: TableMeta, seat: SeatMeta) -> TableMeta:
    seats = [seat if s.seat == seat.seat else s for s in meta.seats]
    return msgspec.structs.replace(meta, seats=seats)


def _retire(meta: TableMeta, token_hash: str | None, why: str) -> TableMeta:
    if token_hash is None:
        return meta
    entry = RetiredToken(hash=token_hash, why="expired" if why == "expired" else "revoked")
    retired = [*meta.retired, entry][-MAX_RETIRED_TOKENS:]
    return msgspec.structs.replace(meta, retired=retired)


def _check_host(actor: int) -> None:
    if actor != HOST_SEAT:
        raise SeatError(SeatReason.NOT_HOST, "only the host (the seat that opened the table) may")


def _other_seat(meta: TableMeta, seat: int) -> SeatMeta:
    if not 0 <= seat < len(meta.seats):
        raise SeatError(SeatReason.NO_SUCH_SEAT, f"seat {seat} does not exist")
    if seat == HOST_SEAT:
        raise SeatError(SeatReason.HOST_SEAT, "the host's own seat cannot be changed")
    return meta.seats[seat]


def reissue_invite(meta: TableMeta, actor: int, seat: int, token_hash: str) -> TableMeta:
    """A new invite for a human seat; the old token stops working at once."""
    _check_host(actor)
    current = _other_seat(meta, seat)
    if current.kind != "human":
        raise SeatError(
            SeatReason.SEAT_NOT_HUMAN, f"seat {seat} is a bot: open it to a new person instead"
        )
    meta = _retire(meta, current.token_hash, "revoked")
    return _with_seat(meta, msgspec.structs.replace(current, token_hash=token_hash))


def make_bot(meta: TableMeta, actor: int, seat: int, *, present: bool) -> TableMeta:
    """A human seat that was left becomes a bot (at the table's stand-in level)."""
    _check_host(actor)
    current = _other_seat(meta, seat)
    if current.kind != "human":
        raise SeatError(SeatReason.SEAT_NOT_HUMAN, f"seat {seat} is already a bot")
    if present:
        raise SeatError(SeatReason.SEAT_PRESENT, f"seat {seat}'s player is still at the table")
    meta = _retire(meta, current.token_hash, "revoked")
    bot = SeatMeta(seat=seat, kind="bot", name=BOT_NAMES[seat], level=meta.standin_level)
    return _with_seat(meta, bot)


def open_seat(
    meta: TableMeta, actor: int, seat: int, token_hash: str, *, between_deals: bool
) -> TableMeta:
    """Invite a new person to a bot seat; the invite works until the next deal starts."""
    _check_host(actor)
    current = _other_seat(meta, seat)
    if current.kind != "bot":
        raise SeatError(SeatReason.SEAT_NOT_BOT, f"seat {seat} already has a person")
    if not between_deals:
        raise SeatError(SeatReason.NOT_BETWEEN_DEALS, "a bot seat can be opened only between deals")
    meta = _retire(meta, current.token_hash, "revoked")
    return _with_seat(meta, msgspec.structs.replace(current, token_hash=token_hash))


def claim_open_seat(meta: TableMeta, seat: int) -> TableMeta:
    """The first join with an open seat's invite: the bot seat becomes that person's."""
    current = meta.seats[seat]
    human = SeatMeta(
        seat=seat, kind="human", name=human_name(seat), token_hash=current.token_hash, joined=True
    )
    return _with_seat(meta, human)


def expire_open_invites(meta: TableMeta) -> TableMeta:
    """The next deal starts: invites to bot seats nobody took stop working."""
    for seat in meta.seats:
        if seat.kind == "bot" and seat.token_hash is not None:
            meta = _retire(meta, seat.token_hash, "expired")
            meta = _with_seat(meta, msgspec.structs.replace(seat, token_hash=None))
    return meta


def set_watch_link(meta: TableMeta, actor: int, token_hash: str) -> TableMeta:
    """A new watch link for spectators; an older one stops working."""
    _check_host(actor)
    meta = _retire(meta, meta.watch_hash, "revoked")
    return msgspec.structs.replace(meta, watch_hash=token_hash)


def retired_reason(meta: TableMeta, token_hash: str) -> SeatReason | None:
    """Why a token that opens nothing used to open something (None: never known)."""
    for entry in meta.retired:
        if entry.hash == token_hash:
            if entry.why == "expired":
                return SeatReason.INVITE_EXPIRED
            return SeatReason.INVITE_REVOKED
    return None


def _set_standins(meta: TableMeta, seat: int, standins: int) -> TableMeta:
    current = meta.seats[seat]
    if current.standins == standins:
        return meta
    return _with_seat(meta, msgspec.structs.replace(current, standins=standins))


def after_standin(meta: TableMeta, seat: int) -> TableMeta:
    """The meta once the stand-in has played one more of ``seat``'s turns in a row."""
    return _set_standins(meta, seat, meta.seats[seat].standins + 1)


def hand_back(meta: TableMeta, seat: int) -> TableMeta:
    """The human is back (reconnected, said so, or played themselves): their turns are theirs."""
    return _set_standins(meta, seat, 0)


def mark_joined(meta: TableMeta, seat: int) -> TableMeta:
    """The meta once ``seat``'s human has sat down (clocks wait for everyone)."""
    current = meta.seats[seat]
    if current.joined:
        return meta
    return _with_seat(meta, msgspec.structs.replace(current, joined=True))
