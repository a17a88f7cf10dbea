"""What the shared budgets cost: a Redis token bucket's round trip, and a seat's frame.

On the embedded Redis (unix socket, in a temporary data dir, the server's own
configuration), it times:

- ``take``: one ``SharedBuckets.take`` (one Lua script call), awaited one at a
  time (the round trip a table creation pays twice), and many in flight at
  once (throughput), with Redis's own CPU per call from ``INFO commandstats``;
- ``allow``: ``SeatLimits.allow`` (what every seat frame pays: this process's
  bucket, and the booking queued) beside the per-process ``RateLimiter.allow``
  alone;
- booking calls per accepted frame of a seat acting at its full rate, at a
  human's pace and in a flood, with the clock injected (exact counts).

    python -m bench.ratelimit --calls 20000

A benchmark: it prints figures and asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import redis.asyncio as aioredis

from server.budgets import SharedBuckets
from server.ratelimit import RateLimiter
from server.redis_embedded import EmbeddedRedis
from server.seat_limits import SeatLimits


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class _CountingBuckets(SharedBuckets):
    """Counts script calls (each one round trip)."""

    calls = 0

    async def charge(self, key: str, rate: float, burst: int, cost: int) -> float:
        _CountingBuckets.calls += 1
        return await super().charge(key, rate, burst, cost)


async def _round_trips(client: aioredis.Redis, calls: int) -> dict[str, float]:
    buckets = SharedBuckets(client)
    await client.config_resetstat()
    samples = []
    for i in range(calls):
        started = time.perf_counter()
        await buckets.take(f"pdk:budget:bench:{i % 1000}", 1000, 2000)
        samples.append(time.perf_counter() - started)
    stats = await client.info("commandstats")
    per_call = stats.get("cmdstat_evalsha", {}).get("usec_per_call", 0.0)
    samples.sort()
    in_flight = 100
    started = time.perf_counter()
    for _ in range(max(1, calls // in_flight)):
        await asyncio.gather(
            *(buckets.take(f"pdk:budget:bench:{i}", 1000, 2000) for i in range(in_flight))
        )
    parallel = (time.perf_counter() - started) / (max(1, calls // in_flight) * in_flight)
    return {
        "take_p50_us": statistics.median(samples) * 1e6,
        "take_p99_us": samples[int(len(samples) * 0.99)] * 1e6,
        "take_100_in_flight_us_each": parallel * 1e6,
        "redis_cpu_us_per_take": float(per_call),
    }


async def _hot_path(client: aioredis.Redis, calls: int) -> dict[str, float]:
    # A budget no frame here exhausts; one booking is queued, the rest join it.
    limits = SeatLimits(client, 1e6, 10_000_000)
    key = SeatLimits.seat_key("benchtable", 0)
    started = time.perf_counter()
    for _ in range(calls):
        limits.allow(key)
    shared = (time.perf_counter() - started) / calls
    local = RateLimiter(1e6, 10_000_000)
    started = time.perf_counter()
    for _ in range(calls):
        local.allow(("benchtable", 0))
    per_process = (time.perf_counter() - started) / calls
    await limits.settled()
    return {"allow_shared_ns": shared * 1e9, "allow_per_process_ns": per_process * 1e9}


async def _calls_per_frame(client: aioredis.Redis, frames: int, pace: float) -> float:
    """Booking calls per accepted frame of a seat sending one frame every ``pace`` s
    at the default budget (10 a second, bursts of 20)."""
    clock = _Clock()
    buckets = _CountingBuckets(client, clock=clock)
    _CountingBuckets.calls = 0
    limits = SeatLimits(client, 10, 20, clock=clock, buckets=buckets)
    key = SeatLimits.seat_key(f"pace{pace}", 0)
    accepted = 0
    for _ in range(frames):
        accepted += limits.allow(key)
        await limits.settled()
        clock.now += pace
    return _CountingBuckets.calls / max(1, accepted)


async def _main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis") as server:
        client = aioredis.Redis.from_url(server.url)
        try:
            figures = await _round_trips(client, calls)
            figures |= await _hot_path(client, calls * 10)
            figures["calls_per_frame_at_full_rate"] = await _calls_per_frame(client, 2000, 0.1)
            figures["calls_per_frame_at_1_per_s"] = await _calls_per_frame(client, 500, 1.0)
            figures["calls_per_frame_flood_100_per_s"] = await _calls_per_frame(client, 5000, 0.01)
        finally:
            await client.aclose()
    for name, value in figures.items():
        print(f"{name:34} {value:10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000, help="script calls to time")
    args = parser.parse_args()
    asyncio.run(_main(args.calls))


if __name__ == "__main__":
    main()
