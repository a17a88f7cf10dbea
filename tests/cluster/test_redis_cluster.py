"""The same table played through a real Redis Cluster of three masters.

The cluster is made here from the redis-server binary (cluster-enabled, slots
split three ways with CLUSTER ADDSLOTS, nodes joined with CLUSTER MEET), so the
store's promise is tested for real: every script touches one slot, because
every key of a table shares its ``{id}`` hash tag.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis
from cluster_helpers import (
    Player,
    check_told_against_log,
    create_table,
    health,
    log_of,
    owner_of,
    wait_for_version,
)
from redis.cluster import RedisCluster

from bench.redis_cluster_group import free_cluster_ports
from server.redis_embedded import find_redis_server

if TYPE_CHECKING:
    from conftest import ServerFactory

SLOTS = 16384
MASTERS = 3
_FORM_TIMEOUT = 30.0


@pytest.fixture
def redis_cluster(tmp_path: Path) -> Iterator[str]:
    """Three cluster-enabled masters sharing the slots; yields a URL of the first."""
    binary = str(find_redis_server())
    ports = free_cluster_ports(MASTERS)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for port in ports:
            node_dir = tmp_path / f"node-{port}"
            node_dir.mkdir()
            argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(node_dir)]
            argv += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            argv += ["--cluster-node-timeout", "5000", "--appendonly", "no", "--save", ""]
            processes.append(
                subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        clients = [redis.Redis(port=port) for port in ports]
        for client in clients:
            _wait(lambda c=client: _answers(c))
        share = SLOTS // MASTERS
        for index, client in enumerate(clients):
            first = index * share
            last = SLOTS - 1 if index == MASTERS - 1 else first + share - 1
            client.execute_command("CLUSTER ADDSLOTS", *range(first, last + 1))
        for port in ports[1:]:
            clients[0].execute_command("CLUSTER MEET", "127.0.0.1", port)
        for client in clients:
            _wait(lambda c=client: c.execute_command("CLUSTER INFO")["cluster_state"] == "ok")
            _wait(lambda c=client: len(c.execute_command("CLUSTER NODES")) == MASTERS)
        for client in clients:
            client.close()
        yield f"redis://127.0.0.1:{ports[0]}/0"
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def _wait(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + _FORM_TIMEOUT
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError("the Redis Cluster did not form in time")
        time.sleep(0.05)


async def test_a_table_plays_through_a_three_master_redis_cluster(
    redis_cluster: str, server_process: ServerFactory
) -> None:
    servers = [
        server_process(redis_url=redis_cluster, args=["--lease-ttl", "1.5"]) for _ in range(2)
    ]
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
