"""A seat's limits across every process: its action budget, and backing off floods.

Actions.  A seat may send ``rate`` frames a second, bursts of ``burst``, in all
(``--actions-per-second``), however many sockets and processes it uses: the
budget is a bucket in Redis (``server.budgets``, key in the table's slot).  A
frame is judged synchronously by the transport, so it cannot wait for Redis:
each process holds a few tokens of each seat it serves (its credit), taken from
the Redis bucket ``batch`` (by default a burst) at a time when the seat joins
and again whenever the credit runs down to half a batch.  A frame spends one token of credit, or is
refused when there is none.  The bound this gives:

- Never more than the budget, but for one token: a token is spent after it was
  taken from Redis, except one frame on credit once Redis said the bucket has
  refilled a token (so a seat back from a pause is not refused while the refill
  is on its way).  Over any T seconds a seat's frames accepted by all processes
  together are at most ``burst + rate * T``, plus one per process serving the
  seat at the same time for each such pause.
- Less only by what other processes hold: a process keeps at most 1.5 batches of
  a seat it serves, so a seat moving between processes may find up to that many
  tokens per other process parked there until they are swept.
- Cost: at most one script call per half batch of accepted frames per seat and
  process (``bench/ratelimit.py``: one per 8 at the full rate, per 19 at a
  frame a second, per 5 in a flood), and none per refused frame (after a
  refusal, or a refill that found the bucket nearly dry, Redis is asked again
  only once it will have tokens).

When Redis does not answer, each process falls back to its own bucket of the
same budget (the limit is then per process, as it was) until Redis answers.
Spectators' frames are each socket's own budget, per process (a spectator has
no seat to share).

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

from server.budgets import SharedBuckets, table_key
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


class _Credit:
    """Tokens of one seat this process holds, and whether more are on their way."""

    __slots__ = ("refilling", "tokens", "used_at", "wait_until")

    def __init__(self, now: float) -> None:
        self.tokens = 0
        self.refilling = False
        self.wait_until = 0.0
        self.used_at = now


class SeatLimits:
    """Each seat's action budget (shared through Redis) and flood back-off."""

    def __init__(
        self,
        redis: Redis,
        rate: float,
        burst: int,
        *,
        batch: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        buckets: SharedBuckets | None = None,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("seat limits need rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._redis = redis
        self._buckets = buckets or SharedBuckets(redis)
        # A whole burst by default: frames read in one go are judged before any refill
        # can land, so a smaller batch would cut the burst a seat is allowed.
        self._batch = batch if batch is not None else burst
        self._low = self._batch // 2
        self._clock = clock
        self._credits: dict[str, _Credit] = {}
        # Spectators, and seats while Redis does not answer.
        self._local = RateLimiter(rate, burst, clock=clock)
        self._degraded_until = 0.0
        self._flooded = redis.register_script(_FLOODED)
        # Refills in flight: kept so they are not collected mid-way, awaited in ``aclose``.
        self._tasks: set[asyncio.Task[Any]] = set()

    @staticmethod
    def seat_key(table_id: str, seat: int) -> str:
        """The key of a seat's action budget (in the table's cluster slot)."""
        return table_key(table_id, f"actions:{seat}")

    # --- actions -------------------------------------------------------------------

    async def prime(self, key: str) -> None:
        """Take a first batch for ``key`` (a seat joining), so its first frame need not
        wait for Redis; never raises (Redis down: the local bucket judges)."""
        credit = self._credit(key, self._clock())
        if credit.tokens <= self._low and not credit.refilling:
            credit.refilling = True
            await self._refill(key, credit)

    def allow(self, key: Hashable) -> bool:
        """Whether one more frame of ``key`` fits (a ``seat_key``; anything else is a
        per-process key, such as a spectator's socket).  Synchronous and cheap."""
        if not isinstance(key, str):
            return self._local.allow(key)
        now = self._clock()
        credit = self._credit(key, now)
        credit.used_at = now
        if now < self._degraded_until:
            return self._local.allow(key)
        if credit.tokens > 0:
            credit.tokens -= 1
            allowed = True
        elif credit.tokens == 0 and not credit.refilling and now >= credit.wait_until:
            # Redis said when the bucket would hold a token again, and that time has
            # come: this frame goes on credit, repaid out of the refill it starts.
            credit.tokens = -1
            allowed = True
        else:
            allowed = False
        if credit.tokens <= self._low and not credit.refilling and now >= credit.wait_until:
            credit.refilling = True
            task = asyncio.get_running_loop().create_task(self._refill(key, credit))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return allowed

    def held(self, key: str) -> int:
        """Tokens of ``key`` this process holds now (for tests and the bench)."""
        credit = self._credits.get(key)
        return 0 if credit is None else credit.tokens

    async def settled(self) -> None:
        """Wait until no refill is in flight (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _refill(self, key: str, credit: _Credit) -> None:
        try:
            grant = await self._buckets.take(key, self.rate, self.burst, want=self._batch, least=1)
        except (RedisError, OSError) as exc:
            if self._clock() >= self._degraded_until:
                log.warning("seat budgets: Redis does not answer (%s); limits per process", exc)
            self._degraded_until = self._clock() + _DEGRADED_SECONDS
            return
        finally:
            credit.refilling = False
        credit.tokens += grant.granted
        if grant.granted == 0:
            credit.wait_until = self._clock() + grant.retry_after
        elif grant.granted < self._low:
            # The bucket is nearly dry (a seat at or above its rate): ask again once half
            # a batch can be there, not at every frame.
            credit.wait_until = self._clock() + (self._low - grant.granted) / self.rate

    def _credit(self, key: str, now: float) -> _Credit:
        credit = self._credits.get(key)
        if credit is None:
            if len(self._credits) >= _SWEEP_AT:
                self._sweep(now)
            credit = self._credits[key] = _Credit(now)
        return credit

    def _sweep(self, now: float) -> None:
        # A seat unused for as long as its bucket takes to fill has nothing to lose
        # here but the tokens it holds (given up: the bound above counts them).
        idle = self.burst / self.rate
        stale = [
            key for key, c in self._credits.items() if not c.refilling and now - c.used_at >= idle
        ]
        for key in stale:
            del self._credits[key]

    # --- floods --------------------------------------------------------------------

    async def admit(self, table_id: str, seat: int) -> None:
        """Let a seat join: ``FloodBackoff`` while it is backing off after floods, else
        its first batch of tokens is taken (``prime``).  Redis down: no back-off (the
        join fails on the table anyway)."""
        try:
            left = int(await self._redis.pttl(table_key(table_id, f"flood-wait:{seat}")))
        except (RedisError, OSError):
            left = 0
        if left > 0:
            raise FloodBackoff(left / 1000.0)
        await self.prime(self.seat_key(table_id, seat))

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
