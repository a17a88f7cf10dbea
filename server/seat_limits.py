"""A seat's limits across every process: its action budget, and backing off floods.

Actions.  A seat may send ``rate`` frames a second, bursts of ``burst``, in all
(``--actions-per-second``), however many sockets and processes it uses: the
budget is a bucket in Redis (``server.budgets``, key in the table's slot).  A
frame is judged synchronously by the transport, so it cannot wait for Redis.
Each process judges a seat's frames with its own bucket of the same size (as
before budgets were shared), and books every frame it let through on the Redis
bucket afterwards (``charge``, one call in flight per seat, frames that arrive
meanwhile go in the next).  When the Redis bucket is in debt (other processes
spent the seat's budget too), the process refuses the seat's frames until the
rate has repaid the debt.  Nothing is held in advance, so a socket that sends
nothing (a second tab) costs the seat nothing.  The bound this gives:

- Over any T seconds a seat's frames accepted by all processes together are at
  most ``burst + rate * T`` plus what other processes let through before their
  own booking came back in debt: at most one burst each (frames read in one
  go, or faster than a booking's round trip), one frame each when frames come
  slower.  The debt is repaid before anything more is let through, so over time
  the seat gets the rate once, not once per process.
- Cost: at most one script call per accepted frame (fewer in bursts: frames
  arriving while a booking is in flight share the next one), none per refused
  frame.  ``bench/ratelimit.py`` measures it.

When Redis does not answer, each process's own bucket judges alone (the limit
is then per process, as it was) until Redis answers.  Spectators' frames are
each socket's own budget, per process (a spectator has no seat to share).

Floods.  A socket that keeps sending past its refusals is closed (1008).  Each
such close of a seat counts in Redis (``floods`` key in the table's slot, kept
``FLOOD_MEMORY_SECONDS`` after the last one), and the seat may not join again
for ``FLOOD_BACKOFF_SECONDS * 2**(floods - 1)`` seconds, at most
``FLOOD_BACKOFF_MAX_SECONDS``: reconnecting after each close no longer gets
round the limit.  A join during the back-off is refused with ``flood_backoff``
and the seconds to wait.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Hashable
from enum import StrEnum
from typing import Any

from redis.exceptions import RedisError

from server.budgets import ScriptRunner, SharedBuckets, table_key
from server.errors import ServerError
from server.ratelimit import RateLimiter
from server.rooms.store import Redis

__all__ = [
    "FLOOD_BACKOFF_CLOSE",
    "FLOOD_BACKOFF_MAX_SECONDS",
    "FLOOD_BACKOFF_SECONDS",
    "FLOOD_MEMORY_SECONDS",
    "FloodBackoff",
    "FloodReason",
    "SeatLimits",
]

log = logging.getLogger(__name__)

FLOOD_BACKOFF_SECONDS = 5
# The close code of a join refused for ``flood_backoff``: "too many", like a full gallery;
# clients retry it later (the error frame before it says when).
FLOOD_BACKOFF_CLOSE = 4429
FLOOD_BACKOFF_MAX_SECONDS = 15 * 60
# Floods are forgotten this long after a seat's last one.
FLOOD_MEMORY_SECONDS = 60 * 60

# Above this many seats held, idle ones are swept before another is added.
_SWEEP_AT = 10_000
# After Redis failed, the local buckets judge for this long before Redis is tried again.
_DEGRADED_SECONDS = 1.0

# KEYS: floods count, back-off marker.  ARGV: base ms, max ms, memory ms.
# Counts one more flood and starts its back-off; returns the back-off in ms.
_FLOODED = """
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local wait = math.min(tonumber(ARGV[2]), tonumber(ARGV[1]) * 2 ^ math.min(n - 1, 30))
redis.call('SET', KEYS[2], n, 'PX', math.floor(wait))
return math.floor(wait)
"""


# KEYS[1]: a back-off marker.  Its time to live in ms (negative: none).
_WAIT_LEFT = "return redis.call('PTTL', KEYS[1])"


class FloodReason(StrEnum):
    FLOOD_BACKOFF = "flood_backoff"


class FloodBackoff(ServerError[FloodReason]):
    """A seat that flooded may not join yet; ``retry_after`` seconds to wait."""

    def __init__(self, retry_after: float) -> None:
        wait = max(1, math.ceil(retry_after))
        super().__init__(
            FloodReason.FLOOD_BACKOFF,
            f"this seat flooded the server: join again in {wait}s",
        )
        self.retry_after = wait


class _Seat:
    """What this process knows of one seat's shared budget."""

    __slots__ = ("blocked_until", "booking", "unbooked", "used_at")

    def __init__(self, now: float) -> None:
        # Frames let through and not yet booked on the Redis bucket.
        self.unbooked = 0
        self.booking = False
        # The Redis bucket was in debt: nothing more until the rate has repaid it.
        self.blocked_until = 0.0
        self.used_at = now


class SeatLimits:
    """Each seat's action budget (shared through Redis) and flood back-off."""

    def __init__(
        self,
        redis: Redis,
        rate: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        buckets: SharedBuckets | None = None,
        run: ScriptRunner | None = None,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("seat limits need rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._redis = redis
        self._buckets = buckets or SharedBuckets(redis)
        self._clock = clock
        self._seats: dict[str, _Seat] = {}
        # This process's bucket of each seat (and each spectator's socket).
        self._local = RateLimiter(rate, burst, clock=clock)
        self._degraded_until = 0.0
        self._flooded = redis.register_script(_FLOODED)
        self._wait_left = redis.register_script(_WAIT_LEFT)
        # Where the join's back-off read goes (the group commit, from the app): a
        # thousand sockets joining at once must not queue for the connection pool.
        self._run = run
        # Bookings in flight: kept so they are not collected mid-way, awaited in ``settled``.
        self._tasks: set[asyncio.Task[Any]] = set()

    @staticmethod
    def seat_key(table_id: str, seat: int) -> str:
        """The key of a seat's action budget (in the table's cluster slot)."""
        return table_key(table_id, f"actions:{seat}")

    # --- actions -------------------------------------------------------------------

    def allow(self, key: Hashable) -> bool:
        """Whether one more frame of ``key`` fits (a ``seat_key``; anything else is a
        per-process key, such as a spectator's socket).  Synchronous and cheap."""
        if not isinstance(key, str):
            return self._local.allow(key)
        now = self._clock()
        seat = self._seats.get(key)
        if seat is None:
            if len(self._seats) >= _SWEEP_AT:
                self._sweep(now)
            seat = self._seats[key] = _Seat(now)
        seat.used_at = now
        if now < seat.blocked_until or not self._local.allow(key):
            return False
        if now < self._degraded_until:
            return True
        seat.unbooked += 1
        if not seat.booking:
            seat.booking = True
            task = asyncio.get_running_loop().create_task(self._book(key, seat))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return True

    async def settled(self) -> None:
        """Wait until no booking or flood count is in flight (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _book(self, key: str, seat: _Seat) -> None:
        try:
            while seat.unbooked:
                cost, seat.unbooked = seat.unbooked, 0
                left = await self._buckets.charge(key, self.rate, self.burst, cost)
                if left < 0:
                    seat.blocked_until = self._clock() - left / self.rate
        except (RedisError, OSError) as exc:
            if self._clock() >= self._degraded_until:
                log.warning("seat budgets: Redis does not answer (%s); limits per process", exc)
            self._degraded_until = self._clock() + _DEGRADED_SECONDS
            seat.unbooked = 0
        finally:
            seat.booking = False

    def _sweep(self, now: float) -> None:
        # A seat unused for as long as its bucket takes to fill carries nothing.
        idle = self.burst / self.rate
        stale = [
            key
            for key, seat in self._seats.items()
            if not seat.booking and now - seat.used_at >= idle and now >= seat.blocked_until
        ]
        for key in stale:
            del self._seats[key]

    # --- floods --------------------------------------------------------------------

    async def admit(self, table_id: str, seat: int) -> None:
        """Let a seat join, or ``FloodBackoff`` while it is backing off after floods.
        Redis down: no back-off (the join fails on the table anyway)."""
        try:
            key = table_key(table_id, f"flood-wait:{seat}")
            if self._run is not None:
                left = int(await self._run(self._wait_left, [key], []))
            else:
                left = int(await self._redis.pttl(key))
        except (RedisError, OSError):
            left = 0
        if left > 0:
            raise FloodBackoff(left / 1000.0)

    def flooded(self, table_id: str, seat: int) -> None:
        """Count a flood close of this seat and start its back-off (in the background:
        the socket's reader calls this synchronously)."""
        task = asyncio.get_running_loop().create_task(self._count_flood(table_id, seat))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _count_flood(self, table_id: str, seat: int) -> None:
        keys = [table_key(table_id, f"floods:{seat}"), table_key(table_id, f"flood-wait:{seat}")]
        args = [FLOOD_BACKOFF_SECONDS * 1000, FLOOD_BACKOFF_MAX_SECONDS * 1000]
        try:
            await self._flooded(keys=keys, args=[*args, FLOOD_MEMORY_SECONDS * 1000])
        except (RedisError, OSError) as exc:
            log.warning("cannot count a flood of table %s seat %d: %s", table_id, seat, exc)
