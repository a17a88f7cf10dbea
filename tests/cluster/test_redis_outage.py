"""Redis goes away mid-game and comes back: clients get clear codes, nothing changes
while it is away, and the cluster resumes by itself."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import redis
from cluster_helpers import (
    SCRIPTED_PACE,
    Player,
    check_told_against_log,
    create_table,
    log_of,
    until,
    wait_for_version,
)

from server.redis_embedded import EmbeddedRedis

if TYPE_CHECKING:
    from conftest import ServerFactory


def health_status(url: str) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def down_and_empty(url: str) -> bool:
    """/healthz says Redis is unreachable (503) and the process owns no table."""
    status, body = health_status(url)
    return (status, body["redis"], body["tables_owned"]) == (503, False, 0)


async def test_play_resumes_by_itself_once_redis_is_back(
    server_process: ServerFactory, tmp_path: Path
) -> None:
    own = EmbeddedRedis(tmp_path / "redis")
    url = own.start()
    try:
        args = [*SCRIPTED_PACE, "--lease-ttl", "1.5"]
        servers = [server_process(redis_url=url, args=args) for _ in range(2)]
        client = redis.Redis.from_url(url)
        table = create_table(
            servers[0].url, humans=1, bots=["easy", "easy"], bot_speed_ms=50, deals=10
        )
        tid, token = table["table"], table["seats"][0]["token"]
        players = [
            Player([s.ws_url for s in servers], tid, token, 0),
            Player([s.ws_url for s in reversed(servers)], tid, token, 0, acts=False),
        ]
        for player in players:
            player.start()
        try:
            await wait_for_version(client, tid, 10)
            own.stop()  # SHUTDOWN: everything acknowledged is in the append-only file
            # Every process notices, and the owner's room closes at its first refused write
            # (bots play every 50 ms): nobody serves the table while Redis is away.
            for server in servers:
                await until(lambda server=server: down_and_empty(server.url), f"{server} gave up")
            told = max(p.version for p in players)
            own.start()
            client.close()
            client = redis.Redis.from_url(url)
            # Nothing was announced that Redis does not hold (nothing can be written
            # while it is away, so a version told beyond its log was never written).
            back_at = int(client.llen(f"pdk:{{{tid}}}:log"))
            assert told <= back_at
            await wait_for_version(client, tid, back_at + 10)
        finally:
            for player in players:
                await player.stop()
        meta, entries = log_of(client, tid)
        client.close()
        assert check_told_against_log(meta, entries, players) >= 15
        codes = {code for p in players for code in p.close_codes}
        assert codes <= {4503, 1001, 1006, 1011, None}, codes
    finally:
        own.stop()
