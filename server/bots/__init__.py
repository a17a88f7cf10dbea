"""Computer players.  A bot sees exactly its seat's view and nothing else.

``make_bot(level, seed)`` builds a bot whose ``choose(view)`` answers at once;
``decide(level, seed, view, budget)`` is what a room awaits: it never raises,
runs strong bots in worker processes, and falls back to a legal play when a
bot fails or overruns.  Call ``shutdown()`` when the server stops.
"""

from __future__ import annotations

import asyncio
import logging
import time

import msgspec

from ..engine import Pass, Play, SeatView
from ..engine.players import counts_of_codes, counts_string
from .base import Bot, BotAction, fallback_action
from .levels import EasyBot, NormalBot
from .meter import METER, report_to
from .pool import decode_action, get_pool, shutdown, think
from .strong import DEFAULT_BUDGET, StrongBot

__all__ = [
    "DEFAULT_BUDGET",
    "GRACE_SECONDS",
    "INLINE_LEVELS",
    "LEVELS",
    "Bot",
    "BotAction",
    "decide",
    "decide_now",
    "fallback_action",
    "is_legal",
    "make_bot",
    "report_to",
    "shutdown",
    "think_time",
]

LEVELS = ("easy", "normal", "strong")
# How long past its budget a worker may take (process start-up on first use
# included) before the table gets a fallback play instead.
GRACE_SECONDS = 2.0
log = logging.getLogger(__name__)


def make_bot(level: str, seed: int, budget: float = DEFAULT_BUDGET) -> Bot:
    """A bot of ``level``; ``budget`` is the strong bot's thinking time per decision."""
    if level == "easy":
        return EasyBot(seed)
    if level == "normal":
        return NormalBot(seed)
    if level == "strong":
        return StrongBot(seed, budget)
    raise ValueError(f"unknown bot level {level!r}")


def is_legal(view: SeatView, action: BotAction) -> bool:
    """Whether ``action`` is one the view allows (checked against the view's legal list)."""
    if action.seat != view.seat or view.turn != view.seat:
        return False
    if isinstance(action, Pass):
        return view.can_pass
    if not set(action.cards) <= set(view.hand) or len(set(action.cards)) != len(action.cards):
        return False
    if view.must_include is not None and view.must_include not in action.cards:
        return False
    ranks = counts_string(counts_of_codes(action.cards))
    return ranks in view.legal


# Levels that decide in well under a millisecond, on the event loop.
INLINE_LEVELS = frozenset({"easy", "normal"})


async def decide(level: str, seed: int, view: SeatView, budget: float) -> BotAction:
    """The bot's action for ``view``; never raises and never blocks the loop for long.

    Easy and normal bots answer in well under a millisecond, so they run inline
    (``decide_now``).  A strong bot thinks in a worker process for at most
    ``DEFAULT_BUDGET`` seconds (less when ``budget`` is shorter).  A bot that
    fails, overruns ``budget`` plus ``GRACE_SECONDS``, or answers with an
    illegal action is replaced by a legal fallback.
    """
    if level != "strong":
        return decide_now(level, seed, view)
    started = time.perf_counter()
    asked_at = time.monotonic()
    try:
        think_for = think_time(budget)
        loop = asyncio.get_running_loop()
        view_bytes = msgspec.msgpack.encode(view)
        thinking = loop.run_in_executor(
            get_pool(), think, level, seed, view_bytes, think_for, asked_at
        )
        async with asyncio.timeout(budget + GRACE_SECONDS):
            data = await thinking
        action: Play | Pass = decode_action(data)
    except Exception:
        log.exception("bot %s failed on seat %d; playing a fallback", level, view.seat)
        return _fallen_back(level, seed, view, started)
    return _checked(level, seed, view, action, started)


def think_time(budget: float) -> float:
    """How long a strong bot searches when the table allows ``budget`` seconds: at most
    ``DEFAULT_BUDGET`` (a slow table must not buy a longer search: the pool is shared),
    four fifths of a shorter budget (the rest is the round trip), never under 10 ms."""
    return min(DEFAULT_BUDGET, max(0.01, 0.8 * budget))


def decide_now(level: str, seed: int, view: SeatView) -> BotAction:
    """An easy or normal bot's action for ``view``, computed at once; never raises (a
    failing or illegal answer is replaced by a legal fallback)."""
    started = time.perf_counter()
    try:
        with METER.thinking():
            action = make_bot(level, seed).choose(view)
    except Exception:
        log.exception("bot %s failed on seat %d; playing a fallback", level, view.seat)
        return _fallen_back(level, seed, view, started)
    return _checked(level, seed, view, action, started)


def _checked(level: str, seed: int, view: SeatView, action: BotAction, started: float) -> BotAction:
    """``action`` if the view allows it, else a legal fallback."""
    try:
        if is_legal(view, action):
            METER.decided(level, time.perf_counter() - started)
            return action
        log.error("bot %s answered %r, which is illegal; playing a fallback", level, action)
    except Exception:
        log.exception("bot %s answered %r, which cannot be checked", level, action)
    return _fallen_back(level, seed, view, started)


def _fallen_back(level: str, seed: int, view: SeatView, started: float) -> BotAction:
    with METER.thinking():
        action = _fallback(level, seed, view)
    METER.decided(level, time.perf_counter() - started)
    return action


def _fallback(level: str, seed: int, view: SeatView) -> BotAction:
    """A legal action when a bot failed: a strong seat plays as normal, not as the hint.

    The strong pool's usual failure is overload (many tables thinking at once);
    the table should then get the cheap heuristic, not a much weaker first hint.
    """
    if level == "strong":
        METER.fell_back()
        try:
            action = NormalBot(seed).choose(view)
            if is_legal(view, action):
                return action
        except Exception:
            log.exception("normal fallback failed on seat %d", view.seat)
    return fallback_action(view)
