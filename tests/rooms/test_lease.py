"""Table ownership in the store: leases, fencing numbers that only grow, fenced writes."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot
from room_helpers import lease_of, log_of, new_table

from server.engine import Pass, Play
from server.rooms.store import Holder, Lease, LeaseLost, TableStore


async def test_the_first_process_takes_a_table_and_others_see_it_as_the_holder(
    store: TableStore,
) -> None:
    meta, _ = await new_table(store, seed=1)
    first = await store.acquire(meta.id, "proc-a", 5000)
    assert first == Lease(meta.id, "proc-a", 1)
    assert await store.acquire(meta.id, "proc-b", 5000) == Holder("proc-a", 1)
    assert await store.holder(meta.id) == Holder("proc-a", 1)


async def test_an_unknown_table_cannot_be_taken(store: TableStore) -> None:
    assert await store.acquire("NoSuchTable0000", "proc-a", 5000) is None


async def test_every_takeover_gets_a_larger_fencing_number(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=1)
    fences = []
    for owner in ("a", "b", "a", "c"):
        lease = await lease_of(store, meta.id, owner)
        fences.append(lease.fence)
        await store.release(lease)
    assert fences == [1, 2, 3, 4]


async def test_an_expired_lease_lets_another_process_in_and_fences_the_old_one_out(
    store: TableStore,
) -> None:
    meta, _ = await new_table(store, seed=1)
    old = await store.acquire(meta.id, "paused", 200)
    assert isinstance(old, Lease)
    await asyncio.sleep(0.3)
    new = await store.acquire(meta.id, "successor", 5000)
    assert isinstance(new, Lease)
    assert new.fence > old.fence
    with pytest.raises(LeaseLost):
        await store.append(old, 0, [Play(seat=0, cards=["3S"])])
    with pytest.raises(LeaseLost):
        await store.renew(old, 5000)
    await store.release(old)  # a no-op: it must not free the successor's lease
    assert await store.holder(meta.id) == Holder("successor", new.fence)
    assert await log_of(store, meta.id) == []
    assert await store.append(new, 0, [Pass(seat=0)]) == 1


async def test_an_owner_keeps_writing_after_its_lease_expired_if_nobody_took_over(
    store: TableStore,
) -> None:
    # Ownership is the fencing number; the expiry only lets others in.
    meta, _ = await new_table(store, seed=1)
    lease = await store.acquire(meta.id, "slow", 100)
    assert isinstance(lease, Lease)
    await asyncio.sleep(0.2)
    assert await store.holder(meta.id) is None
    assert await store.append(lease, 0, [Pass(seat=0)]) == 1
    await store.renew(lease, 5000)
    assert await store.holder(meta.id) == Holder("slow", lease.fence)


async def test_release_lets_the_next_process_take_the_table_at_once(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id, "leaving")
    await store.release(lease)
    assert await store.holder(meta.id) is None
    assert isinstance(await store.acquire(meta.id, "next", 5000), Lease)


async def test_every_key_of_a_table_lives_in_one_cluster_slot(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id)
    await store.append(lease, 0, [Pass(seat=0)])
    keys = await redis_client.keys(f"*{meta.id}*")
    assert {k.decode().rsplit(":", 1)[1] for k in keys} == {"meta", "log", "fence", "lease"}
    assert len({key_slot(k) for k in keys}) == 1


async def test_the_holders_of_many_tables_are_read_in_one_call(store: TableStore) -> None:
    held, free = (await new_table(store, seed=1))[0], (await new_table(store, seed=2))[0]
    lease = await lease_of(store, held.id, "proc-a")
    assert await store.holders([held.id, free.id, "NoSuchTable0000"]) == [
        Holder("proc-a", lease.fence),
        None,
        None,
    ]


@pytest.mark.parametrize("together", [True, False])
async def test_renewing_many_leases_extends_the_live_ones_and_names_each_failure(
    store: TableStore, redis_client: aioredis.Redis, together: bool
) -> None:
    metas = [(await new_table(store, seed=i))[0] for i in range(6)]
    leases = [await store.acquire(m.id, "proc-a", 300) for m in metas]
    assert all(isinstance(lease, Lease) for lease in leases)
    live = [lease for lease in leases if isinstance(lease, Lease)]
    await store.release(live[2])
    await lease_of(store, metas[2].id, owner="proc-b")  # taken over meanwhile
    await redis_client.delete(*[k async for k in redis_client.scan_iter(f"*{metas[4].id}*")])
    if not together:  # as on Redis Cluster: one call each, no shared pipeline
        assert store._batch is not None
        await store._batch.aclose()
        store._batch = None
    results = await store.renew_all(live, 5000)
    assert [type(r).__name__ for r in results] == [
        "NoneType", "NoneType", "LeaseLost", "NoneType", "LeaseLost", "NoneType"
    ]  # fmt: skip
    await asyncio.sleep(0.4)  # past the 300 ms the leases were taken for
    for i in (0, 1, 3, 5):
        assert await store.holder(metas[i].id) == Holder("proc-a", live[i].fence)


async def test_a_lease_is_taken_and_renewed_for_milliseconds_not_seconds(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    meta, _ = await new_table(store, seed=1)
    key = f"pdk:{{{meta.id}}}:lease"
    lease = await store.acquire(meta.id, "proc-a", 60_000)
    assert isinstance(lease, Lease)
    # A lease read in seconds would last a thousand times longer: an owner that died
    # would keep its table for hours instead of seconds.
    assert 30_000 < await redis_client.pttl(key) <= 60_000
    await store.renew(lease, 40_000)
    assert 20_000 < await redis_client.pttl(key) <= 40_000
    assert await store.renew_all([lease], 50_000) == [None]
    assert 25_000 < await redis_client.pttl(key) <= 50_000
