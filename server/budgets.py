"""Rate budgets every server process shares: token buckets kept in Redis.

A budget is ``rate`` tokens a second, bursts of up to ``burst``.  Its bucket is
one Redis hash (``t``: tokens, ``at``: when they were counted, in ms) changed
by one Lua script, so every process on the same Redis takes from the same
bucket atomically: one seat on three processes gets the rate once, not three
times.  The script touches one key, so on Redis Cluster it runs in that key's
slot; a budget about a table names its key with the table's hash tag
(``table_key``) so it sits beside the table's own keys.

The bucket's time is Redis's own clock (``TIME``) unless a clock is injected
(tests): processes on hosts whose clocks disagree still refill one bucket at
one pace.  A bucket expires once it would be full again: a full bucket carries
no information, so keys cycled by an attacker do not pile up in Redis either.

``take`` takes tokens before they are spent (all or some, or nothing);
``charge`` books tokens already spent, into debt if need be (``server.seat_limits``
judges a frame at once and books it after).  Cost: one script call (one round
trip, microseconds of Redis CPU) per call; ``bench/ratelimit.py`` measures it.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple

from server.rooms.store import Redis

__all__ = ["Grant", "ScriptRunner", "SharedBuckets", "address_key", "global_key", "table_key"]

# Runs a registered script for keys and args: ``TableStore.run_script`` puts the call
# in the process's group commit (one pipelined write, one fsync, for every table's
# calls of an event-loop turn) instead of a round trip of its own on the pool.
ScriptRunner = Callable[[Any, Sequence[Any], Sequence[Any]], Awaitable[Any]]


def _call_alone(script: Any, keys: Sequence[Any], args: Sequence[Any]) -> Awaitable[Any]:
    result: Awaitable[Any] = script(keys=keys, args=args)
    return result


# Both scripts start here: ``rate`` and ``burst`` are set, the last ARGV is now in ms
# ('' for Redis's TIME); it leaves ``now``, and ``tokens`` refilled up to ``now`` (a
# fresh bucket is full) with ``at`` the time they were counted at.
_REFILL = """
local now
if ARGV[#ARGV] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[#ARGV])
end
local held = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(held[1])
local at = tonumber(held[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
-- A clock that went back refills nothing (and 'at' keeps the later time).
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
  at = now
end
"""

# KEYS[1]: the bucket.  ARGV: rate (tokens/s), burst, most tokens wanted, fewest
# accepted, now in ms ('' for Redis's TIME).  Takes min(wanted, whole tokens held)
# when at least ``fewest`` are there, else nothing.  Returns {granted, ms until
# ``fewest`` tokens will be there (0 when granted)}.
_TAKE = (
    """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local least = tonumber(ARGV[4])
"""
    + _REFILL
    + """
local granted = 0
if tokens >= least then
  granted = math.min(want, math.floor(tokens))
  tokens = tokens - granted
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
if granted > 0 then
  return {granted, 0}
end
return {0, math.ceil((least - tokens) * 1000 / rate)}
"""
)

# KEYS[1]: the bucket.  ARGV: rate, burst, cost, now in ms ('' for Redis's TIME).
# Takes ``cost`` tokens even when fewer are there (a debt, at most ten bursts deep:
# the spending was already allowed).  Returns the tokens left, in thousandths
# (negative: the debt).
_CHARGE = (
    """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
"""
    + _REFILL
    + """
tokens = math.max(tokens - cost, -10 * burst)
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return math.floor(tokens * 1000)
"""
)

# Keys longer than this are cut: a subject (an address) comes from the network.
_MAX_SUBJECT = 100


class Grant(NamedTuple):
    """What a ``take`` got: ``granted`` tokens (0: refused), and when refused, the
    seconds until the fewest tokens asked for will be there."""

    granted: int
    retry_after: float


def global_key(name: str) -> str:
    """The key of a budget the whole server shares (``name``: what it limits)."""
    return f"pdk:budget:{name}"


def address_key(name: str, address: str) -> str:
    """The key of a client address's budget for ``name``."""
    return f"pdk:budget:{name}:{address[:_MAX_SUBJECT]}"


def table_key(table_id: str, name: str) -> str:
    """The key of a budget about one table: the table's hash tag puts it in the slot
    of the table's own keys (``server.rooms.store`` names them the same way)."""
    return f"pdk:{{{table_id}}}:budget:{name}"


class SharedBuckets:
    """Token buckets in Redis; ``take`` is the one call, any key, any budget."""

    def __init__(
        self,
        redis: Redis,
        *,
        clock: Callable[[], float] | None = None,
        run: ScriptRunner | None = None,
    ) -> None:
        # ``clock``: wall-clock seconds to count refills by; None uses Redis's own.
        self._script = redis.register_script(_TAKE)
        self._charge = redis.register_script(_CHARGE)
        self._clock = clock
        self._run = run or _call_alone

    async def take(
        self,
        key: str,
        rate: float,
        burst: int,
        *,
        want: int = 1,
        least: int | None = None,
    ) -> Grant:
        """Take ``want`` tokens from ``key``'s bucket (``rate`` a second, up to
        ``burst``), or as many as there are when ``least`` is given and at least that
        many are there; raises ``RedisError``/``OSError`` when Redis does not answer."""
        if rate <= 0 or burst < 1 or not 1 <= want <= burst:
            raise ValueError("a budget needs rate > 0, burst >= 1 and 1 <= want <= burst")
        fewest = want if least is None else max(1, min(least, want))
        args: list[Any] = [repr(float(rate)), burst, want, fewest, self._now()]
        granted, wait_ms = await self._run(self._script, [key], args)
        return Grant(int(granted), int(wait_ms) / 1000.0)

    async def charge(self, key: str, rate: float, burst: int, cost: int) -> float:
        """Take ``cost`` tokens already spent from ``key``'s bucket, into debt if need
        be; the tokens left (negative: the debt, which the rate repays)."""
        if rate <= 0 or burst < 1 or cost < 1:
            raise ValueError("a budget needs rate > 0, burst >= 1 and a cost >= 1")
        args: list[Any] = [repr(float(rate)), burst, cost, self._now()]
        return int(await self._run(self._charge, [key], args)) / 1000.0

    def _now(self) -> str:
        return "" if self._clock is None else str(math.floor(self._clock() * 1000))
