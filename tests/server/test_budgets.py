"""Token buckets in Redis (server.budgets): one real Redis, an injected clock."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from server.budgets import SharedBuckets, address_key, global_key, table_key


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_a_bucket_gives_its_burst_then_refuses_until_the_rate_refills_it(
    client: aioredis.Redis,
) -> None:
    clock = Clock()
    buckets = SharedBuckets(client, clock=clock)
    granted = [(await buckets.take("pdk:budget:t", 2, 4)).granted for _ in range(5)]
    assert granted == [1, 1, 1, 1, 0]
    refused = await buckets.take("pdk:budget:t", 2, 4)
    assert refused.retry_after == 0.5
    clock.now += 0.5
    assert (await buckets.take("pdk:budget:t", 2, 4)).granted == 1
    assert (await buckets.take("pdk:budget:t", 2, 4)).granted == 0
    # Never more than the burst, however long it rested.
    clock.now += 3600
    assert [(await buckets.take("pdk:budget:t", 2, 4)).granted for _ in range(5)] == [
        1,
        1,
        1,
        1,
        0,
    ]


async def test_two_processes_take_from_one_bucket(redis_url: str) -> None:
    clock = Clock()
    first, second = aioredis.Redis.from_url(redis_url), aioredis.Redis.from_url(redis_url)
    try:
        a, b = SharedBuckets(first, clock=clock), SharedBuckets(second, clock=clock)
        taken = 0
        for _ in range(10):
            taken += (await a.take("pdk:budget:shared", 1, 6)).granted
            taken += (await b.take("pdk:budget:shared", 1, 6)).granted
        assert taken == 6
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_batch_takes_what_is_there_when_at_least_the_fewest_are(
    client: aioredis.Redis,
) -> None:
    clock = Clock()
    buckets = SharedBuckets(client, clock=clock)
    assert (await buckets.take("pdk:budget:b", 1, 5, want=3, least=1)).granted == 3
    assert (await buckets.take("pdk:budget:b", 1, 5, want=3, least=1)).granted == 2
    empty = await buckets.take("pdk:budget:b", 1, 5, want=3, least=1)
    assert empty == (0, 1.0)
    # Without ``least``, all or nothing.
    clock.now += 2
    assert (await buckets.take("pdk:budget:b", 1, 5, want=3)).granted == 0
    assert (await buckets.take("pdk:budget:b", 1, 5, want=2)).granted == 2


async def test_a_bucket_expires_once_it_would_be_full_again(client: aioredis.Redis) -> None:
    buckets = SharedBuckets(client, clock=Clock())
    await buckets.take("pdk:budget:e", 10, 20, want=5)
    # 5 tokens at 10 a second refill in 500 ms; a second of margin.
    assert 1000 < await client.pttl("pdk:budget:e") <= 1500


async def test_redis_time_refills_when_no_clock_is_injected(client: aioredis.Redis) -> None:
    buckets = SharedBuckets(client)
    assert (await buckets.take("pdk:budget:r", 1000, 1)).granted == 1
    stamp = await client.hget("pdk:budget:r", "at")
    seconds, _ = await client.time()
    assert stamp is not None
    assert abs(int(stamp) / 1000 - seconds) < 5


async def test_bad_budgets_are_refused(client: aioredis.Redis) -> None:
    buckets = SharedBuckets(client)
    for rate, burst, want in ((0, 1, 1), (1, 0, 1), (1, 2, 3)):
        with pytest.raises(ValueError, match="budget"):
            await buckets.take("pdk:budget:x", rate, burst, want=want)


def test_a_table_budget_sits_in_the_table_slot_and_addresses_are_cut() -> None:
    assert key_slot(table_key("abcdef", "actions:0").encode()) == key_slot(b"pdk:{abcdef}:meta")
    assert global_key("tables") == "pdk:budget:tables"
    assert len(address_key("tables", "x" * 10_000)) < 130


async def test_a_charge_books_spending_into_debt_and_the_rate_repays_it(
    client: aioredis.Redis,
) -> None:
    clock = Clock()
    buckets = SharedBuckets(client, clock=clock)
    assert await buckets.charge("pdk:budget:c", 2, 4, 3) == 1
    assert await buckets.charge("pdk:budget:c", 2, 4, 3) == -2
    # Nothing can be taken while in debt; a second repays a debt of two at two a second.
    assert (await buckets.take("pdk:budget:c", 2, 4)).retry_after == 1.5
    clock.now += 1
    assert await buckets.charge("pdk:budget:c", 2, 4, 1) == -1
    # A debt never grows past ten bursts.
    assert await buckets.charge("pdk:budget:c", 2, 4, 1000) == -40
