"""A quick-match player taking over a bot's seat, at the next deal boundary.

A quick-match table started with bots (nobody else came within the wait) stays
"fillable": the matchmaker (``server.lobby.fillable``) gives a later player of the
same queue one of its bot seats, atomically in Redis, and records the claim (the
hash of the token the player's browser made).  The seat itself changes only here,
in the table's owner, through the player's own socket: its join (local, or
forwarded to the owning process like any join) carries the token; a bot seat that
the token does not open asks the claim, and a claim found becomes a ``Takeover`` in
the table's meta, written under the log's version check like every seat change (a
restarted or new owner resumes it; the action log is untouched, so replays, history
and the verifier are unaffected).

The seat changes hands only between deals, never mid-deal: joined mid-deal, the
player watches the deal from that seat's side as a spectator (``watch`` frames,
which the client shows as "you join at the next deal"), and as the deal ends the
seat becomes theirs (human, their token, their name) if they are still there;
between deals it is theirs at once.  A seat a bot played part of a match counts as
the bot's when that match is rated (``SeatMeta.bot_match``, read by
``server.ratings.record``).

The room's ``SeatTakeovers`` holds only who is waiting (sockets are not stored)
and does the takeover; what is stored is in the meta.  ``install`` hands this
process's matchmaker link in (``server.lobby.mount.Lobby.start`` does; a room
without one knows no claims).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import msgspec
from redis.exceptions import RedisError

from server.engine import Event

from .audience import Audience
from .held_table import HeldTable
from .log import SeatMeta, TableMeta, Takeover
from .seats import Listener
from .tables import human_name
from .tasks import background
from .telling import Teller

__all__ = ["FillLink", "SeatTakeovers", "install", "seat_given", "take_over", "unlist"]

log = logging.getLogger(__name__)


class FillLink(Protocol):
    """The matchmaker as a room sees it."""

    async def claimed(self, table: str, seat: int, token_hash: str) -> str | None:
        """The name of the player given ``seat`` of ``table`` with that token (None:
        nobody was)."""
        ...

    async def unlist(self, table: str) -> None:
        """``table`` takes no more quick-match players."""
        ...


_link: FillLink | None = None


def install(link: FillLink | None) -> None:
    """Rooms of this process ask ``link`` about claims (None: they know none)."""
    global _link
    _link = link


def unlist(table: str) -> None:
    """Take ``table`` out of the fillable set, off the actor (its match ended or it
    closed with nobody there); the entry expires anyway if this is lost."""
    if _link is not None:
        background(_link.unlist(table), f"unlist-{table}")


async def seat_given(meta: TableMeta, token_hash: str) -> int | None:
    """The bot seat the holder of ``token_hash`` was given (pending in ``meta``, or a
    claim at the matchmaker), for a join whose token opens no seat; the owner's room
    checks it again as the socket attaches."""
    for pending in meta.takeovers:
        if pending.token_hash == token_hash:
            return pending.seat
    if _link is None:
        return None
    try:
        for seat in meta.seats:
            if seat.kind != "bot":
                continue
            if await _link.claimed(meta.id, seat.seat, token_hash) is not None:
                return seat.seat
    except (RedisError, OSError) as exc:
        log.warning("table %s: cannot read the quick-match claims: %s", meta.id, exc)
    return None


def take_over(meta: TableMeta, seats: list[int], bot_match: int) -> TableMeta:
    """``meta`` with each pending takeover of ``seats`` done: the bot seat is its
    player's (their token and name); ``bot_match`` is the match the bot played part
    of (-1: the match is over, the next one is theirs whole)."""
    pending = {t.seat: t for t in meta.takeovers if t.seat in seats}
    new_seats = [
        SeatMeta(
            seat=s.seat,
            kind="human",
            name=pending[s.seat].name or human_name(s.seat),
            token_hash=pending[s.seat].token_hash,
            joined=True,
            bot_match=bot_match,
        )
        if s.seat in pending and s.kind == "bot"
        else s
        for s in meta.seats
    ]
    left = tuple(t for t in meta.takeovers if t.seat not in pending)
    return msgspec.structs.replace(meta, seats=new_seats, takeovers=left)


class SeatTakeovers:
    """The sockets of one table waiting for the bot seat they were given, and the
    takeover itself: at a join between deals, or as a deal ends (``take_over_seats``)."""

    __slots__ = ("_audience", "_reseat", "_table", "_teller", "_waiting")

    def __init__(
        self,
        table: HeldTable,
        audience: Audience,
        teller: Teller,
        reseat: Callable[[], None],
    ) -> None:
        self._table = table
        self._audience = audience
        self._teller = teller
        # Matches the audience's seats and the bots to the meta after a seat changed hands.
        self._reseat = reseat
        self._waiting: list[Listener] = []

    async def claim(self, meta: TableMeta, seat: int, token_hash: str) -> TableMeta | None:
        """``meta`` with ``seat`` pending for the holder of ``token_hash``, if the
        matchmaker gave it to them (or ``meta`` says so already); None otherwise."""
        if not 0 <= seat < len(meta.seats) or meta.seats[seat].kind != "bot":
            return None
        for pending in meta.takeovers:
            if pending.seat == seat:
                # A seat is given once: a second token for it opens nothing.
                return meta if pending.token_hash == token_hash else None
        if _link is None:
            return None
        name = await _link.claimed(meta.id, seat, token_hash)
        if name is None:
            return None
        taken = Takeover(seat=seat, token_hash=token_hash, name=name)
        return msgspec.structs.replace(meta, takeovers=(*meta.takeovers, taken))

    async def take_or_wait(self, listener: Listener, claimed: TableMeta) -> bool:
        """A bot seat given to ``listener``'s player: mid-deal they watch until it ends
        (True); between deals the seat is theirs now (False: seat them as usual)."""
        table = self._table
        if not table.between_deals:
            await table.save_meta(claimed)
            self._waiting.append(listener)
            self._audience.spectators.append(listener)
            return True
        await table.save_meta(take_over(claimed, [listener.seat], table.bot_match))
        self._reseat()
        return False

    def waiting(self, listener: Listener) -> bool:
        """Whether ``listener`` waits for a seat (it may not act for the bot meanwhile)."""
        return listener in self._waiting

    def forget(self, listener: Listener) -> bool:
        """``listener`` left; True when it was waiting here."""
        if listener in self._waiting:
            self._waiting.remove(listener)
            return True
        return False

    def ready(self, meta: TableMeta) -> list[int]:
        """Pending seats whose player is here now, to take over at this boundary."""
        present = {x.seat for x in self._waiting if x.open}
        # A seat some other way made a person's (the host's open-seat invite) is not
        # handed to the socket that waits for it: that one only ever watches.
        bots = {s.seat for s in meta.seats if s.kind == "bot"}
        return sorted({t.seat for t in meta.takeovers if t.seat in present & bots})

    async def take_over_seats(self) -> list[Listener]:
        """A deal just ended: the waiting players' seats become theirs (stored first);
        their sockets, no longer spectators, to seat once the table is told."""
        table = self._table
        seats = self.ready(table.meta) if table.between_deals else []
        if not seats:
            return []
        await table.save_meta(take_over(table.meta, seats, table.bot_match))
        moved = [x for x in self._waiting if x.seat in seats and x.open]
        self._waiting = [x for x in self._waiting if x.seat not in seats]
        for listener in moved:
            self._audience.spectators.remove(listener)
        self._reseat()
        return moved

    def seat_moved(self, moved: list[Listener], events: list[Event]) -> None:
        """Seat the players who took over: each gets its seat's whole picture (it was
        shown the spectators' one), then the others see them connected."""
        if not moved:
            return
        for listener in moved:
            self._audience.seat(listener)
        snapshot = self._teller.snapshot()
        for listener in moved:
            listener.push(self._teller.state_update(listener.seat, snapshot, events, True))
        self._teller.broadcast([])
