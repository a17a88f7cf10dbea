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
    """Send ``count`` frames one by one, letting bookings land in between; how many passed."""
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
    # Per process it would be a burst each (20); shared, one burst and the one frame
    # the other process lets through before its booking comes back in debt.
    passed = await frames(a, key, 30) + await frames(b, key, 30)
    assert passed == 10 + 1
    # Two seconds later the debt is repaid and both together get the rate once more
    # (plus one frame each before they learn of the new debt).
    clock.now += 2
    passed = await frames(a, key, 30) + await frames(b, key, 30)
    assert 2 * 5 - 1 <= passed <= 2 * 5 - 1 + 2


async def test_a_socket_that_sends_nothing_holds_nothing_back(
    clients: list[aioredis.Redis],
) -> None:
    clock = Clock()
    a, idle = limits(clients[0], clock), limits(clients[1], clock)
    key = SeatLimits.seat_key("tbl002", 1)
    assert idle.allow(SeatLimits.seat_key("tbl002", 2))  # another seat: not this one's
    await idle.settled()
    # A burst read in one go: judged before any booking lands, the whole burst passes.
    assert sum(a.allow(key) for _ in range(30)) == 10
    await a.settled()
    # ... and is booked: the shared bucket is empty.
    assert (await SharedBuckets(clients[1], clock=clock).take(key, 5, 10)).granted == 0


async def test_refused_frames_cost_no_redis_call(
    clients: list[aioredis.Redis], redis_url: str
) -> None:
    clock = Clock()
    a = limits(clients[0], clock)
    key = SeatLimits.seat_key("tbl003", 0)
    await frames(a, key, 12)  # the burst, booked
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
        assert await frames(a, key, 30) == 10  # bookings fail quietly: the local bucket judges
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
