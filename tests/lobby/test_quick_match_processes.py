"""Quick match through several real server processes on one real Redis."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import httpx
import redis
import websockets

from bench.quick_match import QUICK_MATCH_LIMITS, run_players
from server.lobby.queue import Matchmaker, Member
from server.rooms.tokens import hash_token, new_token
from tests.conftest import ServerFactory

GUARD_SECONDS = 60.0


def seat_hashes(redis_url: str, table: str) -> list[tuple[str, str | None]]:
    client = redis.Redis.from_url(redis_url)
    try:
        raw = client.get(f"pdk:{{{table}}}:meta")
    finally:
        client.close()
    assert raw is not None, f"table {table} was never made"
    meta = json.loads(raw)
    return [(seat["kind"], seat.get("token_hash")) for seat in meta["seats"]]


async def first_state(url: str, table: str, token: str) -> dict[str, Any]:
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"type": "join", "table": table, "token": token}))
        while True:
            frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
            if frame["type"] == "state":
                return frame


def test_three_hundred_players_through_three_processes_are_each_seated_once_in_threes(
    server_process: ServerFactory, redis_url: str
) -> None:
    servers = [server_process(args=QUICK_MATCH_LIMITS) for _ in range(3)]
    seated = asyncio.run(run_players([s.url for s in servers], 300, rate=200.0, poll=0.2, seed=11))
    assert len({s.player for s in seated}) == 300
    tables = Counter(s.table for s in seated)
    assert set(tables.values()) == {3}
    by_table: dict[str, list[int]] = {}
    for s in seated:
        by_table.setdefault(s.table, []).append(s.seat)
    assert all(sorted(seats) == [0, 1, 2] for seats in by_table.values())
    # Each seat's stored hash is its own player's token: nobody else can sit there.
    for s in seated:
        kind, stored = seat_hashes(redis_url, s.table)[s.seat]
        assert (kind, stored) == ("human", hash_token(s.token))
    sample = seated[0]
    frame = asyncio.run(first_state(servers[2].ws_url, sample.table, sample.token))
    assert frame["view"]["seat"] == sample.seat


async def make_players(url: str, count: int) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        made = [await http.post("/api/players") for _ in range(count)]
    return [m.json() for m in made]


async def pair_without_a_table(redis_url: str, players: list[dict[str, Any]]) -> list[str]:
    """Pair the players as a process would, then "die" before making their table."""
    client = redis.asyncio.Redis.from_url(redis_url)
    mm = Matchmaker(client, wait_ms=60_000, drop_ms=60_000, seat_ttl_ms=600_000, max_queued=10)
    tokens = [new_token() for _ in players]
    group = None
    for player, token in zip(players, tokens, strict=True):
        p = player["player"]
        member = Member(p["id"], p["name"], p["colour"], hash_token(token))
        _, group, _ = await mm.join(member, "classic:1", "orphan-table-0001")
    await client.aclose()
    assert group is not None
    return tokens


def test_a_group_whose_pairing_process_died_gets_its_table_from_a_players_poll(
    server_process: ServerFactory, redis_url: str
) -> None:
    server = server_process(args=QUICK_MATCH_LIMITS)
    players = asyncio.run(make_players(server.url, 3))
    tokens = asyncio.run(pair_without_a_table(redis_url, players))
    headers = {"Authorization": f"Bearer {players[1]['credential']}"}
    place = httpx.get(f"{server.url}/api/match", headers=headers, timeout=60).json()
    assert (place["status"], place["table"]) == ("seated", "orphan-table-0001")
    # The group's seat order is the queue's: joins in one millisecond sort by player
    # id, so the test reads player 1's seat from the table rather than assuming it.
    stored = seat_hashes(redis_url, "orphan-table-0001")
    assert sorted(stored) == sorted(("human", hash_token(t)) for t in tokens)
    assert stored[place["seat"]] == ("human", hash_token(tokens[1]))
    frame = asyncio.run(first_state(server.ws_url, "orphan-table-0001", tokens[1]))
    assert frame["view"]["seat"] == place["seat"]


def test_a_lone_player_is_seated_with_bots_once_the_wait_is_over(
    server_process: ServerFactory, redis_url: str
) -> None:
    server = server_process(args=[*QUICK_MATCH_LIMITS, "--match-wait", "1s"])
    (player,) = asyncio.run(make_players(server.url, 1))
    headers = {"Authorization": f"Bearer {player['credential']}"}
    joined = httpx.post(
        f"{server.url}/api/match", headers=headers, json={"deals": 5}, timeout=60
    ).json()
    assert joined["status"] == "queued"
    place = joined
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
        # Waits on the server's answer, not on time: each poll says queued until seated.
        while place["status"] == "queued":
            place = http.get("/api/match").json()
    assert place["status"] == "seated"
    stored = seat_hashes(redis_url, place["table"])
    assert stored == [("human", hash_token(joined["token"])), ("bot", None), ("bot", None)]
