"""What moves a table when nobody at it does: the bots' turns, the stand-in and the
idle close.

Each is a timer or a task whose end posts a command to the room's inbox (a
``BotMove``, a ``StandinDue``, an ``Idle``): none of them changes the table
itself, the actor does when it reads the command.  The room re-arms them after
anything that changes whose turn it is, who sits where or who is connected
(``schedule``), and ``stop`` calls all of them off when it closes; a move that
comes back is checked here against the turn it was made for (``move_of``).  Kept apart
from the actor because they are the room's only clocks, and one object that
owns them all is one place to stop them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from server import bots
from server.bots import BotAction

from .audience import Audience
from .bot_turns import BotTurns, bot_view
from .clock import WallClock
from .commands import BotMove, Command, Idle, StandinDue
from .held_table import HeldTable
from .standin import StandIn

__all__ = ["RoomTimers"]

log = logging.getLogger(__name__)


class RoomTimers:
    """The bots' turns (``bots``), the stand-in (``standin``) and the idle timer of one
    table; ``post`` is how their ends reach the room's inbox."""

    __slots__ = (
        "_audience",
        "_idle_seconds",
        "_idle_timer",
        "_post",
        "_stopped",
        "_table",
        "bots",
        "standin",
    )

    def __init__(
        self,
        table_id: str,
        table: HeldTable,
        audience: Audience,
        clock: WallClock,
        post: Callable[[Command], None],
        *,
        bot_speed_ms: int,
        idle_seconds: float,
    ) -> None:
        self._table = table
        self._audience = audience
        self._post = post
        self._idle_seconds = idle_seconds
        self._idle_timer: asyncio.TimerHandle | None = None
        self._stopped = False
        # Read by the room too: ``commit.prepare`` asks the bots, a ``BotMove`` carries
        # the stand-in's ticket, a seat's comings and goings are its absence times.
        self.bots = BotTurns(table_id, clock, post, bot_speed_ms)
        self.bots.reseat(table.meta.seats)
        # Each human seat's absence starts now: the audience's seats are the meta's.
        self.standin = StandIn(table_id, clock, post, audience.humans)

    def schedule(self) -> None:
        """Start the bot's turn, or arm the stand-in, for the current turn."""
        self.schedule_bot()
        self.schedule_standin()

    def schedule_bot(self) -> None:
        """Start the bot's turn if it is a bot's (see ``bot_turns.py``)."""
        table = self._table
        if not table.meta.first_deal_waits:
            self.bots.schedule(table.meta, table.state, table.version)

    def schedule_standin(self) -> None:
        """Arm the stand-in for the current turn (see ``standin.py``)."""
        table = self._table
        if not self._stopped and not table.meta.first_deal_waits:
            self.standin.arm(
                table.meta, table.state, table.turn_version, self._audience.seat_has_socket
            )

    def play_standin(self, due: StandinDue) -> None:
        """The stand-in's timer ran out: start its move (unless ``due`` is stale)."""
        table = self._table
        self.standin.play(due, table.meta, table.state, table.version, self.bots.speed_ms)

    def move_of(self, move: BotMove) -> BotAction | None:
        """The action a bot's (or the stand-in's) ``move`` stands for now: None when it
        was decided against an older state or a stale stand-in ticket; a legal fallback
        when the bot answered for another seat."""
        table = self._table
        if move.version != table.version:
            return None  # decided against an older state; the current turn has its own task
        if move.standin_ticket is not None and not self.standin.is_current(move.standin_ticket):
            return None  # the seat's human came back (or the turn was rescheduled) meanwhile
        action: BotAction = move.action
        if action.seat != move.seat:
            log.error("bot on seat %d answered for seat %d", move.seat, action.seat)
            action = self.fallback(move.seat)
        return action

    def fallback(self, seat: int) -> BotAction:
        """A legal action for ``seat``'s bot now (its own move was refused)."""
        return bots.fallback_action(bot_view(self._table.state, seat))

    def arm_idle(self) -> None:
        """Close the room ``idle_seconds`` from now unless somebody comes (an ``Idle``
        command, checked again when read); nothing to arm while anyone listens."""
        if self._audience.any_connection() or self._idle_timer is not None:
            return
        self._idle_timer = asyncio.get_running_loop().call_later(
            self._idle_seconds, self._post, Idle()
        )

    def idle_fired(self) -> None:
        """The room read the idle timer's ``Idle``: a new one may be armed."""
        self._idle_timer = None

    def disarm_idle(self) -> None:
        """Somebody came: the room stays."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def stop(self) -> None:
        """Call off every timer and task (the room closes): none is armed again."""
        self._stopped = True
        self.bots.cancel()
        self.standin.cancel()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
