"""Budgets shared by several real server processes on one Redis: table creation per
address and in all, a seat's actions, and a seat's flood back-off."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import redis
import websockets
from cluster_helpers import GUARD_SECONDS, create_table

if TYPE_CHECKING:
    from conftest import ServerFactory


def post_table(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{url}/api/tables",
        data=b"{}",
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def next_of(ws: websockets.ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
        if frame["type"] == kind:
            return frame


async def join(url: str, table: str, token: str) -> websockets.ClientConnection:
    ws = await websockets.connect(url)
    await ws.send(json.dumps({"type": "join", "table": table, "token": token}))
    return ws


def test_one_address_gets_one_table_budget_across_three_processes(
    server_process: ServerFactory,
) -> None:
    servers = [server_process(args=["--tables-per-minute", "3"]) for _ in range(3)]
    answers = [post_table(s.url)[0] for s in servers] + [post_table(s.url)[0] for s in servers]
    # Per process, each would have made 3 (nine in all); shared, three in all.
    assert answers == [201, 201, 201, 429, 429, 429]


def test_the_servers_creation_budget_holds_for_every_address_together(
    server_process: ServerFactory,
) -> None:
    flags = ["--tables-per-minute-total", "4", "--trusted-proxies", "127.0.0.1"]
    servers = [server_process(args=flags) for _ in range(2)]
    answers = [
        post_table(servers[i % 2].url, {"X-Forwarded-For": f"203.0.113.{i}"}) for i in range(6)
    ]
    assert [status for status, _ in answers] == [201] * 4 + [429] * 2
    refused = answers[-1][1]["error"]
    assert refused["code"] == "rate_limited"
    assert "being created" in refused["message"]


async def test_a_seat_on_two_processes_shares_one_action_budget(
    server_process: ServerFactory,
) -> None:
    flags = ["--actions-per-second", "5"]  # bursts of 10
    owner, other = server_process(args=flags), server_process(args=flags)
    table = create_table(owner.url, humans=3, bots=[])
    tid, token = table["table"], table["seats"][0]["token"]
    first = await join(owner.ws_url, tid, token)
    await next_of(first, "state")
    second = await join(other.ws_url, tid, token)
    await next_of(second, "state")
    try:
        started = time.monotonic()
        pongs = 0
        # A ping on each socket in turn, five rounds a second for a few seconds: above
        # the rate, below the flood cut-off (a debt of two bursts is 20 refusals).
        for _ in range(30):
            for ws in (first, second):
                await ws.send(json.dumps({"type": "ping"}))
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
                    if frame["type"] == "pong" or frame.get("code") == "rate_limited":
                        pongs += frame["type"] == "pong"
                        break
            await asyncio.sleep(0.2)
        elapsed = time.monotonic() - started
        # Per process it would be a burst and the rate each: 20 + 10 a second.  Shared:
        # the rate once, a burst, and at most a burst more per other process (what it
        # lets through before its bookings come back in debt), plus a frame each.
        assert pongs <= 10 + 5 * elapsed + 10 + 2
    finally:
        await first.close()
        await second.close()


async def test_a_seat_that_flooded_one_process_is_backed_off_on_another(
    server_process: ServerFactory, sync_redis: redis.Redis
) -> None:
    flags = ["--actions-per-second", "1"]
    owner, other = server_process(args=flags), server_process(args=flags)
    table = create_table(owner.url, humans=3, bots=[])
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    flooder = await join(owner.ws_url, tid, tokens[1])
    await next_of(flooder, "state")
    for _ in range(40):
        await flooder.send(json.dumps({"type": "ping"}))
    await asyncio.wait_for(flooder.wait_closed(), GUARD_SECONDS)
    assert flooder.close_code == 1008
    # The flood is counted beside the close, not before it: wait for the count.
    deadline = time.monotonic() + GUARD_SECONDS
    while not sync_redis.exists(f"pdk:{{{tid}}}:budget:flood-wait:1"):
        assert time.monotonic() < deadline, "the flood was never counted"
        await asyncio.sleep(0.01)
    again = await join(other.ws_url, tid, tokens[1])
    refusal = await next_of(again, "error")
    assert refusal["code"] == "flood_backoff"
    assert "join again in" in refusal["message"]
    await asyncio.wait_for(again.wait_closed(), GUARD_SECONDS)
    assert again.close_code == 4429
    # The other seats join as before.
    host = await join(other.ws_url, tid, tokens[0])
    await next_of(host, "state")
    await host.close()
