"""``GET /api/tables/{id}/history`` over a real socket: pages, bad pages, and the
budgets per client address and per seat (a real Redis, uvicorn in-process)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import msgspec
import pytest

from server.config import Settings
from server.rooms.history import History, history
from tests.server.test_app import Client, LiveServer, create_table, log_of, play_to_result, run_live

# Requests a seat, and an address, may make before the budget says wait.
BUDGET = 3


@pytest.fixture
async def live(redis_url: str, client_dir: Path) -> AsyncIterator[LiveServer]:
    # The test's requests come "from" addresses a trusted proxy (this host) names.
    settings = Settings(
        client_dir=client_dir,
        allow_fixed_seeds=True,
        tables_per_minute=10_000,
        actions_per_second=1000,
        trusted_proxies=("127.0.0.1",),
        history_per_minute=BUDGET,
        history_deals=1,
    )
    async for server in run_live(settings, redis_url):
        yield server


@pytest.fixture
async def http(live: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as client:
        yield client


async def ask(
    http: httpx.AsyncClient, table: str, token: str, address: str, query: str = ""
) -> httpx.Response:
    return await http.get(
        f"/api/tables/{table}/history{query}",
        headers={"Authorization": f"Bearer {token}", "X-Forwarded-For": address},
    )


async def test_pages_of_the_finished_deals_are_those_a_fresh_replay_gives(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0, deals=5)
    token = table["seats"][0]["token"]
    client = await Client.join(live.ws_url, table["table"], token)
    end = await play_to_result(client, await client.next("state"))
    await client.send({"type": "next_deal", "version": end["version"]})
    await play_to_result(client, await client.next("state"))
    await client.close()
    loaded = await live.store.load(table["table"])
    assert loaded is not None
    meta, entries = loaded
    for page in (0, 1):
        answer = await ask(http, table["table"], token, f"10.0.0.{page}", f"?page={page}")
        assert answer.status_code == 200, answer.text
        found = msgspec.json.decode(answer.content, type=History)
        assert found == history(meta, entries, page=page, page_deals=1)
        assert [(d.match_no, d.deal_no) for d in found.deals] == [(0, 2 - page)]
        assert found.pages == 2
    # Asked again after more play, the answer holds the new deal (the cache read on).
    client = await Client.join(live.ws_url, table["table"], token)
    frame = await client.next("state")
    await client.send({"type": "next_deal", "version": frame["version"]})
    await play_to_result(client, await client.next("state"))
    await client.close()
    answer = await ask(http, table["table"], token, "10.0.0.2")
    newest = msgspec.json.decode(answer.content, type=History)
    assert [(d.match_no, d.deal_no) for d in newest.deals] == [(0, 3)]
    assert newest == history(meta, await log_of(live.store, table["table"]), page_deals=1)


@pytest.mark.parametrize("query", ["?page=x", "?page=-1", "?page=1e3", "?page=", "?page=1"])
async def test_a_bad_page_gets_400_bad_page_with_a_reason(
    http: httpx.AsyncClient, query: str
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=5000)
    answer = await ask(http, table["table"], table["seats"][0]["token"], "10.0.1.1", query)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "bad_page"
    assert "page must be" in error["message"]


async def test_an_address_has_a_budget_spent_even_by_refused_requests(
    http: httpx.AsyncClient,
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=5000)
    for _ in range(BUDGET):
        assert (await ask(http, table["table"], "not-a-token", "10.0.2.1")).status_code == 401
    refused = await ask(http, table["table"], table["seats"][0]["token"], "10.0.2.1")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert int(refused.headers["retry-after"]) >= 1
    # Another address is not held back by it.
    assert (await ask(http, table["table"], "not-a-token", "10.0.2.2")).status_code == 401


async def test_a_seat_has_a_budget_across_addresses(http: httpx.AsyncClient) -> None:
    table = await create_table(http, seed=4, humans=2, bot_speed_ms=5000)
    first, second = (seat["token"] for seat in table["seats"][:2])
    for n in range(BUDGET):
        assert (await ask(http, table["table"], first, f"10.0.3.{n}")).status_code == 200
    refused = await ask(http, table["table"], first, "10.0.3.99")
    assert refused.status_code == 429
    assert "seat" in refused.json()["error"]["message"]
    # The table's other seat still has its own.
    assert (await ask(http, table["table"], second, "10.0.3.99")).status_code == 200
