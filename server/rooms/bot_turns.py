"""The bots of one table: who they are, the turn one of them is taking, and its pause.

A bot's turn is a task: it thinks (``bots.decide``, its budget the pause), waits
out the rest of the table's pause on the room's clock, and posts its move to
the room's inbox as a ``BotMove``.  A bot that answers at once (no pause, a
level that decides in under a millisecond) gets no task: ``decide_now`` gives
its move on the spot, for the room to queue or to write with the action it
answers (``commit.answer_at_once``).

The pause is measured from when the turn began.  A change of the table's speed
moves the end of a pause under way (to its start plus the new pause, at once
if that has passed) and never restarts it, nor the thinking: changing the speed
again and again cannot hold a bot back, nor start a new search.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable

from server import bots, engine
from server.bots import BotAction
from server.engine import SeatView

from .clock import WallClock
from .commands import BotMove, Command
from .log import SeatMeta, TableMeta, bot_seed
from .seats import MIN_BOT_BUDGET, BotSeat

__all__ = ["BotTurns", "bot_view"]


def bot_view(state: engine.MatchState, seat: int) -> SeatView:
    """What a bot (or the stand-in) at ``seat`` sees of ``state``."""
    # Built once per turn (a refused move's fallback rebuilds it): nothing to cache.
    return engine.seat_view(state, seat, hints=engine.BOT_HINTS)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class BotTurns:
    """The bot seats of one table and the turn task of the one whose turn it is."""

    __slots__ = ("_bots", "_clock", "_post", "_table_id", "_task", "_waiter", "speed_ms")

    def __init__(
        self, table_id: str, clock: WallClock, post: Callable[[Command], None], speed_ms: int
    ) -> None:
        self._table_id = table_id
        self._clock = clock
        self._post = post
        self._bots: dict[int, BotSeat] = {}
        self._task: asyncio.Task[None] | None = None
        # What the pause under way waits on: woken when the speed changes.
        self._waiter: asyncio.Future[None] | None = None
        # The pause before each bot move (the table's bot speed setting).
        self.speed_ms = speed_ms

    def reseat(self, seats: Iterable[SeatMeta]) -> None:
        """Match the bots to the meta's seat kinds and levels."""
        for seat in seats:
            if seat.kind == "human":
                self._bots.pop(seat.seat, None)
                continue
            level = seat.level or "normal"
            bot = self._bots.get(seat.seat)
            if bot is None or bot.level != level:
                self._bots[seat.seat] = BotSeat(seat.seat, level)

    def cancel(self) -> None:
        """Call off the turn under way (its move would be of a state that is gone)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def set_speed(self, ms: int) -> None:
        """The table's bot speed is now ``ms``: a pause under way ends at its start plus
        ``ms`` (see the module's docstring); the thinking goes on untouched."""
        self.speed_ms = ms
        if self._waiter is not None:
            _wake(self._waiter)

    def instant(self, state: engine.MatchState) -> BotSeat | None:
        """The bot whose turn it is if it answers at once: no pause to wait and under a
        millisecond of thinking."""
        deal = state.deal
        bot = self._bots.get(deal.turn)
        if deal.result is not None or bot is None:
            return None
        if self.speed_ms != 0 or bot.level not in bots.INLINE_LEVELS:
            return None
        return bot

    def decide_now(
        self, bot: BotSeat, meta: TableMeta, state: engine.MatchState, version: int
    ) -> BotAction:
        """The move of ``bot`` (one that answers at once) on the table at ``version``."""
        seed = bot_seed(meta, bot.seat, version)
        return bots.decide_now(bot.level, seed, bot_view(state, bot.seat))

    def schedule(self, meta: TableMeta, state: engine.MatchState, version: int) -> None:
        """Start the turn of the bot whose turn it is, if it is a bot's (the table is at
        ``version``); a turn under way is called off first."""
        self.cancel()
        instant = self.instant(state)
        if instant is not None:
            # Decide now and queue the move behind whatever the inbox already holds,
            # without a task per turn.
            action = self.decide_now(instant, meta, state, version)
            self._post(BotMove(instant.seat, version, action))
            return
        deal = state.deal
        bot = self._bots.get(deal.turn)
        if deal.result is not None or bot is None:
            return
        self._task = asyncio.create_task(
            self._turn(bot, bot_view(state, bot.seat), bot_seed(meta, bot.seat, version), version),
            name=f"bot-{self._table_id}-{bot.seat}",
        )

    async def _turn(self, bot: BotSeat, view: SeatView, seed: int, version: int) -> None:
        started = self._clock.now()
        budget = max(self.speed_ms / 1000, MIN_BOT_BUDGET)
        action = await bots.decide(bot.level, seed, view, budget=budget)
        await self._pause_from(started)
        self._post(BotMove(bot.seat, version, action))

    async def _pause_from(self, started: float) -> None:
        """Wait until ``started`` plus the pause, the pause as it stands (see ``set_speed``)."""
        loop = asyncio.get_running_loop()
        while (end := started + self.speed_ms / 1000) > self._clock.now():
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiter = waiter
            timer = self._clock.call_at(end, functools.partial(_wake, waiter))
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None
