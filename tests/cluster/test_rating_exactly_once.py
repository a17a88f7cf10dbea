"""A finished match is rated exactly once, across a SIGKILL of its owner right after
the match ended and a reload by other processes (server.ratings, real processes)."""

from __future__ import annotations

import json
import urllib.request
from typing import TYPE_CHECKING, Any

import redis
from cluster_helpers import Player, create_table, until

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess


def post(base_url: str, path: str, credential: str | None = None) -> dict[str, Any]:
    request = urllib.request.Request(f"{base_url}{path}", data=b"{}", method="POST")
    request.add_header("Content-Type", "application/json")
    if credential is not None:
        request.add_header("Authorization", f"Bearer {credential}")
    with urllib.request.urlopen(request, timeout=10) as response:
        body: dict[str, Any] = json.loads(response.read())
        return body


def get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as response:
        body: dict[str, Any] = json.loads(response.read())
        return body


class UntilMatchOver(Player):
    """A scripted seat that stops acting once the match is over (no new match)."""

    over = False

    async def _on_frame(self, ws: Any, frame: dict[str, Any]) -> None:
        if frame.get("type") == "state" and frame["view"]["match_over"]:
            self.over = True
            self.told.append((frame["version"], frame["events"]))
            return
        await super()._on_frame(ws, frame)


def matches_of(client: redis.Redis, player: str) -> int:
    return int(client.hget(f"pdk:player:{{{player}}}:stats", "matches") or 0)


async def reload_on(process: ServerProcess, table: str, token: str) -> None:
    """Open the table on ``process`` (a watcher that never acts) and wait for a state."""
    watcher = UntilMatchOver([process.ws_url], table, token, 0, acts=False)
    watcher.start()
    try:
        await watcher.wait_told()
    finally:
        await watcher.stop()


async def test_a_match_ended_then_its_owner_killed_is_rated_once_by_the_next_owners(
    server_process: ServerFactory, redis_url: str
) -> None:
    client = redis.Redis.from_url(redis_url)
    first = server_process()
    credential = post(first.url, "/api/players")["credential"]
    player = credential.partition(".")[0]
    created = create_table(first.url, humans=2, bots=["easy"], bot_speed_ms=0, deals=1)
    table, tokens = created["table"], [s["token"] for s in created["seats"]]
    # The player takes seat 1 through the table's room code, as a friend would.
    joined = post(first.url, f"/api/codes/{created['code']}/join", credential)
    assert (joined["table"], joined["seat"]) == (table, 1)
    # Rating fails on the first owner until the test lets it: its job is still owed
    # when the process dies.
    stats_key = f"pdk:player:{{{player}}}:stats"
    client.set(stats_key, "not a hash")
    seats = [
        UntilMatchOver([first.ws_url], table, tokens[0], 0),
        UntilMatchOver([first.ws_url], table, joined["token"], 1),
    ]
    for seat in seats:
        seat.start()
    try:
        await until(lambda: all(s.over for s in seats), "the match to end")
        await until(lambda: "rating try 1 failed" in first.log_text(), "a failed rating try")
    finally:
        for seat in seats:
            await seat.stop()
    first.kill()
    client.delete(stats_key)
    assert matches_of(client, player) == 0

    second = server_process()
    await reload_on(second, table, tokens[0])
    await until(lambda: matches_of(client, player) == 1, "the new owner to rate the match")
    second.kill()
    # A third owner loads the same finished match: the job runs again and counts nothing.
    third = server_process()
    await reload_on(third, table, tokens[0])
    await until(lambda: "match 0 settled" in third.log_text(), "the third owner's job")
    assert matches_of(client, player) == 1
    profile = get(f"{third.url}/api/players/{player}")
    assert profile["stats"]["matches"] == 1
    assert profile["ratings"][0]["track"] == "bots"
    assert profile["last"]["match"] == 0
    board = get(f"{third.url}/api/leaderboard?track=bots")
    assert [row["id"] for row in board["rows"]] == [player]
    client.close()
