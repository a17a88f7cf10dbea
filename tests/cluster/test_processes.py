"""Three server processes on one Redis: one owner per table, every other socket forwarded."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import redis
import websockets
from cluster_helpers import (
    GUARD_SECONDS,
    SCRIPTED_PACE,
    Player,
    check_told_against_log,
    create_table,
    health,
    log_of,
    owner_of,
    wait_for_version,
)

if TYPE_CHECKING:
    from conftest import ServerFactory


async def test_sockets_of_one_table_on_three_processes_play_one_game(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    servers = [server_process(args=SCRIPTED_PACE) for _ in range(3)]
    a, b, c = servers
    table = create_table(b.url, humans=2, bots=["easy"], bot_speed_ms=50, deals=5)
    tokens = {s["seat"]: s["token"] for s in table["seats"]}
    tid = table["table"]
    # The first socket makes its process the owner; the others are forwarded to it.
    first = Player([a.ws_url], tid, tokens[0], 0)
    first.start()
    await first.wait_told()
    others = [
        Player([b.ws_url], tid, tokens[1], 1),
        Player([c.ws_url], tid, tokens[0], 0, acts=False),
    ]
    for player in others:
        player.start()
    players = [first, *others]
    try:
        await wait_for_version(sync_redis, tid, 60)
        assert owner_of(sync_redis, tid) == health(a.url)["process"]
        reports = [health(s.url) for s in servers]
        assert [r["tables_owned"] for r in reports] == [1, 0, 0]
        assert [r["sockets_forwarded"] for r in reports] == [0, 1, 1]
        assert len({r["pid"] for r in reports}) == 3
    finally:
        for player in players:
            await player.stop()
    meta, entries = log_of(sync_redis, tid)
    assert check_told_against_log(meta, entries, players) >= 50
    # Each seat saw only its own hand: the forwarded seat 1 never got seat 0's cards.
    assert all(p.connections == 1 for p in players)
    assert not [e for p in players for e in p.errors if e["code"] != "stale_version"]


async def test_a_forwarded_frame_is_checked_as_strictly_as_a_local_one(
    server_process: ServerFactory,
) -> None:
    owner, other = server_process(args=SCRIPTED_PACE), server_process(args=SCRIPTED_PACE)
    table = create_table(owner.url, humans=2, bots=["easy"], bot_speed_ms=5000)
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    async with (
        websockets.connect(owner.ws_url) as local,
        websockets.connect(other.ws_url) as remote,
    ):
        await local.send(json.dumps({"type": "join", "table": tid, "token": tokens[0]}))
        mine = (await next_of(local, "state"))["view"]
        await remote.send(json.dumps({"type": "join", "table": tid, "token": tokens[1]}))
        state = await next_of(remote, "state")
        # The forwarded socket gets its own seat's view, never the owner's socket's.
        assert (state["view"]["seat"], mine["seat"]) == (1, 0)
        assert set(state["view"]["hand"]).isdisjoint(mine["hand"])
        for bad, code in [
            ({"type": "play", "version": state["version"], "cards": ["ZZ"]}, None),
            ({"type": "pass", "version": state["version"] - 1}, "stale_version"),
            ({"type": "play", "version": 0, "cards": ["3S"], "extra": 1}, "invalid_message"),
        ]:
            await remote.send(json.dumps(bad))
            error = await next_of(remote, "error")
            assert code is None or error["code"] == code, error
        # Hints cycle per seat, through the owner.
        indexes = []
        for _ in range(3):
            await remote.send(json.dumps({"type": "hint", "version": state["version"]}))
            indexes.append((await next_of(remote, "hint"))["index"])
        count = len(state["view"]["hints"])
        assert indexes == [i % count for i in range(3)] if count else [0, 0, 0]


async def next_of(ws: websockets.ClientConnection, kind: str) -> dict[str, object]:
    while True:
        frame: dict[str, object] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
        if frame["type"] == kind:
            return frame


async def test_invalid_utf8_on_a_forwarded_socket_is_refused_there_as_on_a_local_one(
    server_process: ServerFactory,
) -> None:
    owner, other = server_process(args=SCRIPTED_PACE), server_process(args=SCRIPTED_PACE)
    # Three people and no bot: nothing moves unless someone does.
    table = create_table(owner.url, humans=3, bots=[])
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    async with (
        websockets.connect(owner.ws_url) as local,
        websockets.connect(other.ws_url) as remote,
    ):
        await local.send(json.dumps({"type": "join", "table": tid, "token": tokens[0]}))
        await next_of(local, "state")
        await remote.send(json.dumps({"type": "join", "table": tid, "token": tokens[1]}))
        state = await next_of(remote, "state")
        version, names = state["version"], names_in(state)
        assert health(other.url)["sockets_forwarded"] == 1
        bad = b'{"type":"rename","version":%d,"name":"Bad\xffName"}' % version
        for ws in (local, remote):
            # As a text frame (the transport hands it over as bytes) and as a binary one.
            for text in (True, False):
                await ws.send(bad, text=text)
                error = await error_or_renamed(ws, names)
                assert error.get("code") == "malformed_json", error
        # A valid frame sent as bytes still crosses: the owner renames seat 1.
        await remote.send(b'{"type":"rename","version":%d,"name":"Bo"}' % version, text=False)
        renamed = await error_or_renamed(remote, names)
        assert names_in(renamed)[1] == "Bo", renamed


def names_in(state: dict[str, Any]) -> list[str]:
    return [seat["name"] for seat in state["table"]["seats"]]


async def error_or_renamed(ws: websockets.ClientConnection, names: list[str]) -> dict[str, Any]:
    """The next error, or the next state whose seat names are not ``names`` (a rename the
    owner accepted); nothing else happens at a table nobody plays at."""
    while True:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
        if frame["type"] == "error" or (frame["type"] == "state" and names_in(frame) != names):
            return frame
