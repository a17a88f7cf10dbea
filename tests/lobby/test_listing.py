"""The lobby's live feed (server.lobby.listing) on a real Redis."""

from __future__ import annotations

import asyncio
import json

import pytest
import redis.asyncio as aioredis

from server.lobby.codes import Codes
from server.lobby.listing import LobbyBusy, LobbyFeed

GUARD_SECONDS = 30.0


async def test_every_watcher_of_two_processes_sees_a_table_opened_on_a_third(
    client: aioredis.Redis, redis_url: str
) -> None:
    others = [aioredis.Redis.from_url(redis_url) for _ in range(2)]
    codes = Codes(client, 600, 10)
    feeds = [LobbyFeed(Codes(r, 600, 10), r, 5) for r in others]
    streams = [feed.watch() for feed in feeds for _ in range(2)]
    for stream in streams:
        assert json.loads(await anext(stream)) == {"tables": []}
    code = await codes.register("table-0001", rules="kawu", deals=10, bots="", free=[(1, "t")])
    await codes.open_table(code, 1.0)
    for stream in streams:
        listed = json.loads(await asyncio.wait_for(anext(stream), GUARD_SECONDS))
        assert [t["code"] for t in listed["tables"]] == [code]
    for stream in streams:
        await stream.aclose()
    for feed in feeds:
        await feed.close()
    for r in others:
        await r.aclose()


async def test_a_process_serves_at_most_its_watchers_and_closing_ends_their_streams(
    client: aioredis.Redis,
) -> None:
    feed = LobbyFeed(Codes(client, 600, 10), client, 2)
    streams = [feed.watch() for _ in range(2)]
    for stream in streams:
        await anext(stream)
    with pytest.raises(LobbyBusy):
        await anext(feed.watch())
    waiting = asyncio.ensure_future(anext(streams[0]))
    await feed.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(waiting, GUARD_SECONDS)
    await streams[1].aclose()
    assert feed.watchers == 0
