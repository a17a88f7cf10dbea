"""Sockets meet their table's owner: the proxy hashes on the table id in the socket's
URL, and an owner whose sockets all come forwarded from one other process hands the
table over to it, with the sockets kept open and nothing lost or reordered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis
import websockets
from cluster_helpers import (
    ADMIN_TOKEN,
    SCRIPTED_PACE,
    Player,
    check_told_against_log,
    create_table,
    free_port,
    health,
    log_of,
    owner_of,
    until,
    wait_for_version,
)
from test_deploy import nginx_dir, running_nginx

if TYPE_CHECKING:
    from conftest import ServerFactory

__all__ = ["nginx_dir"]  # the fixture, used below

# Short, so the tests move on quickly; the rule is the same at the default 5 s.
HANDOVER = [*SCRIPTED_PACE, "--handover-after", "0.5"]


async def own_by_joining(ws_url: str, table: str, token: str) -> None:
    """One socket joins through ``ws_url`` (its process takes the table) and leaves."""
    async with websockets.connect(ws_url) as ws:
        await ws.send(json.dumps({"type": "join", "table": table, "token": token}))
        while json.loads(await ws.recv())["type"] != "state":
            pass


async def test_a_table_whose_sockets_all_come_from_another_process_moves_there_with_them(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    a, b = server_process(args=HANDOVER), server_process(args=HANDOVER)
    table = create_table(a.url, humans=2, bots=["easy"], bot_speed_ms=50, deals=5)
    tid, tokens = table["table"], {s["seat"]: s["token"] for s in table["seats"]}
    await own_by_joining(a.ws_url, tid, tokens[0])
    a_proc, b_proc = health(a.url)["process"], health(b.url)["process"]
    assert owner_of(sync_redis, tid) == a_proc
    # Every socket of the table on b: forwarded to a, until a hands the table over.
    players = [Player([b.ws_url], tid, tokens[0], 0), Player([b.ws_url], tid, tokens[1], 1)]
    for player in players:
        player.start()
    try:
        await until(lambda: owner_of(sync_redis, tid) == b_proc, "the table moved to b")
        moved_at = int(sync_redis.llen(f"pdk:{{{tid}}}:log"))
        await wait_for_version(sync_redis, tid, moved_at + 30)
        reports = [health(a.url), health(b.url)]
        assert [r["tables_owned"] for r in reports] == [0, 1]
        assert [r["sockets_forwarded"] for r in reports] == [0, 0]
        assert [r["tables_handed_over"] for r in reports] == [1, 0]
    finally:
        for player in players:
            await player.stop()
    meta, entries = log_of(sync_redis, tid)
    assert check_told_against_log(meta, entries, players) >= 20
    # Handed over under the sockets: none of them was closed or had to reconnect.
    assert [p.connections for p in players] == [1, 1]
    assert not [e for p in players for e in p.errors if e["code"] != "stale_version"]


@pytest.mark.waits
async def test_a_table_with_a_socket_on_its_owner_stays_however_long_the_others_are_away(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    a, b = server_process(args=HANDOVER), server_process(args=HANDOVER)
    table = create_table(a.url, humans=2, bots=["easy"], bot_speed_ms=50, deals=5)
    tid, tokens = table["table"], {s["seat"]: s["token"] for s in table["seats"]}
    local = Player([a.ws_url], tid, tokens[0], 0)
    local.start()
    await local.wait_told()
    players = [local, Player([b.ws_url], tid, tokens[1], 1)]
    players[1].start()
    try:
        # Long past the handover time: every one of a's looks saw a local socket.
        await until(lambda: health(b.url)["frames_forwarded"] >= 60, "b forwarded 60 frames")
        assert owner_of(sync_redis, tid) == health(a.url)["process"]
        assert health(a.url)["tables_handed_over"] == 0
    finally:
        for player in players:
            await player.stop()
    meta, entries = log_of(sync_redis, tid)
    check_told_against_log(meta, entries, players)
    assert [p.connections for p in players] == [1, 1]


async def test_behind_the_compose_proxy_every_socket_of_a_table_reaches_its_owner(
    server_process: ServerFactory, sync_redis: redis.Redis, nginx_dir: Path
) -> None:
    args = [*SCRIPTED_PACE, "--trusted-proxies", "127.0.0.1/32", "--admin-token", ADMIN_TOKEN]
    servers = [server_process(args=[*args, "--tables-per-minute", "100"]) for _ in range(3)]
    port = free_port()
    with running_nginx(nginx_dir, port, servers) as base:
        players: list[Player] = []
        tables = []
        owners: set[str | None] = set()
        # Four tables, and more until two processes own some: table ids are random, so
        # four alone all hash to one of three processes once in 27 runs.  Past 24 tables
        # (a chance of 3 in 3**24 for a working hash) the hash spreads nothing.
        while len(tables) < 4 or (len(owners) < 2 and len(tables) < 24):
            # Created round robin; the first socket, through the hash, picks the owner.
            table = create_table(base, humans=2, bots=["easy"], bot_speed_ms=50, deals=5)
            tid = table["table"]
            ws = f"ws://127.0.0.1:{port}/ws?table={tid}"
            await own_by_joining(ws, tid, table["seats"][0]["token"])
            owners.add(owner_of(sync_redis, tid))
            tables.append(tid)
            players += [Player([ws], tid, s["token"], s["seat"]) for s in table["seats"]]
        assert len(owners) >= 2, f"the hash sent all {len(tables)} tables to one process"
        for player in players:
            player.start()
        try:
            for tid in tables:
                await wait_for_version(sync_redis, tid, 30)
            reports = [health(s.url, ADMIN_TOKEN) for s in servers]
            assert sum(r["tables_owned"] for r in reports) == len(tables)
            assert [r["sockets_forwarded"] for r in reports] == [0, 0, 0]
            assert [r["frames_forwarded"] for r in reports] == [0, 0, 0]
            # Not one process for everything: the hash spreads the tables.
            assert sum(1 for r in reports if r["tables_owned"]) >= 2
        finally:
            for player in players:
                await player.stop()
    for tid in tables:
        meta, entries = log_of(sync_redis, tid)
        mine = [p for p in players if p.table == tid]
        assert check_told_against_log(meta, entries, mine) >= 10
    assert all(p.connections == 1 for p in players)


async def test_a_handover_waits_for_the_requests_forwarded_before_the_yield(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    """Many handovers back and forth under steady play: each one keeps every socket and
    every action told is in the log in order (the requests in flight are held, not lost)."""
    a, b = server_process(args=HANDOVER), server_process(args=HANDOVER)
    table = create_table(a.url, humans=2, bots=["easy"], bot_speed_ms=20, deals=10)
    tid, tokens = table["table"], {s["seat"]: s["token"] for s in table["seats"]}
    await own_by_joining(a.ws_url, tid, tokens[0])
    procs = {health(a.url)["process"]: a, health(b.url)["process"]: b}
    players: list[Player] = []
    for hop in range(3):
        # All sockets of the table to the process that does not own it now.
        owner = procs[str(owner_of(sync_redis, tid))]
        other = b if owner is a else a
        for player in players:
            await player.stop()
        fresh = [Player([other.ws_url], tid, tokens[s], s) for s in (0, 1)]
        players += fresh
        for player in fresh:
            player.start()
        other_proc: str = health(other.url)["process"]

        def moved(proc: str = other_proc) -> bool:
            return owner_of(sync_redis, tid) == proc

        await until(moved, f"hop {hop}")
        at = int(sync_redis.llen(f"pdk:{{{tid}}}:log"))
        await wait_for_version(sync_redis, tid, at + 15)
        assert all(p.connections == 1 for p in fresh)
    for player in players:
        await player.stop()
    meta, entries = log_of(sync_redis, tid)
    assert check_told_against_log(meta, entries, players) >= 30
    assert health(a.url)["tables_handed_over"] + health(b.url)["tables_handed_over"] == 3


async def test_behind_the_proxy_a_dead_owners_table_moves_whole_to_the_next_process(
    server_process: ServerFactory, sync_redis: redis.Redis, nginx_dir: Path
) -> None:
    args = [*SCRIPTED_PACE, "--trusted-proxies", "127.0.0.1/32", "--admin-token", ADMIN_TOKEN]
    servers = [server_process(args=[*args, "--lease-ttl", "1.5"]) for _ in range(3)]
    port = free_port()
    with running_nginx(nginx_dir, port, servers) as base:
        table = create_table(base, humans=2, bots=["easy"], bot_speed_ms=50, deals=10)
        tid = table["table"]
        ws = f"ws://127.0.0.1:{port}/ws?table={tid}"
        players = [Player([ws], tid, s["token"], s["seat"]) for s in table["seats"]]
        for player in players:
            player.start()
        try:
            await wait_for_version(sync_redis, tid, 20)
            procs = {health(s.url, ADMIN_TOKEN)["process"]: s for s in servers}
            owner = procs[str(owner_of(sync_redis, tid))]
            owner.kill()
            survivors = [s for s in servers if s is not owner]
            # Both sockets come back through the proxy to the next process on the ring,
            # which takes the table once the dead owner's lease is over: all local again.
            await until(
                lambda: (
                    owner_of(sync_redis, tid) in {p for p, s in procs.items() if s is not owner}
                ),
                "taken over",
            )
            at = int(sync_redis.llen(f"pdk:{{{tid}}}:log"))
            await wait_for_version(sync_redis, tid, at + 20)
            reports = [health(s.url, ADMIN_TOKEN) for s in survivors]
            assert sorted(r["tables_owned"] for r in reports) == [0, 1]
            assert [r["sockets_forwarded"] for r in reports] == [0, 0]
        finally:
            for player in players:
                await player.stop()
    meta, entries = log_of(sync_redis, tid)
    assert check_told_against_log(meta, entries, players) >= 20
    assert all(p.connections == 2 for p in players)
