"""The registry's leases: every room keeps its table, renewed a group at a time."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from room_helpers import (
    GUARD_SECONDS,
    STORE_TTL_SECONDS,
    FakeClock,
    Socket,
    new_table,
    seed_where_leader_is,
    take_over,
)

from server.protocol import CloseCode
from server.rooms.registry import RENEWAL_GROUPS, Registry, TableBusy
from server.rooms.room import Room
from server.rooms.store import Holder, Lease, TableStore

# Short, so that a test sees many thirds of it go by.
LEASE_SECONDS = 0.6


class RenewalLog(TableStore):
    """The real store, noting the tables of each renewal call."""

    def __init__(self, redis: aioredis.Redis) -> None:
        super().__init__(redis, STORE_TTL_SECONDS)
        self.rounds: list[list[str]] = []

    async def renew_all(self, leases: list[Lease], lease_ms: int) -> list[Exception | None]:
        self.rounds.append([lease.table_id for lease in leases])
        return await super().renew_all(leases, lease_ms)


@pytest.fixture
async def logged_store(redis_client: aioredis.Redis) -> AsyncIterator[RenewalLog]:
    store = RenewalLog(redis_client)
    yield store
    await store.aclose()


@pytest.fixture
async def registry(logged_store: RenewalLog) -> AsyncIterator[Registry]:
    reg = Registry(logged_store, idle_seconds=60, lease_seconds=LEASE_SECONDS)
    yield reg
    await reg.close()


async def quiet_tables(store: TableStore, count: int) -> list[str]:
    """Tables of three people and no bots: nothing is ever written while nobody plays."""
    tables = [
        await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
        for _ in range(count)
    ]
    return [meta.id for meta, _ in tables]


async def test_a_room_that_writes_nothing_keeps_its_table_for_many_leases(
    logged_store: RenewalLog, registry: Registry
) -> None:
    (table_id,) = await quiet_tables(logged_store, 1)
    room = await registry.room(table_id)
    assert room is not None
    await asyncio.sleep(4 * LEASE_SECONDS)
    assert await logged_store.holder(table_id) == Holder(registry.proc, room.lease.fence)
    other = Registry(logged_store, lease_seconds=LEASE_SECONDS)
    try:
        with pytest.raises(TableBusy):
            await other.room(table_id)
    finally:
        await other.close()


async def test_leases_are_renewed_a_group_at_a_time_each_once_per_third_of_the_lease(
    logged_store: RenewalLog, registry: Registry
) -> None:
    count = 2 * RENEWAL_GROUPS
    table_ids = await quiet_tables(logged_store, count)
    for table_id in table_ids:
        assert await registry.room(table_id) is not None
    logged_store.rounds.clear()
    await asyncio.sleep(4 * LEASE_SECONDS)  # 12 thirds
    # No call renews more than its share, and so no burst holds every table up.
    assert max(len(tables) for tables in logged_store.rounds) == count // RENEWAL_GROUPS
    renewals = Counter(t for tables in logged_store.rounds for t in tables)
    assert set(renewals) == set(table_ids)
    assert all(10 <= n <= 13 for n in renewals.values()), renewals


async def test_a_closed_room_is_renewed_no_more_and_leaves_its_renewal_group(
    logged_store: RenewalLog, registry: Registry
) -> None:
    first, second = await quiet_tables(logged_store, 2)
    closing = await registry.room(first)
    assert closing is not None
    assert await registry.room(second) is not None
    await closing.stop()
    await asyncio.sleep(0.1)  # its lease released, in the background
    logged_store.rounds.clear()
    await asyncio.sleep(2 * LEASE_SECONDS)
    renewed = {t for tables in logged_store.rounds for t in tables}
    assert renewed == {second}
    assert await logged_store.holder(first) is None
    # Nothing of it is kept: a process that has run many tables holds only its live ones.
    assert [t for group in registry._renewal_groups for t in group] == [second]


@pytest.fixture
def lease_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def stalling(store: TableStore, lease_clock: FakeClock) -> AsyncIterator[Registry]:
    """A registry whose leases run on ``lease_clock``: moving ``lease_clock.t`` by hand,
    without firing its timers, is a stall that no renewal has caught up with yet."""
    reg = Registry(store, idle_seconds=60, lease_seconds=3, lease_clock=lease_clock)
    yield reg
    await reg.close()


async def host_and_friend(registry: Registry, table_id: str) -> tuple[Room, Socket, Socket]:
    room = await registry.room(table_id)
    assert room is not None
    host, friend = Socket(0), Socket(1)
    await room.attach(host.conn)
    await room.attach(friend.conn)
    await host.state_where(lambda f: f["table"]["seats"][1]["connected"])
    assert host.frames.empty()
    return room, host, friend


async def test_an_owner_waking_up_after_a_takeover_tells_its_sockets_nothing_and_closes(
    store: TableStore, redis_client: aioredis.Redis, stalling: Registry, lease_clock: FakeClock
) -> None:
    (table_id,) = await quiet_tables(store, 1)
    room, host, friend = await host_and_friend(stalling, table_id)
    # The process stalls past its lease (SIGSTOP) and another one takes the table over.
    await take_over(redis_client, table_id)
    lease_clock.t += 4
    # Waking up, the friend's socket has gone: a leave writes nothing, yet is told to
    # every socket; that must not happen with the lease lost.
    room.detach(friend.conn)
    await asyncio.wait_for(room.wait_closed(), GUARD_SECONDS)
    assert host.frames.empty()
    assert host.conn.close_code == CloseCode.TABLE_UNAVAILABLE


async def test_an_owner_waking_up_with_its_lease_still_its_own_renews_it_and_goes_on(
    store: TableStore, stalling: Registry, lease_clock: FakeClock
) -> None:
    (table_id,) = await quiet_tables(store, 1)
    room, host, friend = await host_and_friend(stalling, table_id)
    lease_clock.t += 4
    room.detach(friend.conn)
    frame = await host.next("state")
    assert [s["connected"] for s in frame["table"]["seats"]] == [True, False, False]
    assert await store.holder(table_id) == Holder(stalling.proc, room.lease.fence)
    assert not room.closed
