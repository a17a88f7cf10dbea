"""The turn clock and the stand-in's timing: pure functions of a few facts and the time.

A human seat whose turn it is gets a clock of ``turn_seconds`` (0 = no clock).
When it runs out, or the seat has had no socket for ``grace_seconds`` during its
turn, a stand-in bot plays that one turn.  After ``AUTO_AFTER`` stand-in turns in
a row the seat is *on auto*: the stand-in plays each of its turns at once until
the human hands back (reconnects or says "I'm back").

Deadlines are wall-clock seconds (``time.time()``), not loop time: they are
stored with the table so another process, or this one after a restart, runs
the same clock on.  The functions here read no clock (callers pass ``now``); the
room reads one through ``WallClock``, which tests replace with a fake.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import msgspec

__all__ = [
    "AUTO_AFTER",
    "DEFAULT_GRACE_SECONDS",
    "DEFAULT_TURN_SECONDS",
    "GRACE_SECONDS_RANGE",
    "TURN_SECONDS_RANGE",
    "Due",
    "MonotonicClock",
    "StandinWhy",
    "SystemClock",
    "Timer",
    "TurnClock",
    "WallClock",
    "check_grace_seconds",
    "check_turn_seconds",
    "default_turn_seconds",
    "remaining_ms",
    "sleep_until",
    "standin_due",
    "start_clock",
]

# Stand-in turns in a row after which a seat stays on auto until its human is back.
AUTO_AFTER = 3
# With two or more humans seated a turn lasts this long unless the table says otherwise.
DEFAULT_TURN_SECONDS = 30
DEFAULT_GRACE_SECONDS = 15
TURN_SECONDS_RANGE = (5, 300)
GRACE_SECONDS_RANGE = (5, 300)


class TurnClock(msgspec.Struct, frozen=True):
    """The running clock of one turn, as stored with the table.

    ``version`` is the table version at which the turn began: a clock stored for
    another version belongs to a turn that is over and is ignored.
    """

    seat: int
    version: int
    deadline: float


class StandinWhy(StrEnum):
    """Why the stand-in plays a human seat's turn."""

    AUTO = "auto"  # the seat is on auto: play at once
    CLOCK = "clock"  # the turn clock ran out
    GRACE = "grace"  # no socket for grace_seconds


@dataclass(frozen=True, slots=True)
class Due:
    """When the stand-in plays the current turn (wall-clock seconds) and why."""

    at: float
    why: StandinWhy


def default_turn_seconds(humans: int) -> int:
    """No clock for one human against bots (nobody waits for them); 30 s among friends."""
    return 0 if humans <= 1 else DEFAULT_TURN_SECONDS


def check_turn_seconds(seconds: int) -> None:
    """Raise ``ValueError`` unless ``seconds`` is 0 (no clock) or in ``TURN_SECONDS_RANGE``."""
    low, high = TURN_SECONDS_RANGE
    if seconds != 0 and not low <= seconds <= high:
        raise ValueError(f"turn_seconds must be 0 (no clock) or {low}..{high}, not {seconds}")


def check_grace_seconds(seconds: int) -> None:
    """Raise ``ValueError`` unless ``seconds`` is in ``GRACE_SECONDS_RANGE``."""
    low, high = GRACE_SECONDS_RANGE
    if not low <= seconds <= high:
        raise ValueError(f"grace_seconds must be {low}..{high}, not {seconds}")


def start_clock(seat: int, version: int, turn_seconds: int, now: float) -> TurnClock | None:
    """The clock of a turn that starts now, or None when the table runs no clock."""
    if turn_seconds <= 0:
        return None
    return TurnClock(seat=seat, version=version, deadline=now + turn_seconds)


def remaining_ms(clock: TurnClock, now: float) -> int:
    """Milliseconds left on ``clock`` (never negative)."""
    return max(0, round((clock.deadline - now) * 1000))


def standin_due(
    *,
    on_auto: bool,
    clock: TurnClock | None,
    away_since: float | None,
    grace_seconds: float,
) -> Due | None:
    """When the stand-in must play the turn of a human seat, or None to wait for the human.

    ``away_since`` is when the seat lost its last socket (None while it has one, or
    when the table does not hand away turns of absent players).  The earliest
    reason wins; a seat on auto is played at once.
    """
    if on_auto:
        return Due(at=float("-inf"), why=StandinWhy.AUTO)
    candidates: list[Due] = []
    if clock is not None:
        candidates.append(Due(at=clock.deadline, why=StandinWhy.CLOCK))
    if away_since is not None:
        candidates.append(Due(at=away_since + grace_seconds, why=StandinWhy.GRACE))
    return min(candidates, key=lambda d: d.at, default=None)


class Timer(Protocol):
    """A scheduled callback that can still be called off."""

    def cancel(self) -> None:
        """Do not call it (a no-op once it ran)."""
        ...


class WallClock(Protocol):
    """The room's time: wall-clock seconds, and a callback at a wall-clock moment."""

    def now(self) -> float:
        """Wall-clock seconds since the epoch."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` at wall-clock ``when`` (soon, if that has passed)."""
        ...


class SystemClock:
    """``time.time`` and the running loop's timers."""

    def now(self) -> float:
        """``time.time()``."""
        return time.time()

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """A loop timer for the seconds left until ``when`` (none if it has passed)."""
        delay = max(0.0, when - time.time())
        return asyncio.get_running_loop().call_later(delay, callback)


class MonotonicClock:
    """The running loop's own time (monotonic seconds) and timers, in the ``WallClock``
    protocol: for what must not move when the wall clock is set (the leases' schedule)."""

    def now(self) -> float:
        """``loop.time()``."""
        return asyncio.get_running_loop().time()

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """A loop timer at ``when`` (loop time)."""
        return asyncio.get_running_loop().call_at(when, callback)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def sleep_until(clock: WallClock, when: float) -> None:
    """Return once ``clock`` reaches ``when`` (at once if it has)."""
    if clock.now() >= when:
        return
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    timer = clock.call_at(when, functools.partial(_wake, waiter))
    try:
        await waiter
    finally:
        timer.cancel()
