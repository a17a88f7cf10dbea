"""Group commit: appends of many tables share pipelines, each still answered on its own."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.connection import Connection
from room_helpers import lease_of, log_of, new_table

from server.engine import Pass, Play
from server.rooms.group_commit import MAX_IN_FLIGHT, GroupCommit, pack_commands
from server.rooms.store import Lease, LeaseLost, TableStore, VersionConflict


async def tables(store: TableStore, n: int) -> list[Lease]:
    metas = [(await new_table(store, seed=i))[0] for i in range(n)]
    return [await lease_of(store, m.id) for m in metas]


def group_commit(store: TableStore) -> GroupCommit:
    batch = store._batch
    assert batch is not None
    return batch


async def test_appends_made_together_share_pipelines_and_each_gets_its_own_version(
    store: TableStore,
) -> None:
    leases = await tables(store, 40)
    before = group_commit(store).pipelines
    first = await asyncio.gather(
        *(store.append(lease, 0, Play(seat=0, cards=["3S"])) for lease in leases)
    )
    second = await asyncio.gather(*(store.append(lease, 1, Pass(seat=1)) for lease in leases))
    assert first == [1] * 40
    assert second == [2] * 40
    # 80 appends, but only a few round trips: the first calls go out alone, the rest wait
    # for a flusher and leave together.
    assert group_commit(store).pipelines - before <= 2 * (MAX_IN_FLIGHT + 1)
    for lease in leases:
        assert await log_of(store, lease.table_id) == [Play(seat=0, cards=["3S"]), Pass(seat=1)]


async def test_a_refusal_in_a_batch_fails_only_its_own_call(store: TableStore) -> None:
    leases = await tables(store, 10)
    # The fifth call is made against a version Redis never held, the sixth with a lease
    # another process has taken since.
    await store.release(leases[5])
    await lease_of(store, leases[5].table_id, owner="another-process")
    calls = [
        store.append(lease, 3 if i == 4 else 0, Pass(seat=1)) for i, lease in enumerate(leases)
    ]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(results[4], VersionConflict)
    assert (results[4].expected, results[4].stored) == (3, 0)
    assert isinstance(results[5], LeaseLost)
    assert [r for i, r in enumerate(results) if i not in (4, 5)] == [1] * 8
    assert await log_of(store, leases[4].table_id) == []
    assert await log_of(store, leases[5].table_id) == []


async def test_appends_go_on_after_redis_forgets_its_scripts(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    leases = await tables(store, 3)
    assert await store.append(leases[0], 0, Pass(seat=1)) == 1
    await redis_client.script_flush()  # what a restarted Redis looks like to the script
    results = await asyncio.gather(*(store.append(lease, 0, Pass(seat=1)) for lease in leases[1:]))
    assert results == [1, 1]
    assert await store.append(leases[0], 1, Pass(seat=2)) == 2


async def test_a_caller_that_stops_waiting_does_not_stop_the_others(store: TableStore) -> None:
    leases = await tables(store, 6)
    calls = [asyncio.ensure_future(store.append(lease, 0, Pass(seat=1))) for lease in leases]
    await asyncio.sleep(0)
    calls[0].cancel()
    assert await asyncio.gather(*calls[1:]) == [1] * 5
    with pytest.raises(asyncio.CancelledError):
        await calls[0]


async def test_appends_go_on_after_redis_drops_idle_connections(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    leases = await tables(store, 4)
    assert (
        await asyncio.gather(*(store.append(lease, 0, Pass(seat=1)) for lease in leases)) == [1] * 4
    )
    await redis_client.client_kill_filter(_type="normal", skipme=True)
    assert (
        await asyncio.gather(*(store.append(lease, 1, Pass(seat=2)) for lease in leases)) == [2] * 4
    )
    for lease in leases:
        assert await log_of(store, lease.table_id) == [Pass(seat=1), Pass(seat=2)]


async def test_lease_renewals_of_many_tables_share_pipelines_with_appends(
    store: TableStore,
) -> None:
    leases = await tables(store, 30)
    await store.release(leases[7])
    await lease_of(store, leases[7].table_id, owner="another-process")
    before = group_commit(store).pipelines
    results = await asyncio.gather(
        *(store.renew(lease, 60_000) for lease in leases),
        *(store.append(lease, 0, Pass(seat=1)) for lease in leases[10:]),
        return_exceptions=True,
    )
    assert isinstance(results[7], LeaseLost)
    assert [r for i, r in enumerate(results) if i != 7] == [None] * 29 + [1] * 20
    assert group_commit(store).pipelines - before <= MAX_IN_FLIGHT + 1


_args = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=100),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)


_command = st.tuples(st.sampled_from(["EVALSHA", "SET", "GET"]), st.lists(_args, max_size=8))


@given(st.lists(_command, min_size=1, max_size=6))
def test_the_pipeline_packer_writes_exactly_what_redis_py_would(
    made: list[tuple[str, list[object]]],
) -> None:
    commands = [[name, *args] for name, args in made]
    reference = Connection().pack_commands(commands)
    assert pack_commands(commands) == b"".join(bytes(part) for part in reference)


@pytest.mark.parametrize("arg", [True, None, [1], 1j])
def test_the_pipeline_packer_refuses_what_redis_py_refuses(arg: object) -> None:
    with pytest.raises(TypeError, match="cannot send"):
        pack_commands([("SET", "k", arg)])


async def test_flushers_keep_their_connections_instead_of_going_back_to_the_pool(
    store: TableStore,
) -> None:
    leases = await tables(store, 8)
    for version in range(5):
        assert (
            await asyncio.gather(*(store.append(lease, version, Pass(seat=1)) for lease in leases))
            == [version + 1] * 8
        )
    kept = group_commit(store)._idle
    assert 1 <= len(kept) <= MAX_IN_FLIGHT
    # The same connections go on serving: the pool lent no others meanwhile.
    before = set(map(id, kept))
    await asyncio.gather(*(store.append(lease, 5, Pass(seat=1)) for lease in leases))
    assert set(map(id, group_commit(store)._idle)) <= before
