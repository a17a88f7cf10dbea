"""Replica acknowledgement against a real primary and replica (``redis_failover``).

The replica is a real redis-server; stopping it with SIGSTOP is how a replica
that lags or is cut off looks to the primary: it acknowledges nothing, so WAIT
returns short when its timeout ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import RedisError
from room_helpers import STORE_TTL_SECONDS, lease_of, new_table

from bench.sentinel_group import SentinelGroup
from server.engine import Pass
from server.rooms.group_commit import GroupCommit
from server.rooms.redis_failover import ReplicaAck, ReplicaAckTimeout
from server.rooms.store import TableStore

# A guard, never waited out unless the replica is stopped: a loaded machine may take
# far longer than a quiet one to let the replica acknowledge.
PATIENT_MS = 30_000
# What the tests that stop the replica wait out, twice.
IMPATIENT_MS = 300


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[SentinelGroup]:
    """A primary and one replica of it (no sentinels: nothing fails over here)."""
    with SentinelGroup(tmp_path, replicas=1, sentinels=0) as group:
        yield group


@contextlib.asynccontextmanager
async def acked(pair: SentinelGroup, timeout_ms: int) -> AsyncIterator[TableStore]:
    """A store on the primary that waits ``timeout_ms`` for the replica's acknowledgement."""
    client = aioredis.Redis(port=pair.node_ports[0])
    store = TableStore(client, STORE_TTL_SECONDS, replica_ack=ReplicaAck(1, timeout_ms))
    try:
        yield store
    finally:
        await store.aclose()
        await client.aclose()


@pytest.fixture
async def acked_store(pair: SentinelGroup) -> AsyncIterator[TableStore]:
    async with acked(pair, PATIENT_MS) as store:
        yield store


def replica_log_length(pair: SentinelGroup, table_id: str) -> int:
    replica = redis.Redis(port=pair.node_ports[1])
    try:
        return int(replica.llen(f"pdk:{{{table_id}}}:log"))
    finally:
        replica.close()


def replica_pid(pair: SentinelGroup) -> int:
    client = redis.Redis(port=pair.node_ports[1])
    try:
        return int(client.info("server")["process_id"])
    finally:
        client.close()


async def test_an_append_is_answered_once_the_replica_holds_it(
    pair: SentinelGroup, acked_store: TableStore
) -> None:
    meta, _ = await new_table(acked_store, seed=1)
    lease = await lease_of(acked_store, meta.id)
    for version in range(5):
        assert await acked_store.append(lease, version, [Pass(seat=1)]) == version + 1
        # Read from the replica the moment the answer came: it already has the entry.
        assert replica_log_length(pair, meta.id) == version + 1


async def test_a_write_the_replica_does_not_acknowledge_fails_and_is_told_to_nobody(
    pair: SentinelGroup, acked_store: TableStore
) -> None:
    meta, _ = await new_table(acked_store, seed=2)
    lease = await lease_of(acked_store, meta.id)
    assert await acked_store.append(lease, 0, [Pass(seat=1)]) == 1
    pid = replica_pid(pair)
    os.kill(pid, signal.SIGSTOP)
    try:
        async with acked(pair, IMPATIENT_MS) as impatient:
            with pytest.raises(ReplicaAckTimeout):
                await asyncio.wait_for(impatient.append(lease, 1, [Pass(seat=1)]), 30)
            # A new table is an acknowledgement too (its id goes back to the client).
            with pytest.raises(ReplicaAckTimeout):
                await asyncio.wait_for(new_table(impatient, seed=3), 30)
    finally:
        os.kill(pid, signal.SIGCONT)
    # The refused write is on the primary (its fate was unknown, not undone): the room
    # reloads it and goes on from there, and the next acknowledged write vouches for it.
    assert await acked_store.append(lease, 2, [Pass(seat=1)]) == 3
    assert replica_log_length(pair, meta.id) == 3


async def test_without_replica_acknowledgement_a_write_does_not_wait_for_replicas(
    pair: SentinelGroup,
) -> None:
    client = aioredis.Redis(port=pair.node_ports[0])
    store = TableStore(client, STORE_TTL_SECONDS)
    pid = replica_pid(pair)
    os.kill(pid, signal.SIGSTOP)
    try:
        meta, _ = await new_table(store, seed=4)
        lease = await lease_of(store, meta.id)
        assert await store.append(lease, 0, [Pass(seat=1)]) == 1
    finally:
        os.kill(pid, signal.SIGCONT)
        await store.aclose()
        await client.aclose()


def test_a_replica_acknowledgement_needs_at_least_one_replica_and_a_timeout() -> None:
    with pytest.raises(ValueError, match="replicas >= 1"):
        ReplicaAck(0, 100)
    with pytest.raises(ValueError, match="timeout_ms >= 1"):
        ReplicaAck(1, 0)


def group_commit_connection(port: int, name: str) -> int:
    """The client id of the one connection called ``name`` on the node at ``port``."""
    client = redis.Redis(port=port)
    try:
        ids = [c["id"] for c in client.client_list() if c["name"] == name]
    finally:
        client.close()
    assert len(ids) == 1, ids
    return int(ids[0])


def make_replica(port: int, of: int | None) -> None:
    client = redis.Redis(port=port)
    try:
        if of is None:
            client.replicaof("NO", "ONE")
        else:
            client.replicaof("127.0.0.1", of)
    finally:
        client.close()


async def test_a_connection_whose_node_was_made_a_replica_is_dropped_for_a_new_one(
    pair: SentinelGroup,
) -> None:
    primary, replica = pair.node_ports
    name = "pdk-group-commit"
    client = aioredis.from_url(f"redis://127.0.0.1:{primary}/0?client_name={name}")
    count = client.register_script("return redis.call('INCR', KEYS[1])")
    group = GroupCommit(client)
    try:
        assert await group.run(count, ["calls"], []) == 1
        before = group_commit_connection(primary, name)
        # A failover the connection never heard of: its node is a replica now (Sentinel
        # would kill its clients; a managed endpoint or a partition may not).
        make_replica(replica, None)
        make_replica(primary, replica)
        with pytest.raises(RedisError, match="READONLY"):
            await group.run(count, ["calls"], [])
        # The node is primary again, but the connection that heard READONLY is gone:
        # the next call opened a new one (which, behind Sentinel, asks where to go).
        make_replica(primary, None)
        await group.run(count, ["calls"], [])
        assert group_commit_connection(primary, name) != before
    finally:
        await group.aclose()
        await client.aclose()
