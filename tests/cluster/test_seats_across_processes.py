"""Seats across two server processes: a spectator and a revoked invite on a forwarded
socket, and the turn clock continuing when another process takes the table over."""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

import pytest
import redis
import websockets
from cluster_helpers import GUARD_SECONDS, create_table, health, owner_of

if TYPE_CHECKING:
    from conftest import ServerFactory

FIXED_SEEDS = ["--allow-fixed-seeds", "yes"]


async def next_of(ws: websockets.ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
        if frame["type"] == kind:
            return frame


async def state_where(ws: websockets.ClientConnection, test: Any) -> dict[str, Any]:
    while True:
        frame = await next_of(ws, "state")
        if test(frame):
            return frame


async def join(url: str, table: str, token: str) -> websockets.ClientConnection:
    ws = await websockets.connect(url)
    await ws.send(json.dumps({"type": "join", "table": table, "token": token}))
    return ws


async def host_then_friend(
    owner_url: str, other_url: str, table: str, tokens: list[str]
) -> tuple[websockets.ClientConnection, websockets.ClientConnection]:
    """Seat 0 on the owner (its first socket makes that process the owner), then seat 1
    through the other process (forwarded)."""
    host = await join(owner_url, table, tokens[0])
    await next_of(host, "state")
    return host, await join(other_url, table, tokens[1])


def both_here(frame: dict[str, Any]) -> bool:
    return all(frame["table"]["seats"][seat]["connected"] for seat in (0, 1))


async def test_a_forwarded_spectator_sees_no_hand_and_a_revoked_invite_is_refused_there(
    server_process: ServerFactory,
) -> None:
    owner, other = server_process(), server_process()
    # Three people and no bot: nothing moves unless someone does.
    table = create_table(owner.url, humans=3, bots=[])
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    host, friend = await host_then_friend(owner.ws_url, other.ws_url, tid, tokens)
    try:
        frame = await state_where(host, both_here)
        await host.send(json.dumps({"type": "watch_link", "version": frame["version"]}))
        link = await next_of(host, "invite")
        watcher = await join(other.ws_url, tid, link["token"])
        watched = await next_of(watcher, "watch")
        assert "hand" not in watched["view"]
        assert health(other.url)["sockets_forwarded"] == 2
        await watcher.send(json.dumps({"type": "pass", "version": watched["version"]}))
        assert (await next_of(watcher, "error"))["code"] == "spectator"
        await watcher.close()

        # A new invite for seat 1: its forwarded socket is closed, the old token refused.
        await host.send(json.dumps({"type": "invite", "version": frame["version"], "seat": 1}))
        fresh = await next_of(host, "invite")
        await asyncio.wait_for(friend.wait_closed(), GUARD_SECONDS)
        assert friend.close_code == 4401
        stale = await join(other.ws_url, tid, tokens[1])
        assert (await next_of(stale, "error"))["code"] == "invite_revoked"
        await asyncio.wait_for(stale.wait_closed(), GUARD_SECONDS)
        assert stale.close_code == 4401
        friend = await join(other.ws_url, tid, fresh["token"])
        assert (await next_of(friend, "state"))["view"]["seat"] == 1
    finally:
        await host.close()
        await friend.close()


@pytest.mark.waits
async def test_the_turn_clock_runs_on_when_another_process_takes_the_table_over(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    owner = server_process(args=FIXED_SEEDS)
    other = server_process(args=FIXED_SEEDS)
    # Seed 1: seat 1 holds the 3 of spades and moves first.
    table = create_table(
        owner.url, humans=2, bots=["easy"], seed=1, bot_speed_ms=0,
        turn_seconds=20, grace_seconds=300,
    )  # fmt: skip
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    host, friend = await host_then_friend(owner.ws_url, other.ws_url, tid, tokens)
    try:
        frame = await state_where(friend, both_here)
        clock = frame["table"]["clock"]
        assert clock is not None
        assert clock["seat"] == 1
        assert owner_of(sync_redis, tid) == health(owner.url)["process"]

        killed_ms = time.time() * 1000
        owner.kill()  # SIGKILL: its lease runs out and the other process takes over
        taken = await state_where(friend, lambda f: f["table"]["clock"] is not None)
        assert owner_of(sync_redis, tid) == health(other.url)["process"]
        again = taken["table"]["clock"]
        assert again["deadline"] == clock["deadline"]
        # The new owner made this frame after the kill, so the clock it shows ran on
        # through the takeover (whatever the machine's load): at most what was left then,
        # give or take the rounding of deadline and remainder to whole milliseconds.
        assert again["remaining_ms"] <= clock["deadline"] - killed_ms + 1
        # Nobody moves: at the stored deadline the new owner's stand-in plays seat 1.
        stood_in = await state_where(friend, lambda f: f["view"]["moves"])
        assert stood_in["view"]["moves"][0]["seat"] == 1
        assert stood_in["table"]["seats"][1]["auto"] is True
        assert time.time() * 1000 >= clock["deadline"] - 50
    finally:
        await host.close()
        await friend.close()
