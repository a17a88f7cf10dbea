"""The registry's leases: every room keeps its table, renewed a group at a time, and a room
tells its sockets nothing once its lease may have run out until it has renewed it.

The leases run on an injected clock: the keeper renews when the test moves it, and
each renewal call is awaited as an event (``RenewalLog.calls``), so no outcome
depends on how fast the machine is.  Redis's own clock does not move with it: a
lease in Redis lasts its real length, which is a minute here.
"""

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
from server.rooms.registry import RENEWAL_GROUP_FILL, RENEWAL_GROUPS, Registry, TableBusy
from server.rooms.room import Room
from server.rooms.store import Holder, Lease, TableStore

LEASE_SECONDS = 60.0
# The keeper renews one group every STEP seconds of the lease clock.
STEP = LEASE_SECONDS / 3 / RENEWAL_GROUPS


class RenewalLog(TableStore):
    """The real store, noting the tables of each renewal call once Redis has answered it."""

    def __init__(self, redis: aioredis.Redis) -> None:
        super().__init__(redis, STORE_TTL_SECONDS)
        self.calls: asyncio.Queue[list[str]] = asyncio.Queue()

    async def renew_all(self, leases: list[Lease], lease_ms: int) -> list[Exception | None]:
        results = await super().renew_all(leases, lease_ms)
        self.calls.put_nowait([lease.table_id for lease in leases])
        return results

    async def next_calls(self, count: int) -> list[list[str]]:
        """The next ``count`` renewal calls, in order."""
        return [await asyncio.wait_for(self.calls.get(), GUARD_SECONDS) for _ in range(count)]


@pytest.fixture
async def logged_store(redis_client: aioredis.Redis) -> AsyncIterator[RenewalLog]:
    store = RenewalLog(redis_client)
    yield store
    await store.aclose()


@pytest.fixture
def lease_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def registry(logged_store: RenewalLog, lease_clock: FakeClock) -> AsyncIterator[Registry]:
    reg = Registry(
        logged_store, idle_seconds=60, lease_seconds=LEASE_SECONDS, lease_clock=lease_clock
    )
    yield reg
    await reg.close()


def steps(clock: FakeClock, count: int) -> None:
    """Move the lease clock on by ``count`` of the keeper's steps (and half of one more,
    so no renewal is due exactly at the end)."""
    clock.advance((count + 0.5) * STEP)


async def quiet_tables(store: TableStore, count: int) -> list[str]:
    """Tables of three people and no bots: nothing is ever written while nobody plays."""
    tables = [
        await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
        for _ in range(count)
    ]
    return [meta.id for meta, _ in tables]


async def test_a_room_that_writes_nothing_has_its_lease_renewed_every_third_of_it(
    logged_store: RenewalLog,
    registry: Registry,
    lease_clock: FakeClock,
    redis_client: aioredis.Redis,
) -> None:
    (table_id,) = await quiet_tables(logged_store, 1)
    room = await registry.room(table_id)
    assert room is not None
    key = f"pdk:{{{table_id}}}:lease"
    # Taken for the lease's length in milliseconds (read as seconds, an owner that died
    # would keep its table a thousand times longer).
    assert LEASE_SECONDS * 500 < await redis_client.pttl(key) <= LEASE_SECONDS * 1000
    await redis_client.pexpire(key, 5000)
    # Four leases: twelve thirds, and its group's turn comes once in each.
    steps(lease_clock, 12 * RENEWAL_GROUPS)
    assert await logged_store.next_calls(12) == [[table_id]] * 12
    assert logged_store.calls.empty()
    assert LEASE_SECONDS * 500 < await redis_client.pttl(key) <= LEASE_SECONDS * 1000
    assert await logged_store.holder(table_id) == Holder(registry.proc, room.lease.fence)
    other = Registry(logged_store, lease_seconds=LEASE_SECONDS)
    try:
        with pytest.raises(TableBusy):
            await other.room(table_id)
    finally:
        await other.close()


async def test_a_few_leases_are_renewed_in_one_call_per_third_of_the_lease(
    logged_store: RenewalLog, registry: Registry, lease_clock: FakeClock
) -> None:
    # Every process of a cluster pays its renewal calls, whatever its share of tables:
    # a few tables fill one group before another is used.
    table_ids = await quiet_tables(logged_store, 3)
    for table_id in table_ids:
        assert await registry.room(table_id) is not None
    steps(lease_clock, 6 * RENEWAL_GROUPS)  # 6 thirds
    calls = await logged_store.next_calls(6)
    assert [sorted(tables) for tables in calls] == [sorted(table_ids)] * 6
    assert logged_store.calls.empty()
    assert RENEWAL_GROUP_FILL > 3


async def test_leases_are_renewed_a_group_at_a_time_each_once_per_third_of_the_lease(
    logged_store: RenewalLog, lease_clock: FakeClock
) -> None:
    # One lease a group before the next is used (the default fills a group with 32: the
    # spreading is the same past 8 x 32 tables).
    registry = Registry(
        logged_store,
        idle_seconds=60,
        lease_seconds=LEASE_SECONDS,
        lease_clock=lease_clock,
        renewal_fill=1,
    )
    try:
        await renewed_group_by_group(logged_store, registry, lease_clock)
    finally:
        await registry.close()


async def renewed_group_by_group(
    logged_store: RenewalLog, registry: Registry, lease_clock: FakeClock
) -> None:
    count = 2 * RENEWAL_GROUPS
    table_ids = await quiet_tables(logged_store, count)
    for table_id in table_ids:
        assert await registry.room(table_id) is not None
    steps(lease_clock, 12 * RENEWAL_GROUPS)  # 12 thirds
    calls = await logged_store.next_calls(12 * RENEWAL_GROUPS)
    # No call renews more than its share, and so no burst holds every table up.
    assert [len(tables) for tables in calls] == [count // RENEWAL_GROUPS] * len(calls)
    renewals = Counter(t for tables in calls for t in tables)
    assert renewals == dict.fromkeys(table_ids, 12)
    assert logged_store.calls.empty()


async def test_a_closed_room_is_renewed_no_more_and_leaves_its_renewal_group(
    logged_store: RenewalLog, registry: Registry, lease_clock: FakeClock
) -> None:
    first, second = await quiet_tables(logged_store, 2)
    closing = await registry.room(first)
    assert closing is not None
    assert await registry.room(second) is not None
    await closing.stop()
    # Its release went out in the background; this one is a no-op after it.
    await logged_store.release(closing.lease)
    steps(lease_clock, 3 * RENEWAL_GROUPS)  # a whole lease: three turns of each group
    assert await logged_store.next_calls(3) == [[second]] * 3
    assert logged_store.calls.empty()
    assert await logged_store.holder(first) is None
    # Nothing of it is kept: a process that has run many tables holds only its live ones.
    assert [t for group in registry._renewal_groups for t in group] == [second]


# --- a stall past the lease ----------------------------------------------------------


async def host_and_friend(registry: Registry, table_id: str) -> tuple[Room, Socket, Socket]:
    room = await registry.room(table_id)
    assert room is not None
    host, friend = Socket(0), Socket(1)
    await room.attach(host.conn)
    await room.attach(friend.conn)
    await host.state_where(lambda f: f["table"]["seats"][1]["connected"])
    assert host.frames.empty()
    return room, host, friend


def stall(clock: FakeClock) -> None:
    """The process stops past its lease (SIGSTOP): time moves on and, as it wakes up, no
    renewal has run yet (the clock moves without firing the keeper's timer)."""
    clock.t += LEASE_SECONDS + 1


async def test_an_owner_waking_up_after_a_takeover_tells_its_sockets_nothing_and_closes(
    store: TableStore, redis_client: aioredis.Redis, registry: Registry, lease_clock: FakeClock
) -> None:
    (table_id,) = await quiet_tables(store, 1)
    room, host, friend = await host_and_friend(registry, table_id)
    await take_over(redis_client, table_id)
    stall(lease_clock)
    # Waking up, the friend's socket has gone: a leave writes nothing, yet is told to
    # every socket; that must not happen with the lease lost.
    room.detach(friend.conn)
    await asyncio.wait_for(room.wait_closed(), GUARD_SECONDS)
    assert host.frames.empty()
    assert host.conn.close_code == CloseCode.TABLE_UNAVAILABLE


async def test_an_owner_waking_up_with_its_lease_still_its_own_renews_it_and_goes_on(
    store: TableStore, registry: Registry, lease_clock: FakeClock
) -> None:
    (table_id,) = await quiet_tables(store, 1)
    room, host, friend = await host_and_friend(registry, table_id)
    stall(lease_clock)
    room.detach(friend.conn)
    frame = await host.next("state")
    assert [s["connected"] for s in frame["table"]["seats"]] == [True, False, False]
    assert await store.holder(table_id) == Holder(registry.proc, room.lease.fence)
    assert not room.closed
