"""What the seats hear of the table as the room holds it: the table part of every
frame, and who is told it when.

The ``Audience`` knows the listeners and each one's view of the match; a frame
also carries the table around the match (the meta, who is connected, the bots'
speed, the fairness published so far, the spectators), which only the room's
helpers know.  The ``Teller`` puts the two together, once per telling, so that
every path that tells (a commit, a join, a seat change, a resync) builds the
same frame.  Nothing is shown before the table's first deal: every socket hears
of it when it is dealt.  Only the room's task calls it.
"""

from __future__ import annotations

from server.engine import EngineError, Event
from server.fairness import EntropyError

from .audience import Audience
from .bot_turns import BotTurns
from .clock import WallClock
from .fair_deals import FairDeals
from .held_table import HeldTable
from .seating import SeatError
from .seats import Listener
from .updates import Refused, RoomError, StateUpdate, TableSnapshot

__all__ = ["Teller"]


class Teller:
    """Tells one table's listeners its state: everyone (``broadcast``), one socket
    (``push_state``, ``resync``), or one socket its refusal (``refuse``)."""

    __slots__ = ("_audience", "_bots", "_clock", "_fair", "_table")

    def __init__(
        self,
        table: HeldTable,
        audience: Audience,
        fair: FairDeals,
        bots: BotTurns,
        clock: WallClock,
    ) -> None:
        self._table = table
        self._audience = audience
        self._fair = fair
        self._bots = bots
        self._clock = clock

    def connected(self) -> tuple[bool, ...]:
        """Per seat, whether a socket sits there (a change is news to everyone)."""
        return self._audience.connected(self._table.meta.seats)

    def snapshot(self) -> TableSnapshot:
        """The table part of a frame, as it is now."""
        table = self._table
        fair = self._fair.published(table.meta, table.state, table.match_no)
        return TableSnapshot(
            meta=table.meta,
            connected=self.connected(),
            bot_speed_ms=self._bots.speed_ms,
            match_no=table.match_no,
            commitments=fair.commitments,
            reveal=fair.reveal,
            entropy=fair.entropy,
            upcoming=fair.upcoming,
            spectators=len(self._audience.spectators),
            now=self._clock.now(),
        )

    def state_update(
        self, seat: int, snapshot: TableSnapshot, events: list[Event], full: bool = False
    ) -> StateUpdate:
        """What a socket of ``seat`` hears now (``full``: whole, even to a socket that
        takes deltas)."""
        table = self._table
        return self._audience.state_update(table.state, table.version, seat, snapshot, events, full)

    def broadcast(self, events: list[Event]) -> None:
        """Tell every seat's sockets and every spectator the table as it now is."""
        table = self._table
        if table.meta.first_deal_waits:
            return  # nothing to show before the first deal
        self._audience.broadcast(table.state, table.version, self.snapshot(), events)

    def push_state(self, listener: Listener) -> None:
        """Tell ``listener`` alone its seat's state (nothing others see changed)."""
        listener.push(self.state_update(listener.seat, self.snapshot(), []))

    def resync(self, listener: Listener) -> None:
        """Send ``listener`` its whole state again (it, or its process, lost track)."""
        table = self._table
        if table.meta.first_deal_waits:
            return  # its first state comes with the first deal
        # Whole, even to a socket that takes deltas: it (or its process) lost track.
        if listener in self._audience.humans.get(listener.seat, []):
            snapshot = self.snapshot()
            listener.push(self.state_update(listener.seat, snapshot, [], full=True))
        elif listener in self._audience.spectators:
            update = self._audience.watch_update(table.state, table.version, self.snapshot(), True)
            listener.push(update)

    def refuse(
        self, listener: Listener, error: RoomError | EngineError | SeatError | EntropyError
    ) -> None:
        """Tell ``listener`` alone that its request was refused, and why."""
        listener.push(Refused(version=self._table.version, error=error))
