"""The same table played through a real Redis Cluster of three masters.

The cluster is made here from the redis-server binary (cluster-enabled, slots
split three ways with CLUSTER ADDSLOTS, nodes joined with CLUSTER MEET), so the
store's promise is tested for real: every script touches one slot, because
every key of a table shares its ``{id}`` hash tag.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from cluster_helpers import (
    SCRIPTED_PACE,
    Player,
    check_told_against_log,
    create_table,
    health,
    log_of,
    owner_of,
    wait_for_version,
)
from redis.cluster import RedisCluster

from bench.redis_cluster_group import RedisClusterGroup

if TYPE_CHECKING:
    from conftest import ServerFactory

MASTERS = 3


@pytest.fixture
def redis_cluster(tmp_path: Path) -> Iterator[str]:
    """Three cluster-enabled masters sharing the slots; yields a URL of the first."""
    with RedisClusterGroup(
        tmp_path / "redis", primaries=MASTERS, replicas=False, node_timeout_ms=5000
    ) as group:
        yield group.url


async def test_a_table_plays_through_a_three_master_redis_cluster(
    redis_cluster: str, server_process: ServerFactory
) -> None:
    args = [*SCRIPTED_PACE, "--lease-ttl", "1.5"]
    servers = [server_process(redis_url=redis_cluster, args=args) for _ in range(2)]
    owner, other = servers
    cluster = RedisCluster.from_url(redis_cluster)
    try:
        table = create_table(other.url, humans=2, bots=["easy"], bot_speed_ms=50, deals=5)
        tid, tokens = table["table"], {s["seat"]: s["token"] for s in table["seats"]}
        local = Player([owner.ws_url, other.ws_url], tid, tokens[0], 0)
        local.start()
        await local.wait_told()
        forwarded = Player([other.ws_url], tid, tokens[1], 1)
        forwarded.start()
        players = [local, forwarded]
        try:
            await wait_for_version(cluster, tid, 30)
            assert owner_of(cluster, tid) == health(owner.url)["process"]
            # The table's keys sit on one node, in one slot, while the cluster has three.
            slots = {
                cluster.keyslot(f"pdk:{{{tid}}}:{role}")
                for role in ("meta", "log", "fence", "lease")
            }
            assert len(slots) == 1
            assert len(cluster.get_primaries()) == MASTERS
            # The owner goes away; the other process takes the table over and play goes on.
            owner.kill()
            moved = int(cluster.llen(f"pdk:{{{tid}}}:log"))
            await wait_for_version(cluster, tid, moved + 5)
            assert owner_of(cluster, tid) == health(other.url)["process"]
        finally:
            for player in players:
                await player.stop()
        meta, entries = log_of(cluster, tid)
        assert check_told_against_log(meta, entries, players) >= 20
    finally:
        cluster.close()


def test_a_cluster_node_whose_port_was_taken_after_it_was_chosen_starts_on_another(
    tmp_path: Path,
) -> None:
    group = RedisClusterGroup(tmp_path / "redis", primaries=1, replicas=False)
    chosen = group.ports[0]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", chosen))
        taken.listen()
        with group:
            assert group.ports[0] != chosen
            assert group.role(group.ports[0]) == "master"
            assert group.settled()
