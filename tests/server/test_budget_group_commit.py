"""Shared budgets booked through the group commit (server.budgets with ``run``): the
same answers as calls of their own, and a turn's bookings of many seats in one write."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from server.budgets import SharedBuckets, table_key
from server.rooms.group_commit import GroupCommit
from server.rooms.store import TableStore
from server.seat_limits import FloodBackoff, SeatLimits


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_takes_and_charges_through_the_group_commit_answer_as_calls_of_their_own(
    client: aioredis.Redis,
) -> None:
    clock = Clock()
    batch = GroupCommit(client)
    try:
        batched = SharedBuckets(client, clock=clock, run=batch.run)
        alone = SharedBuckets(client, clock=clock)
        writes = []
        for buckets, name in ((batched, "a"), (alone, "b")):
            key = f"pdk:budget:grouped:{name}"
            granted = [(await buckets.take(key, 2, 4)).granted for _ in range(5)]
            assert granted == [1, 1, 1, 1, 0]
            assert (await buckets.take(key, 2, 4)).retry_after == 0.5
            assert await buckets.charge(key, 2, 4, 3) == -3.0
            writes.append(batch.pipelines)
        # Each of the seven calls of the batched buckets was a write of the group commit
        # (the first of each script twice: Redis had not seen it yet); none of the others.
        assert writes[0] >= 7
        assert writes[1] == writes[0]
    finally:
        await batch.aclose()


async def test_many_seats_bookings_of_one_turn_go_out_in_one_write(
    client: aioredis.Redis,
) -> None:
    store = TableStore(client, 3600)
    try:
        buckets = SharedBuckets(client, clock=Clock(), run=store.run_script)
        await buckets.charge(table_key("warm", "actions:0"), 5, 10, 1)  # connects
        keys = [table_key(f"t{n}", "actions:0") for n in range(50)]
        before = store._side_batch.pipelines if store._side_batch is not None else -1
        left = await asyncio.gather(*(buckets.charge(key, 5, 10, 1) for key in keys))
        assert left == [9.0] * 50
        assert store._side_batch is not None
        assert store._side_batch.pipelines == before + 1
    finally:
        await store.aclose()


async def test_a_flooded_seats_back_off_is_read_through_the_group_commit(
    client: aioredis.Redis,
) -> None:
    batch = GroupCommit(client)
    try:
        limits = SeatLimits(client, 5, 10, run=batch.run)
        await limits.admit("grouped-table", 1)  # no back-off yet
        read = batch.pipelines
        assert read >= 1
        limits.flooded("grouped-table", 1)
        await limits.settled()
        with pytest.raises(FloodBackoff):
            await limits.admit("grouped-table", 1)
        assert batch.pipelines > read
    finally:
        await batch.aclose()


async def test_a_tables_meta_is_read_through_the_group_commit(client: aioredis.Redis) -> None:
    store = TableStore(client, 3600)
    try:
        assert await store.load_meta("no-such-table") is None
        assert store._side_batch is not None
        assert store._side_batch.pipelines >= 1
    finally:
        await store.aclose()
