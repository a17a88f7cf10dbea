"""A later quick-match player takes a bot's seat, through two real server processes on
one real Redis: the table's owner is one process, the newcomer's socket the other's."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import websockets

from bench.quick_match import QUICK_MATCH_LIMITS
from server.rooms.tokens import hash_token
from tests.conftest import ServerFactory
from tests.lobby.test_quick_match_processes import GUARD_SECONDS, make_players, seat_hashes

# The wait is the shortest the setting takes: the test waits on the server's answers.
ARGS = [*QUICK_MATCH_LIMITS, "--match-wait", "1s"]


class Socket:
    """A game socket's frames, read on demand."""

    def __init__(self, ws: websockets.ClientConnection) -> None:
        self.ws = ws

    async def next(self, *kinds: str) -> dict[str, Any]:
        while True:
            frame: dict[str, Any] = json.loads(
                await asyncio.wait_for(self.ws.recv(), GUARD_SECONDS)
            )
            if not kinds or frame["type"] in kinds:
                return frame

    async def send(self, **message: Any) -> None:
        await self.ws.send(json.dumps(message))


async def scenario(
    redis_url: str, first_url: str, first_ws: str, second_url: str, second_ws: str
) -> None:
    a, b = await make_players(first_url, 2)
    # A waits alone past the wait (asking process 1) and is seated with two bots.
    async with httpx.AsyncClient(
        base_url=first_url, headers={"Authorization": f"Bearer {a['credential']}"}
    ) as http:
        place = (await http.post("/api/match", json={"deals": 5})).json()
        a_token = place["token"]
        while place["status"] == "queued":
            place = (await http.get("/api/match")).json()
    table = place["table"]
    assert seat_hashes(redis_url, table) == [
        ("human", hash_token(a_token)),
        ("bot", None),
        ("bot", None),
    ]
    async with websockets.connect(first_ws) as raw_a:
        host = Socket(raw_a)
        await host.send(type="join", table=table, token=a_token)
        # The bots play until it is A's turn: mid-deal, and nothing moves until A does.
        frame = await host.next("state")
        while frame["view"]["turn"] != 0 or frame["view"]["result"] is not None:
            frame = await host.next("state")
        # B presses quick match on the other process: given a bot's seat, at once.
        async with httpx.AsyncClient(
            base_url=second_url, headers={"Authorization": f"Bearer {b['credential']}"}
        ) as http:
            given = (await http.post("/api/match", json={"deals": 5})).json()
        assert (given["status"], given["table"], given["joins"]) == ("seated", table, "next_deal")
        seat = given["seat"]
        async with websockets.connect(second_ws) as raw_b:
            late = Socket(raw_b)
            await late.send(type="join", table=table, token=given["token"])
            # Mid-deal B watches (the public view) and may not act for the bot.
            watched = await late.next("watch")
            assert watched["view"]["result"] is None
            assert watched["table"]["seats"][seat]["kind"] == "bot"
            await late.send(type="pass", version=watched["version"])
            assert (await late.next("error"))["code"] == "spectator"
            # A lets the deal run to its end: bots at once, A's seat on auto.
            await host.send(type="bot_speed", version=frame["version"], ms=0)
            await host.send(type="auto", version=frame["version"], on=True)
            mine = await late.next("state")
            assert mine["view"]["seat"] == seat
            assert mine["view"]["result"] is not None
            assert mine["table"]["seats"][seat]["name"] == b["player"]["name"]
            # A sees B at the former bot's seat, connected.
            while True:
                shown = await host.next("state")
                if shown["table"]["seats"][seat]["connected"] and shown["view"]["result"]:
                    break
            assert shown["table"]["seats"][seat]["kind"] == "human"
            assert shown["table"]["seats"][seat]["name"] == b["player"]["name"]
    stored = seat_hashes(redis_url, table)
    assert stored[seat] == ("human", hash_token(given["token"]))
    assert stored[3 - seat] == ("bot", None)


def test_a_second_player_takes_a_bot_seat_of_a_waiting_players_table_at_the_next_deal(
    server_process: ServerFactory, redis_url: str
) -> None:
    first, second = server_process(args=ARGS), server_process(args=ARGS)
    asyncio.run(scenario(redis_url, first.url, first.ws_url, second.url, second.ws_url))
