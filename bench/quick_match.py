"""Quick-match benchmark: many players pressing "play now" through several processes.

One redis-server (the embedded one's binary and configuration) serves ``--processes``
``paodekuai serve`` processes.  ``--players`` players arrive at ``--rate`` a second
(a Poisson stream, fixed seed); each gets an identity from one process, joins the
queue through the next and polls through the one after, every ``--poll`` seconds,
until it learns its seat.  Printed: how many were seated, in how many tables of
how many players, whether anyone was seated twice, and the time from pressing the
button to knowing one's seat (p50, p99), with the machine's load.  The wait for
bots is set far beyond the run, so every table is three people.

    python -m bench.quick_match --players 300 --processes 3 --rate 100

A benchmark, not a test: it asserts nothing (tests/lobby/test_quick_match_processes.py
checks the same run's outcome).  Everything binds 127.0.0.1 and stops on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.cluster import start_servers, stop_servers
from server.redis_embedded import EmbeddedRedis
from server.rooms.tokens import hash_token, new_token

__all__ = ["QUICK_MATCH_LIMITS", "Seated", "main", "run_players", "summary"]

# The simulated players' connections, all of them from one address.
POOL = 200
# Budgets out of the way (every simulated player shares one address) and no bots.  The
# connection cap per address too: a server takes up to the whole pool.  At the default
# (64), a run at load ~12 held more than 64 connections open to one server, which cut
# the extra ones off, and four quick retries all met the full cap.
QUICK_MATCH_LIMITS = [
    "--player-writes-per-minute", "1000000", "--queue-joins-per-minute", "1000000",
    "--queue-polls-per-second", "1000", "--match-wait", "1h", "--queue-drop", "1h",
    "--max-connections-per-client", str(POOL),
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Seated:
    player: str
    table: str
    seat: int
    token: str
    seconds: float


async def _retry(send: Callable[[], Awaitable[httpx.Response]]) -> httpx.Response:
    """A request that is safe to repeat, repeated when the connection drops under it (a
    pooled connection the server closed at the same moment)."""
    failures: list[str] = []
    for _ in range(4):
        try:
            answer = await send()
        except httpx.TransportError as exc:
            failures.append(f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(0.1)
            continue
        answer.raise_for_status()
        return answer
    raise RuntimeError(f"a request failed four times: {failures}")


async def _one(
    http: httpx.AsyncClient, urls: list[str], index: int, delay: float, poll: float
) -> Seated:
    await asyncio.sleep(delay)
    made = await _retry(lambda: http.post(f"{urls[index % len(urls)]}/api/players"))
    player = made.json()
    headers = {"Authorization": f"Bearer {player['credential']}"}
    began = time.monotonic()
    # The seat token is made here and only its hash sent, so a join whose answer is lost
    # is simply sent again: it finds the place the first one got.
    token = new_token()
    body = {"rules": "classic", "token_hash": hash_token(token)}
    join_url = f"{urls[(index + 1) % len(urls)]}/api/match"
    place = (await _retry(lambda: http.post(join_url, headers=headers, json=body))).json()
    poll_url = f"{urls[(index + 2) % len(urls)]}/api/match"
    while place["status"] != "seated":
        if place["status"] != "queued":
            raise RuntimeError(f"player {index} fell out of the queue: {place}")
        await asyncio.sleep(poll)
        answer = await _retry(lambda: http.get(poll_url, headers=headers))
        place = answer.json()
    return Seated(
        player["player"]["id"], place["table"], place["seat"], token, time.monotonic() - began
    )


async def run_players(
    urls: list[str], players: int, *, rate: float, poll: float, seed: int = 7
) -> list[Seated]:
    """Every player's seat, in the order they arrived."""
    rng = random.Random(seed)
    delays: list[float] = []
    at = 0.0
    for _ in range(players):
        delays.append(at)
        at += rng.expovariate(rate)
    # Shorter than the server's keep-alive: a pooled connection is never reused as it closes.
    limits = httpx.Limits(max_connections=POOL, keepalive_expiry=1.0)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        return list(
            await asyncio.gather(*(_one(http, urls, n, delays[n], poll) for n in range(players)))
        )


def summary(seated: list[Seated]) -> str:
    sizes = Counter(Counter(s.table for s in seated).values())
    twice = len(seated) - len({s.player for s in seated})
    times = sorted(s.seconds for s in seated)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return (
        f"seated {len(seated)} players at {sum(sizes.values())} tables "
        f"(tables by players: {dict(sorted(sizes.items()))}), seated twice: {twice}; "
        f"time to seat p50 {statistics.median(times) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=300)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--rate", type=float, default=100.0, help="players arriving a second")
    parser.add_argument("--poll", type=float, default=0.25, help="seconds between polls")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis") as redis:
        logs = Path(os.environ.get("QM_LOGS", tmp))
        started = start_servers(args.processes, redis.url, logs, extra=QUICK_MATCH_LIMITS)
        try:
            urls = [url for _, url in started]
            seated = asyncio.run(run_players(urls, args.players, rate=args.rate, poll=args.poll))
        finally:
            stop_servers(started)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{args.players} players, {args.processes} processes, {args.rate:g}/s arriving, "
        f"polling every {args.poll:g} s: {summary(seated)} (load {load})"
    )


if __name__ == "__main__":
    main()
