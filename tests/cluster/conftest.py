"""Cluster tests: several real server processes on one real Redis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis


@pytest.fixture
def sync_redis(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()
