"""The players, codes, lobby and quick-match routes over real sockets: uvicorn
in-process, a real Redis, httpx and the ``websockets`` client."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.config import Settings
from tests.server.test_app import Client, LiveServer, create_table, run_live

GUARD_SECONDS = 30.0
BUDGET = 4


@pytest.fixture
async def live(redis_url: str, client_dir: Path) -> AsyncIterator[LiveServer]:
    # Requests come "from" addresses a trusted proxy (this host) names, so each test
    # picks the address whose budget it spends.
    settings = Settings(
        client_dir=client_dir,
        tables_per_minute=10_000,
        trusted_proxies=("127.0.0.1",),
        player_writes_per_minute=BUDGET,
        codes_per_minute=BUDGET,
        queue_joins_per_minute=BUDGET,
        lobby_watchers_per_minute=BUDGET,
        profiles_per_minute=BUDGET * 2,
    )
    async for server in run_live(settings, redis_url):
        yield server


async def new_player(http: httpx.AsyncClient, address: str) -> tuple[dict[str, Any], str]:
    answer = await http.post("/api/players", headers={"X-Forwarded-For": address})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    return body["player"], body["credential"]


def auth(credential: str, address: str = "10.1.0.1") -> dict[str, str]:
    return {"Authorization": f"Bearer {credential}", "X-Forwarded-For": address}


async def test_a_player_is_made_renamed_recovered_elsewhere_and_deleted(
    http: httpx.AsyncClient,
) -> None:
    player, credential = await new_player(http, "10.0.0.1")
    me = await http.get("/api/players/me", headers=auth(credential))
    assert me.json()["player"] == player
    assert (me.json()["stats"]["matches"], me.json()["ratings"], me.json()["last"]) == (0, [], None)
    renamed = await http.patch(
        "/api/players/me", headers=auth(credential), json={"name": "Mei", "colour": "#009e73"}
    )
    assert renamed.json()["player"] | {"id": ""} == {"id": "", "name": "Mei", "colour": "#009e73"}
    refused = await http.patch("/api/players/me", headers=auth(credential), json={"name": "Anna"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "invalid_name")
    link = (await http.post("/api/players/me/recovery", headers=auth(credential))).json()["link"]
    assert link.startswith("/#recover=")
    moved = await http.post(
        "/api/players/recover",
        json={"code": link.removeprefix("/#recover=")},
        headers={"X-Forwarded-For": "10.0.0.2"},
    )
    assert moved.status_code == 200, moved.text
    new_credential = moved.json()["credential"]
    assert (await http.get("/api/players/me", headers=auth(credential))).status_code == 401
    gone = await http.delete("/api/players/me", headers=auth(new_credential))
    assert gone.json() == {"deleted": player["id"]}
    assert (await http.get("/api/players/me", headers=auth(new_credential))).status_code == 401


async def test_identities_made_from_one_address_are_rate_limited(http: httpx.AsyncClient) -> None:
    for _ in range(BUDGET):
        await new_player(http, "10.0.0.3")
    refused = await http.post("/api/players", headers={"X-Forwarded-For": "10.0.0.3"})
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert int(refused.headers["retry-after"]) >= 1
    await new_player(http, "10.0.0.4")  # another address has its own budget


async def test_a_table_code_seats_a_friend_who_then_joins_the_table(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, humans=2, bots=["easy"])
    code = table["code"]
    looked = await http.get(f"/api/codes/{code.lower()}", headers={"X-Forwarded-For": "10.0.1.1"})
    assert looked.json() == {
        "code": code,
        "rules": "classic",
        "deals": 1,
        "bots": "easy",
        "free": 1,
        "open": False,
    }
    _, credential = await new_player(http, "10.0.1.1")
    joined = await http.post(f"/api/codes/{code}/join", headers=auth(credential, "10.0.1.1"))
    assert joined.status_code == 200, joined.text
    seat = joined.json()
    assert (seat["table"], seat["seat"]) == (table["table"], 1)
    again = await http.post(f"/api/codes/{code}/join", headers=auth(credential, "10.0.1.1"))
    assert again.json()["error"]["code"] == "already_seated"
    friend = await Client.join(live.ws_url, seat["table"], seat["token"])
    frame = await friend.next("state")
    assert frame["view"]["seat"] == 1
    await friend.close()


async def test_code_look_ups_are_rate_limited_and_wrong_codes_explained(
    http: httpx.AsyncClient,
) -> None:
    headers = {"X-Forwarded-For": "10.0.2.1"}
    bad = await http.get("/api/codes/O0I1L0", headers=headers)
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "bad_code")
    unknown = await http.get("/api/codes/ZZZZZZ", headers=headers)
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "unknown_code")
    for _ in range(BUDGET - 2):
        await http.get("/api/codes/ZZZZZZ", headers=headers)
    refused = await http.get("/api/codes/ZZZZZZ", headers=headers)
    assert refused.status_code == 429


async def read_events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield json.loads(line.removeprefix("data: "))


async def test_the_lobby_shows_a_table_its_host_opens_and_drops_it_once_full(
    http: httpx.AsyncClient,
) -> None:
    table = await create_table(http, humans=3)
    code = table["code"]
    host_token = table["seats"][0]["token"]
    friend_token = table["seats"][1]["token"]
    headers = {"X-Forwarded-For": "10.0.3.1"}
    async with http.stream("GET", "/api/lobby/events", headers=headers) as events:
        stream = read_events(events)
        assert await anext(stream) == {"tables": []}
        not_host = await http.post(
            "/api/lobby/open", json={"code": code, "token": friend_token}, headers=headers
        )
        assert (not_host.status_code, not_host.json()["error"]["code"]) == (403, "not_host")
        opened = await http.post(
            "/api/lobby/open", json={"code": code, "token": host_token}, headers=headers
        )
        assert opened.status_code == 200, opened.text
        listed = await asyncio.wait_for(anext(stream), GUARD_SECONDS)
        assert listed["tables"] == [
            {"code": code, "rules": "classic", "deals": 1, "bots": "", "free": 2}
        ]
        for address in ("10.0.3.2", "10.0.3.3"):
            await http.post(f"/api/codes/{code}/join", headers={"X-Forwarded-For": address})
            listed = await asyncio.wait_for(anext(stream), GUARD_SECONDS)
        assert listed == {"tables": []}


async def test_three_players_pressing_quick_match_sit_at_one_table_in_three_seats(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    players = [await new_player(http, f"10.0.4.{n}") for n in range(3)]
    tokens = []
    for n, (_, credential) in enumerate(players):
        joined = await http.post(
            "/api/match", headers=auth(credential, f"10.0.4.{n}"), json={"rules": "classic"}
        )
        assert joined.status_code == 201, joined.text
        tokens.append(joined.json()["token"])
    assert joined.json()["status"] == "seated"
    places = [
        (await http.get("/api/match", headers=auth(credential))).json() for _, credential in players
    ]
    assert {p["status"] for p in places} == {"seated"}
    assert len({p["table"] for p in places}) == 1
    assert sorted(p["seat"] for p in places) == [0, 1, 2]
    meta = await live.store.load_meta(places[0]["table"])
    assert meta is not None
    assert [s.name for s in meta.seats] == [p["name"] for p, _ in players]
    for place, token in zip(places, tokens, strict=True):
        client = await Client.join(live.ws_url, place["table"], token)
        frame = await client.next("state")
        assert frame["view"]["seat"] == place["seat"]
        await client.close()
    again = await http.post("/api/match", headers=auth(players[0][1]), json={})
    assert again.json()["error"]["code"] == "already_matched"


async def test_quick_match_refuses_strangers_unknown_queues_and_a_flood_of_joins(
    http: httpx.AsyncClient,
) -> None:
    stranger = await http.post("/api/match", json={})
    assert stranger.status_code == 401
    _, credential = await new_player(http, "10.0.5.1")
    odd = await http.post("/api/match", headers=auth(credential), json={"deals": 7})
    assert (odd.status_code, odd.json()["error"]["code"]) == (400, "bad_request")
    for _ in range(BUDGET - 1):
        await http.post("/api/match", headers=auth(credential), json={})
        await http.delete("/api/match", headers=auth(credential))
    refused = await http.post("/api/match", headers=auth(credential), json={})
    assert refused.status_code == 429


async def test_a_join_sent_again_with_its_own_token_hash_finds_the_same_place(
    http: httpx.AsyncClient,
) -> None:
    _, credential = await new_player(http, "10.0.6.1")
    mine = hashlib.sha256(b"my own seat token").hexdigest()
    body = {"rules": "kawu", "token_hash": mine}
    first = await http.post("/api/match", headers=auth(credential, "10.0.6.1"), json=body)
    assert first.status_code == 201, first.text
    assert "token" not in first.json()
    again = await http.post("/api/match", headers=auth(credential, "10.0.6.1"), json=body)
    assert again.status_code == 200
    assert again.json()["queue"] == first.json()["queue"] == "kawu:1"
    other = {"rules": "kawu", "token_hash": "0" * 64}
    refused = await http.post("/api/match", headers=auth(credential, "10.0.6.1"), json=other)
    assert refused.json()["error"]["code"] == "already_matched"
    bad = {"token_hash": "not-a-digest"}
    assert (await http.post("/api/match", headers=auth(credential), json=bad)).status_code == 400


async def test_profiles_and_leaderboards_refuse_bad_questions_and_are_rate_limited(
    http: httpx.AsyncClient,
) -> None:
    player, _ = await new_player(http, "10.7.0.1")
    here = {"X-Forwarded-For": "10.7.0.2"}
    profile = await http.get(f"/api/players/{player['id']}", headers=here)
    assert profile.json()["player"] == player
    assert "secret" not in profile.text
    assert (await http.get("/api/players/nobody-at-all-xx", headers=here)).status_code == 404
    for query, code in [
        ("preset=poker", "bad_preset"),
        ("track=aliens", "bad_track"),
        ("limit=0", "bad_limit"),
        ("limit=101", "bad_limit"),
        ("limit=x", "bad_limit"),
    ]:
        refused = await http.get(f"/api/leaderboard?{query}", headers=here)
        assert (refused.status_code, refused.json()["error"]["code"]) == (400, code)
    ok = await http.get("/api/leaderboard?preset=kawu&track=bots", headers=here)
    assert ok.json() == {"preset": "kawu", "track": "bots", "rows": []}
    assert (await http.get("/api/leaderboard", headers=here)).status_code == 429
