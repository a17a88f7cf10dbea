"""The stand-in's timers: when a bot plays a human seat's turn, and that one move.

A room arms its ``StandIn`` whenever the turn, a seat or a socket changes
(``arm``): at the turn clock's end, after the grace time without a socket, or at
once for a seat on auto (``clock.standin_due`` decides when).  Each arming takes
a new ticket; the timer's ``StandinDue`` and the move it leads to carry it, so
that a human who came back, or a turn that moved on meanwhile, makes them stale
(``is_current``) and the room drops them.  Kept apart from the actor because it
owns a timer, a task and the seats' absence times, and nothing else in the room
touches them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from server import engine
from server.engine import SeatView

from .clock import Timer, WallClock, standin_due
from .commands import BotMove, Command, StandinDue
from .log import TableMeta, bot_seed
from .seating import on_auto
from .seats import BotSeat
from .turns import human_turn, seats_settled

__all__ = ["StandIn"]


class StandIn:
    """The stand-in of one table: its timer, its move under way, its tickets."""

    __slots__ = ("_clock", "_post", "_table_id", "_task", "_timer", "away_since", "ticket")

    def __init__(
        self,
        table_id: str,
        clock: WallClock,
        post: Callable[[Command], None],
        humans: Iterable[int],
    ) -> None:
        self._table_id = table_id
        self._clock = clock
        self._post = post
        self._timer: Timer | None = None
        self._task: asyncio.Task[None] | None = None
        # The current arming's number: a due timer or a move of another one is stale.
        self.ticket = 0
        # When each human seat lost its last socket (a freshly loaded table: now).
        self.away_since: dict[int, float] = dict.fromkeys(humans, clock.now())

    def cancel(self) -> None:
        """Call off the timer and any move under way."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def arm(
        self,
        meta: TableMeta,
        state: engine.MatchState,
        turn_version: int,
        has_socket: Callable[[int], bool],
    ) -> None:
        """Arm the stand-in for the current turn if a human has it (a new ticket either way)."""
        self.cancel()
        self.ticket += 1
        seat = human_turn(meta, state)
        if seat is None:
            return
        clock = meta.clock
        if clock is not None and (clock.seat != seat or clock.version != turn_version):
            clock = None
        away = None
        # Nobody waits for a lone player, so their turns are never handed away for absence.
        if meta.humans >= 2 and seats_settled(meta) and not has_socket(seat):
            away = self.away_since.get(seat)
        due = standin_due(
            on_auto=on_auto(meta.seats[seat]),
            clock=clock,
            away_since=away,
            grace_seconds=meta.grace_seconds,
        )
        if due is not None:
            command = StandinDue(seat, self.ticket)
            self._timer = self._clock.call_at(due.at, lambda: self._post(command))

    def is_current(self, ticket: int) -> bool:
        """Whether ``ticket`` is that of the current arming."""
        return ticket == self.ticket

    def play(
        self,
        command: StandinDue,
        meta: TableMeta,
        state: engine.MatchState,
        version: int,
        bot_speed_ms: int,
    ) -> None:
        """Start the stand-in's move for ``command``'s seat, unless the command is stale."""
        if not self.is_current(command.ticket) or human_turn(meta, state) != command.seat:
            return
        self._timer = None
        seat = meta.seats[command.seat]
        # On auto the stand-in keeps the table's pace; after a timeout it plays at once.
        pause = bot_speed_ms / 1000 if on_auto(seat) else 0.0
        bot = BotSeat(seat.seat, meta.standin_level)
        view = engine.seat_view(state, seat.seat, hints=engine.BOT_HINTS)
        # Seeded as every bot's move is: from the table's secret where it has one.
        seed = bot_seed(meta, seat.seat, version)
        self._task = asyncio.create_task(
            self._move(bot, view, seed, version, command.ticket, pause),
            name=f"standin-{self._table_id}-{seat.seat}",
        )

    async def _move(
        self, bot: BotSeat, view: SeatView, seed: int, version: int, ticket: int, pause: float
    ) -> None:
        action = await bot.move(view, seed, pause)
        self._post(BotMove(bot.seat, version, action, standin_ticket=ticket))
