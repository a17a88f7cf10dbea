"""Rooms tests run against the real Redis of ``redis_url``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from room_helpers import STORE_TTL_SECONDS

from server.rooms.store import TableStore


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
async def store(redis_client: aioredis.Redis) -> AsyncIterator[TableStore]:
    store = TableStore(redis_client, ttl_seconds=STORE_TTL_SECONDS)
    yield store
    await store.aclose()
