"""How long settling one finished match takes (server.ratings.store), on a real Redis.

An embedded redis-server (its unix socket) and one client: ``--matches`` matches of
three identified players each, drawn from a pool of ``--players``, settled one after
another as the rating worker does (freeze, apply per player, rank); prints the time
per settle (p50, p99) and settles a second.  A repeated settle (a retry) is timed
apart: it reads the frozen result and finds every marker set.

    python -m bench.rating_settle --matches 2000 --players 300
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

import redis.asyncio as aioredis

from server.players import PlayerStore
from server.ratings import MatchRecord, RatingStore, SeatLine
from server.redis_embedded import EmbeddedRedis

__all__ = ["main"]

DAY = 86400


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms"


async def run(url: str, matches: int, players: int, seed: int) -> None:
    client = aioredis.Redis.from_url(url)
    store = RatingStore(
        client,
        retention_seconds=30 * DAY,
        player_ttl_seconds=180 * DAY,
        board_size=1000,
        table_ttl_seconds=7 * DAY,
    )
    identities = PlayerStore(client, 180 * DAY)
    pool = [(await identities.create())[0].id for _ in range(players)]
    rng = random.Random(seed)
    records = []
    for n in range(matches):
        table = f"bench{n:08d}"
        seated = rng.sample(pool, 3)
        points = [rng.randint(-30, 30) for _ in range(3)]
        lines = []
        for seat, player in enumerate(seated):
            token = f"h{n}-{seat}"
            await store.seat_player(table, seat, player, token)
            lines.append(SeatLine(seat, True, token, points[seat], rng.randint(0, 1), 0, 0))
        records.append(MatchRecord(table, 0, "classic", 1, tuple(lines)))
    first: list[float] = []
    started = time.perf_counter()
    for record in records:
        t0 = time.perf_counter()
        await store.settle(record)
        first.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - started
    again: list[float] = []
    for record in records[: min(500, matches)]:
        t0 = time.perf_counter()
        await store.settle(record)
        again.append(time.perf_counter() - t0)
    print(f"{matches} matches, {players} players")
    print(f"settle: {_ms(first)}; {matches / elapsed:.0f} matches/s on one client")
    print(f"retry of a settled match: {_ms(again)}")
    await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--players", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis") as redis:
        asyncio.run(run(redis.url, args.matches, args.players, args.seed))


if __name__ == "__main__":
    main()
