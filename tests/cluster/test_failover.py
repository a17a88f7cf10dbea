"""Owners that die, stall or stop: another process takes the table, nothing is lost."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from typing import TYPE_CHECKING

import pytest
import redis
from cluster_helpers import (
    SCRIPTED_PACE,
    Player,
    check_told_against_log,
    create_table,
    fence_of,
    health,
    log_of,
    owner_of,
    until,
    wait_for_version,
)

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

# Short leases keep these tests quick; bench/cluster.py measures the default.
LEASE = "1.5"
# SIGKILLs of the owner in the suite: each is a whole trial (a kill at a random moment,
# the takeover, every state told checked against the log), about 3.5 s apiece.  The long
# run, ``PDK_FAILOVER_KILLS=20 pytest tests/cluster/test_failover.py``, and
# ``python -m bench.chaos`` (docs/reliability.md) kill at many more moments.
KILLS = int(os.environ.get("PDK_FAILOVER_KILLS", "5"))


def names_of(servers: list[ServerProcess]) -> dict[str, ServerProcess]:
    """Each running server by its process id (a restarted server has a new one)."""
    return {health(s.url)["process"]: s for s in servers}


async def owner_process(
    client: redis.Redis, table: str, names: dict[str, ServerProcess]
) -> ServerProcess:
    await until(lambda: owner_of(client, table) in names, f"a live owner of {table}")
    return names[owner_of(client, table) or ""]


def start_table(servers: list[ServerProcess], **fields: object) -> tuple[str, dict[int, str]]:
    table = create_table(servers[0].url, **fields)
    return table["table"], {s["seat"]: s["token"] for s in table["seats"]}


@pytest.mark.waits
async def test_the_owner_killed_at_random_moments_loses_nothing(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    servers = [server_process(args=[*SCRIPTED_PACE, "--lease-ttl", LEASE]) for _ in range(3)]
    urls = [s.ws_url for s in servers]
    tid, tokens = start_table(servers, humans=1, bots=["easy", "normal"], bot_speed_ms=60, deals=10)
    human = Player(urls, tid, tokens[0], 0)
    watcher = Player(list(reversed(urls)), tid, tokens[0], 0, acts=False)
    players = [human, watcher]
    for player in players:
        player.start()
    rng = random.Random(11)
    takeovers: list[float] = []
    names = names_of(servers)
    try:
        await wait_for_version(sync_redis, tid, 5)
        for _ in range(KILLS):
            # Not a wait for anything: the kill's moment, drawn at random (seeded).
            await asyncio.sleep(rng.uniform(0.0, 1.0))
            victim = await owner_process(sync_redis, tid, names)
            before = int(sync_redis.llen(f"pdk:{{{tid}}}:log"))
            killed_at = time.monotonic()
            victim.kill()
            restart = asyncio.create_task(asyncio.to_thread(victim.start))
            # Bots and the human play on: the log grows past where the owner died.
            await wait_for_version(sync_redis, tid, before + 2)
            takeovers.append(time.monotonic() - killed_at)
            await restart
            names = names_of(servers)
    finally:
        for player in players:
            await player.stop()
    meta, entries = log_of(sync_redis, tid)
    assert len(takeovers) == KILLS
    assert check_told_against_log(meta, entries, players) >= 2 * KILLS
    print(f"takeover seconds (lease {LEASE}s): {sorted(round(t, 2) for t in takeovers)}")


async def test_an_owner_stopped_past_its_lease_is_fenced_out_when_it_resumes(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    servers = [server_process(args=[*SCRIPTED_PACE, "--lease-ttl", LEASE]) for _ in range(2)]
    stalled, survivor = servers
    tid, tokens = start_table(servers, humans=1, bots=["easy", "easy"], bot_speed_ms=200, deals=5)
    # A watcher on the owner-to-be first, then the playing human on the other process.
    watcher = Player([stalled.ws_url, survivor.ws_url], tid, tokens[0], 0, acts=False)
    watcher.start()
    await watcher.wait_told()
    names = names_of(servers)
    human = Player([survivor.ws_url], tid, tokens[0], 0)
    human.start()
    players = [watcher, human]
    try:
        await wait_for_version(sync_redis, tid, 6)
        assert await owner_process(sync_redis, tid, names) is stalled
        fence = fence_of(sync_redis, tid)
        assert fence is not None
        stalled.signal(signal.SIGSTOP)
        # The takeover: once the stalled owner's lease ran out, the survivor's forwarder
        # took the table under the next fencing number.
        await until(lambda: (fence_of(sync_redis, tid) or 0) > fence, "a new fencing number")
        assert await owner_process(sync_redis, tid, names) is survivor
        moved_to = int(sync_redis.llen(f"pdk:{{{tid}}}:log"))
        await wait_for_version(sync_redis, tid, moved_to + 4)
        stalled.signal(signal.SIGCONT)
        # The resumed process learns from Redis that its number is stale (renewing its
        # lease, or a write refused, whichever comes first) and lets the room go.
        await until(lambda: health(stalled.url)["tables_owned"] == 0, "the stale room closed")
        # The watcher, whose socket was on the stalled process, hears the new owner.
        await until(lambda: watcher.version > moved_to + 4, "the watcher told by the survivor")
        await wait_for_version(sync_redis, tid, moved_to + 10)
        assert await owner_process(sync_redis, tid, names) is survivor
    finally:
        for player in players:
            await player.stop()
    meta, entries = log_of(sync_redis, tid)
    assert check_told_against_log(meta, entries, players) >= 10


@pytest.mark.slow
async def test_a_rolling_restart_shows_players_at_most_a_reconnect(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    servers = [server_process(args=SCRIPTED_PACE) for _ in range(3)]
    urls = [s.ws_url for s in servers]
    tid, tokens = start_table(servers, humans=2, bots=["easy"], bot_speed_ms=60, deals=10)
    players = [Player(urls, tid, tokens[0], 0), Player(urls[::-1], tid, tokens[1], 1)]
    for player in players:
        player.start()
    try:
        await wait_for_version(sync_redis, tid, 5)
        for server in servers:
            before = int(sync_redis.llen(f"pdk:{{{tid}}}:log"))
            assert server.stop() == 0
            await asyncio.to_thread(server.start)
            await wait_for_version(sync_redis, tid, before + 5)
    finally:
        for player in players:
            await player.stop()
    meta, entries = log_of(sync_redis, tid)
    assert check_told_against_log(meta, entries, players) >= 20
    for player in players:
        # Every socket closed by a restart came back through another process.
        assert player.connections <= 1 + len(servers)
        assert set(player.close_codes) <= {1012, 1001, None}
