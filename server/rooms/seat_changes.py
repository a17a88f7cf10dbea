"""Who sits where at a live table, as it changes: a socket joining or leaving, a host
or seat request, a table setting, a bot seat taken over.

Each change is a meta write (``HeldTable.save_meta``, under the log's version
check; the log itself is untouched) followed by what the change means for the
rest of the room: which sockets and bots the seats now have (``reseat``), what
the stand-in and the bots do next, who is told.  What a request may do is
decided by the pure rules (``seating.py``, ``seat_requests.py``); this is their
I/O, the room's task only.  Kept apart from the actor because seats change in
many ways and each has its own order of steps, none of which the actor's loop
needs to know.
"""

from __future__ import annotations

from server import metrics

from .audience import Audience, end_all
from .clock import WallClock
from .commands import InviteSeat, SeatRequest, WatchLink
from .held_table import HeldTable
from .seat_requests import renamed, seat_change, with_bot_speed
from .seat_takeover import SeatTakeovers
from .seating import SeatError, SeatReason, claim_open_seat, hand_back, mark_joined, retired_reason
from .seats import SPECTATOR, Listener
from .telling import Teller
from .timers import RoomTimers
from .updates import Closing

__all__ = ["SeatChanges"]


class SeatChanges:
    """The seat changes of one table (see the module's docstring); ``takeovers`` holds
    the quick-match players waiting for their bot seat."""

    __slots__ = ("_audience", "_clock", "_table", "_teller", "_timers", "takeovers")

    def __init__(
        self,
        table: HeldTable,
        audience: Audience,
        timers: RoomTimers,
        teller: Teller,
        clock: WallClock,
    ) -> None:
        self._table = table
        self._audience = audience
        self._timers = timers
        self._teller = teller
        self._clock = clock
        self.takeovers = SeatTakeovers(table, audience, teller, self.reseat)

    def reseat(self) -> None:
        """Match the human seats' socket lists and the bots to the meta's seat kinds."""
        seats = self._table.meta.seats
        self._audience.match_seats(seats)
        self._timers.bots.reseat(seats)

    async def join(self, listener: Listener, token_hash: str | None) -> bool:
        """Seat a socket (checking its token against the room's own meta); True when
        anything others see changed.  Reconnecting hands a seat back from the stand-in,
        and the first join with an open seat's invite makes that bot seat human."""
        table = self._table
        if listener.seat == SPECTATOR:
            if token_hash is None or token_hash != table.meta.watch_hash:
                raise SeatError(SeatReason.INVITE_REVOKED, "this watch link was replaced")
            self._audience.admit_spectator(listener)
            return True
        seat = table.meta.seats[listener.seat]
        if token_hash is not None and token_hash != seat.token_hash:
            claimed = await self.takeovers.claim(table.meta, listener.seat, token_hash)
            if claimed is None:
                reason = retired_reason(table.meta, token_hash) or SeatReason.INVITE_REVOKED
                raise SeatError(reason, "this invite no longer opens the seat")
            if await self.takeovers.take_or_wait(listener, claimed):
                return True
            seat = table.meta.seats[listener.seat]
        meta = table.meta
        if seat.kind == "bot":
            if not table.between_deals:
                raise SeatError(SeatReason.INVITE_EXPIRED, "the next deal has already started")
            meta = claim_open_seat(meta, seat.seat)
        meta = table.with_clock(hand_back(mark_joined(meta, seat.seat), seat.seat))
        changed = meta != table.meta
        await table.save_meta(meta)
        if seat.kind == "bot":
            self.reseat()
        before = self._teller.connected()
        self._audience.seat(listener)
        self._timers.standin.away_since.pop(seat.seat, None)
        return changed or self._teller.connected() != before

    def leave(self, listener: Listener) -> None:
        """Unseat ``listener`` (its socket has gone); the others hear if its seat empties,
        and the stand-in counts the seat's absence from now."""
        if self.takeovers.forget(listener):
            self._audience.spectators.remove(listener)
            self._teller.broadcast([])
            self._timers.arm_idle()
            return
        if listener.seat == SPECTATOR:
            if listener in self._audience.spectators:
                self._audience.spectators.remove(listener)
                self._teller.broadcast([])
                self._timers.arm_idle()
            return
        listeners = self._audience.humans.get(listener.seat, [])
        if listener not in listeners:
            return
        before = self._teller.connected()
        listeners.remove(listener)
        if not listeners:
            self._timers.standin.away_since[listener.seat] = self._clock.now()
            self._timers.schedule_standin()
        if self._teller.connected() != before:
            self._teller.broadcast([])
        self._timers.arm_idle()

    async def request(self, listener: Listener, request: SeatRequest) -> None:
        """A hand-back or a host control from ``listener``'s seat (``seat_requests.py``):
        stored first, then the invite it issues handed over and everyone told."""
        table = self._table
        try:
            meta, issued = seat_change(
                table.meta,
                listener.seat,
                request,
                present=self._audience.seat_has_socket,
                between_deals=table.between_deals,
            )
        except SeatError as exc:
            self._teller.refuse(listener, exc)
            return
        kinds_before = [s.kind for s in table.meta.seats]
        await table.save_meta(table.with_clock(meta))
        if issued is not None:
            listener.push(issued)
        if isinstance(request, InviteSeat):
            # The old token stops at once, for sockets already seated with it too.
            end_all(self._audience.humans[request.seat], Closing.REVOKED)
            self._timers.standin.away_since[request.seat] = self._clock.now()
        elif isinstance(request, WatchLink):
            end_all(self._audience.spectators, Closing.REVOKED)
        self.reseat()
        self._teller.broadcast([])
        if [s.kind for s in table.meta.seats] != kinds_before:
            self._timers.schedule_bot()
        self._timers.schedule_standin()

    async def set_bot_speed(self, listener: Listener, ms: int) -> None:
        """A table setting, kept in the meta: changing it never grows the log, never
        restarts a bot's pause under way nor its search (``BotTurns.set_speed``)."""
        table, bots = self._table, self._timers.bots
        try:
            meta = with_bot_speed(table.meta, listener.seat, ms, table.version)
        except SeatError as exc:
            self._teller.refuse(listener, exc)
            return
        if ms != bots.speed_ms:
            await table.write_meta(meta)
            bots.set_speed(ms)
            metrics.action_accepted("bot_speed", by_bot=False)
        self._teller.broadcast([])

    async def rename(self, seat: int, name: str) -> None:
        """A seat's name is a table setting too: kept in the meta, the log unchanged."""
        await self._table.save_meta(renamed(self._table.meta, seat, name))
        self._teller.broadcast([])
