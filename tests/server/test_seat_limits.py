"""A seat's budget across processes and its flood back-off (server.seat_limits): two
``SeatLimits`` on one real Redis stand for two server processes; the clock is injected."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from server.budgets import SharedBuckets
from server.seat_limits import FLOOD_BACKOFF_SECONDS, FloodBackoff, SeatLimits


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def clients(redis_url: str) -> AsyncIterator[list[aioredis.Redis]]:
    made = [aioredis.Redis.from_url(redis_url) for _ in range(2)]
    yield made
    for client in made:
        await client.aclose()


def limits(client: aioredis.Redis, clock: Clock, rate: float = 5, burst: int = 10) -> SeatLimits:
    return SeatLimits(client, rate, burst, clock=clock, buckets=SharedBuckets(client, clock=clock))


async def frames(limiter: SeatLimits, key: str, count: int) -> int:
    """Send ``count`` frames one by one, letting refills land in between; how many passed."""
    passed = 0
    for _ in range(count):
        passed += limiter.allow(key)
        await limiter.settled()
    return passed


async def test_a_seat_on_two_processes_gets_one_budget_not_two(
    clients: list[aioredis.Redis],
) -> None:
    clock = Clock()
    a, b = limits(clients[0], clock), limits(clients[1], clock)
    key = SeatLimits.seat_key("tbl001", 0)
    await a.prime(key)
    await b.prime(key)
    passed = await frames(a, key, 30) + await frames(b, key, 30)
    assert passed == 10
    # A second later both together got the rate once more (plus the one frame each
    # may spend on credit once Redis said a token is back).
    clock.now += 1
    passed = await frames(a, key, 30) + await frames(b, key, 30)
    assert 5 <= passed <= 5 + 2


async def test_a_burst_read_in_one_go_is_judged_on_the_batch_held(
    clients: list[aioredis.Redis],
) -> None:
    clock = Clock()
    a = limits(clients[0], clock)
    key = SeatLimits.seat_key("tbl002", 1)
    await a.prime(key)
    assert a.held(key) == 10
    # No refill can land between frames taken synchronously: the burst is what is held.
    assert sum(a.allow(key) for _ in range(30)) == 10
    await a.settled()


async def test_refused_frames_cost_no_redis_call(
    clients: list[aioredis.Redis], redis_url: str
) -> None:
    clock = Clock()
    a = limits(clients[0], clock)
    key = SeatLimits.seat_key("tbl003", 0)
    await a.prime(key)
    await frames(a, key, 12)  # the burst, and the refill that finds the bucket empty
    await clients[1].config_resetstat()
    assert await frames(a, key, 200) == 0
    stats = await clients[1].info("commandstats")
    assert "cmdstat_evalsha" not in stats
    assert "cmdstat_eval" not in stats


async def test_without_redis_each_process_falls_back_to_its_own_bucket(tmp_path: Path) -> None:
    gone = aioredis.Redis.from_url(f"unix://{tmp_path}/no-redis.sock")
    try:
        a = SeatLimits(gone, 5, 10, clock=Clock())
        key = SeatLimits.seat_key("tbl004", 0)
        await a.prime(key)  # fails quietly: the local bucket judges
        assert sum(a.allow(key) for _ in range(30)) == 10
    finally:
        await gone.aclose()


async def test_a_seat_that_floods_waits_longer_each_time_on_every_process(
    clients: list[aioredis.Redis],
) -> None:
    clock = Clock()
    a, b = limits(clients[0], clock), limits(clients[1], clock)
    await b.admit("tbl005", 2)  # no flood yet: it may join
    a.flooded("tbl005", 2)
    await a.settled()
    with pytest.raises(FloodBackoff) as first:
        await b.admit("tbl005", 2)
    assert first.value.reason == "flood_backoff"
    assert 1 <= first.value.retry_after <= FLOOD_BACKOFF_SECONDS
    a.flooded("tbl005", 2)
    await a.settled()
    wait_ms = await clients[1].pttl("pdk:{tbl005}:budget:flood-wait:2")
    assert FLOOD_BACKOFF_SECONDS * 1000 < wait_ms <= 2 * FLOOD_BACKOFF_SECONDS * 1000
    # Another seat of the table is not held back.
    await b.admit("tbl005", 1)
