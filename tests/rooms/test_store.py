"""The Redis table store: versioned appends that can never fork a table."""

from __future__ import annotations

import msgspec
import pytest
import redis.asyncio as aioredis
from room_helpers import STORE_TTL_SECONDS, lease_of, log_of, new_table

from server.engine import NextDeal, Pass, Play
from server.rooms.clock import TurnClock
from server.rooms.log import BotSpeed
from server.rooms.store import StoreError, TableGone, TableStore, VersionConflict


async def test_append_bumps_the_version_and_keeps_order(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id)
    assert await store.append(lease, 0, [Play(seat=0, cards=["3S"])]) == 1
    assert await store.append(lease, 1, [Pass(seat=1)]) == 2
    assert await store.append(lease, 2, [BotSpeed(ms=0, seat=0)]) == 3
    assert await log_of(store, meta.id) == [
        Play(seat=0, cards=["3S"]),
        Pass(seat=1),
        BotSpeed(ms=0, seat=0),
    ]


async def test_append_against_another_version_writes_nothing(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id)
    await store.append(lease, 0, [Play(seat=0, cards=["3S"])])
    with pytest.raises(VersionConflict) as conflict:
        await store.append(lease, 0, [Play(seat=0, cards=["4S"])])
    assert (conflict.value.expected, conflict.value.stored) == (0, 1)
    with pytest.raises(VersionConflict):
        await store.append(lease, 5, [Pass(seat=1)])
    assert await log_of(store, meta.id) == [Play(seat=0, cards=["3S"])]


async def test_several_entries_land_in_one_append_in_order_or_none_of_them_does(
    store: TableStore,
) -> None:
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id)
    moves = [Play(seat=0, cards=["3S"]), Pass(seat=1), Pass(seat=2)]
    assert await store.append(lease, 0, moves) == 3
    with pytest.raises(VersionConflict):
        await store.append(lease, 2, [Play(seat=0, cards=["4S"]), Pass(seat=1)])
    assert await log_of(store, meta.id) == moves


async def test_append_to_an_expired_table_is_refused(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id)
    await redis_client.delete(f"pdk:{{{meta.id}}}:meta")
    with pytest.raises(TableGone):
        await store.append(lease, 0, [NextDeal()])
    assert await redis_client.llen(f"pdk:{{{meta.id}}}:log") == 0


async def test_each_append_refreshes_the_expiry_of_both_keys(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id)
    await redis_client.expire(f"pdk:{{{meta.id}}}:meta", 100)
    await store.append(lease, 0, [Play(seat=0, cards=["3S"])])
    assert await redis_client.ttl(f"pdk:{{{meta.id}}}:meta") > 100
    assert 100 < await redis_client.ttl(f"pdk:{{{meta.id}}}:log") <= STORE_TTL_SECONDS


async def test_load_returns_meta_and_log_and_none_for_unknown_tables(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=9, deals=5, humans=2, bots=["easy"])
    lease = await lease_of(store, meta.id)
    await store.append(lease, 0, [Play(seat=0, cards=["3S"])])
    loaded = await store.load(meta.id)
    assert loaded == (meta, [Play(seat=0, cards=["3S"])])
    assert await store.load("NoSuchTable0000") is None
    assert await store.load_meta("NoSuchTable0000") is None


async def test_redis_holds_token_hashes_never_the_tokens(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    meta, seats = await new_table(store, humans=3, bots=[])
    raw = await redis_client.get(f"pdk:{{{meta.id}}}:meta")
    assert raw is not None
    for seat in seats:
        assert seat.token.encode() not in raw
    assert all(s.token_hash is not None for s in meta.seats)


async def test_an_entry_and_the_meta_it_changed_are_written_together(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=1, humans=2, bots=["easy"])
    lease = await lease_of(store, meta.id)
    changed = msgspec.structs.replace(meta, clock=TurnClock(seat=1, version=1, deadline=123.5))
    assert await store.append(lease, 0, [Play(seat=0, cards=["3S"])], changed) == 1
    assert await store.load(meta.id) == (changed, [Play(seat=0, cards=["3S"])])


async def test_a_meta_change_against_another_version_writes_nothing(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id)
    await store.append(lease, 0, [Play(seat=0, cards=["3S"])])
    changed = msgspec.structs.replace(meta, turn_seconds=60)
    with pytest.raises(VersionConflict):
        await store.save_meta(lease, 0, changed)
    with pytest.raises(VersionConflict):
        await store.append(lease, 0, [Pass(seat=1)], changed)
    assert await store.load_meta(meta.id) == meta
    await store.save_meta(lease, 1, changed)
    assert await store.load_meta(meta.id) == changed
    assert len(await log_of(store, meta.id)) == 1


async def test_a_meta_stored_before_seat_state_existed_still_loads(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    meta, _ = await new_table(store, seed=1)
    old = msgspec.json.decode(msgspec.json.encode(meta))
    for field in ("turn_seconds", "grace_seconds", "standin_level", "clock", "watch_hash"):
        del old[field]
    for seat in old["seats"]:
        del seat["standins"], seat["joined"]
    await redis_client.set(f"pdk:{{{meta.id}}}:meta", msgspec.json.encode(old))
    assert await store.load_meta(meta.id) == meta


async def test_loading_a_table_refreshes_the_expiry_of_both_keys(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    meta, _ = await new_table(store, seed=1)
    await store.append(await lease_of(store, meta.id), 0, [Play(seat=0, cards=["3S"])])
    keys = [f"pdk:{{{meta.id}}}:{role}" for role in ("meta", "log", "fence")]
    for key in keys:
        await redis_client.expire(key, 100)
    assert await store.load(meta.id) is not None
    for key in keys:
        assert 100 < await redis_client.ttl(key) <= STORE_TTL_SECONDS


async def test_creating_a_table_whose_id_exists_is_refused_and_keeps_the_first(
    store: TableStore,
) -> None:
    meta, _ = await new_table(store, seed=1)
    other = msgspec.structs.replace(meta, seed=2)
    with pytest.raises(StoreError, match="already exists"):
        await store.create(other)
    assert await store.load_meta(meta.id) == meta
