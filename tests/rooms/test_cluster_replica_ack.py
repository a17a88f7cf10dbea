"""Replica acknowledgement on a real Redis Cluster (``cluster_replica_ack``).

Three primaries with a replica each (``bench.redis_cluster_group``); stopping a
replica with SIGSTOP is how a replica that lags or is cut off looks to its
primary: it acknowledges nothing, so WAIT returns short when its timeout ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis
from redis.asyncio.cluster import RedisCluster
from room_helpers import STORE_TTL_SECONDS, lease_of, new_table

from bench.redis_cluster_group import RedisClusterGroup
from server.engine import Pass
from server.rooms.redis_failover import ReplicaAck, ReplicaAckTimeout
from server.rooms.store import TableStore
from server.rooms.tables import CreateTableRequest, build_table

# A guard, never waited out unless a replica is stopped.
PATIENT_MS = 30_000
# What the test that stops the replica waits out.
IMPATIENT_MS = 300


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[RedisClusterGroup]:
    with RedisClusterGroup(tmp_path / "redis") as group:
        yield group


@contextlib.asynccontextmanager
async def acked(group: RedisClusterGroup, timeout_ms: int) -> AsyncIterator[TableStore]:
    """A store on the cluster that waits ``timeout_ms`` for a replica's acknowledgement."""
    client = RedisCluster.from_url(group.url)
    await client.initialize()
    store = TableStore(client, STORE_TTL_SECONDS, replica_ack=ReplicaAck(1, timeout_ms))
    try:
        yield store
    finally:
        await store.aclose()
        await client.aclose()


def log_key(table_id: str) -> str:
    return f"pdk:{{{table_id}}}:log"


async def test_a_cluster_write_is_answered_once_the_replica_of_its_slot_holds_it(
    cluster: RedisClusterGroup,
) -> None:
    async with acked(cluster, PATIENT_MS) as store:
        for seed in range(3):  # tables whose slots may live on different primaries
            meta, _ = await new_table(store, seed=seed)
            key = log_key(meta.id)
            replica = cluster.replica_of(cluster.owner(key))
            lease = await lease_of(store, meta.id)
            for version in range(3):
                assert await store.append(lease, version, [Pass(seat=1)]) == version + 1
                # Read from the replica the moment the answer came: it has the entry.
                assert cluster.llen(replica, key) == version + 1


async def test_a_cluster_write_its_replica_does_not_acknowledge_fails_and_is_told_to_nobody(
    cluster: RedisClusterGroup,
) -> None:
    async with acked(cluster, PATIENT_MS) as store:
        meta, _ = await new_table(store, seed=7)
        lease = await lease_of(store, meta.id)
        assert await store.append(lease, 0, [Pass(seat=1)]) == 1
    primary = cluster.owner(log_key(meta.id))
    replica = cluster.pause_replica(primary)
    try:
        async with acked(cluster, IMPATIENT_MS) as impatient:
            with pytest.raises(ReplicaAckTimeout):
                await asyncio.wait_for(impatient.append(lease, 1, [Pass(seat=1)]), 30)
    finally:
        cluster.resume_replica(replica)
    # The refused write is on the primary (its fate was unknown, not undone); the next
    # acknowledged write vouches for it too.
    async with acked(cluster, PATIENT_MS) as store:
        assert await store.append(lease, 2, [Pass(seat=1)]) == 3
        assert cluster.llen(replica, log_key(meta.id)) == 3


async def test_a_new_table_on_the_cluster_waits_for_the_replica_of_its_own_slot(
    cluster: RedisClusterGroup,
) -> None:
    meta, _ = build_table(CreateTableRequest(seed=8))
    key = f"pdk:{{{meta.id}}}:meta"
    # Only this slot's replica is stopped: a WAIT sent to any other primary would pass.
    replica = cluster.pause_replica(cluster.owner(key))
    try:
        async with acked(cluster, IMPATIENT_MS) as store:
            with pytest.raises(ReplicaAckTimeout):
                await asyncio.wait_for(store.create(meta), 30)
    finally:
        cluster.resume_replica(replica)


async def test_a_script_the_primary_never_loaded_is_sent_again_with_its_body(
    cluster: RedisClusterGroup,
) -> None:
    async with acked(cluster, PATIENT_MS) as store:
        meta, _ = await new_table(store, seed=9)
        lease = await lease_of(store, meta.id)
        assert await store.append(lease, 0, [Pass(seat=1)]) == 1
        # As a promoted replica that never ran the script: EVALSHA gets NOSCRIPT.
        primary = redis.Redis(port=cluster.owner(log_key(meta.id)))
        try:
            primary.script_flush()
        finally:
            primary.close()
        assert await store.append(lease, 1, [Pass(seat=1)]) == 2
