"""Computer players.  A bot sees exactly its seat's view and nothing else."""

from __future__ import annotations

import asyncio
import logging

from ..engine import SeatView
from .base import Bot, BotAction, fallback_action
from .levels import EasyBot, NormalBot

__all__ = ["DEFAULT_BUDGET", "LEVELS", "Bot", "BotAction", "decide", "fallback_action", "make_bot"]

LEVELS = ("easy", "normal", "strong")
log = logging.getLogger(__name__)


DEFAULT_BUDGET = 0.3


def make_bot(level: str, seed: int, budget: float = DEFAULT_BUDGET) -> Bot:
    if level == "easy":
        return EasyBot(seed)
    if level == "normal":
        return NormalBot(seed)
    if level == "strong":
        return NormalBot(seed)
    raise ValueError(f"unknown bot level {level!r}")


async def decide(level: str, seed: int, view: SeatView, budget: float) -> BotAction:
    """The bot's action for ``view``; never raises and never blocks the loop for long.

    A bot that fails or overruns ``budget`` seconds is replaced by a legal fallback.
    """
    try:
        bot = make_bot(level, seed)
        return await asyncio.wait_for(asyncio.to_thread(bot.choose, view), timeout=budget)
    except Exception:
        log.exception("bot %s failed on seat %d; playing a fallback", level, view.seat)
        return fallback_action(view)
