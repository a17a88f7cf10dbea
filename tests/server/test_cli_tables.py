"""``paodekuai tables delete``: the operator removes tables straight from Redis."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis

from server.cli import main
from server.rooms.store import TableStore
from server.rooms.tables import CreateTableRequest, create_table


async def _create(redis_url: str, count: int) -> list[str]:
    client = aioredis.Redis.from_url(redis_url)
    store = TableStore(client, 3600)
    try:
        return [(await create_table(store, CreateTableRequest())).table for _ in range(count)]
    finally:
        await store.aclose()
        await client.aclose()


def test_delete_removes_the_tables_named_and_says_which_were_not_there(
    redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    gone, kept = asyncio.run(_create(redis_url, 2))
    status = main(["tables", "delete", "--redis-url", redis_url, "--", gone, "nosuchtable"])
    assert status == 1
    assert capsys.readouterr().out.splitlines() == [f"deleted {gone}", "not found nosuchtable"]
    client = redis.Redis.from_url(redis_url)
    try:
        assert not client.exists(f"pdk:{{{gone}}}:meta")
        assert client.exists(f"pdk:{{{kept}}}:meta")
    finally:
        client.close()
    assert main(["tables", "delete", "--redis-url", redis_url, "--", kept]) == 0


def test_an_id_that_begins_with_a_dash_is_deleted_after_a_double_dash(
    redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Table ids are URL-safe base64, so one in 64 begins with "-", which argparse
    # would read as an option: "--" ends the options (docs/operations.md says so).
    assert main(["tables", "delete", "--redis-url", redis_url, "--", "-abc"]) == 1
    assert capsys.readouterr().out.splitlines() == ["not found -abc"]


def test_delete_without_a_reachable_redis_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PAODEKUAI_REDIS_URL", raising=False)
    assert main(["tables", "delete", "--data-dir", str(tmp_path), "abc"]) == 2
    assert "no Redis at" in capsys.readouterr().err
    gone = f"unix://{tmp_path}/nothing.sock"
    assert main(["tables", "delete", "--redis-url", gone, "abc"]) == 2
    assert "error: Redis" in capsys.readouterr().err
