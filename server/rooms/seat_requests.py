"""Host and seat requests, and the table's settings: what each asks of the table meta.

A seat's request (hand-back, or one of the host's controls: a new invite, a
seat to a bot, an open seat, a new watch link) and a change of a setting that
changes the table for everyone (the bots' speed) are checked here against the
meta and turned into the meta after them, with the invite to hand the host
where there is one.  A refusal raises ``SeatError`` with a reason code and
changes nothing.  The room actor stores the result through the versioned
store path and tells the seats; kept apart from the actor because it is all
rules and no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from .clock import AUTO_AFTER
from .commands import Back, InviteSeat, MakeBot, OpenSeat, SeatRequest, SetAuto
from .log import TableMeta
from .seating import (
    HOST_SEAT,
    SeatError,
    SeatReason,
    hand_back,
    make_bot,
    open_seat,
    reissue_invite,
    set_watch_link,
)
from .tokens import hash_token, new_token
from .updates import InviteIssued

__all__ = ["renamed", "seat_change", "set_auto", "with_bot_speed"]


def seat_change(
    meta: TableMeta,
    actor: int,
    request: SeatRequest,
    *,
    present: Callable[[int], bool],
    between_deals: bool,
) -> tuple[TableMeta, InviteIssued | None]:
    """The meta after seat ``actor``'s ``request``, and the invite it issues (if any).

    ``present`` says whether a seat has a socket now; ``between_deals`` whether
    the current deal is over.
    """
    if isinstance(request, Back):
        return hand_back(meta, actor), None
    if isinstance(request, SetAuto):
        return set_auto(meta, actor, on=request.on), None
    if isinstance(request, MakeBot):
        return make_bot(meta, actor, request.seat, present=present(request.seat)), None
    token = new_token()
    if isinstance(request, InviteSeat):
        meta = reissue_invite(meta, actor, request.seat, hash_token(token))
        return meta, InviteIssued(meta.id, request.seat, token)
    if isinstance(request, OpenSeat):
        meta = open_seat(meta, actor, request.seat, hash_token(token), between_deals=between_deals)
        return meta, InviteIssued(meta.id, request.seat, token)
    meta = set_watch_link(meta, actor, hash_token(token))
    return meta, InviteIssued(meta.id, None, token)


def set_auto(meta: TableMeta, seat: int, *, on: bool) -> TableMeta:
    """托管 asked by ``seat``'s own human: on, the seat counts as stood in for
    ``AUTO_AFTER`` turns in a row, so the stand-in plays it at once from now on (the
    same state three timed-out turns lead to); off, it is handed back."""
    if not on:
        return hand_back(meta, seat)
    current = meta.seats[seat]
    if current.standins >= AUTO_AFTER:
        return meta
    seats = [
        msgspec.structs.replace(s, standins=AUTO_AFTER) if s.seat == seat else s for s in meta.seats
    ]
    return msgspec.structs.replace(meta, seats=seats)


def with_bot_speed(meta: TableMeta, actor: int, ms: int, version: int) -> TableMeta:
    """The meta with the bots' pause set to ``ms`` from ``version`` on, asked by seat
    ``actor``: the host's setting alone, since it changes the table for everyone."""
    if actor != HOST_SEAT:
        raise SeatError(SeatReason.NOT_HOST, "only the host sets the bots' speed")
    return msgspec.structs.replace(meta, bot_speed_ms=ms, bot_speed_from=version)


def renamed(meta: TableMeta, seat: int, name: str) -> TableMeta:
    """``meta`` with ``seat`` called ``name`` (a seat's own setting: anyone may, for theirs)."""
    seats = [msgspec.structs.replace(s, name=name) if s.seat == seat else s for s in meta.seats]
    return msgspec.structs.replace(meta, seats=seats)
