"""Cluster benchmark: the same load through 1, 2 and 3 ``paodekuai serve`` processes.

One redis-server (the embedded one's binary and configuration: AOF, fsync
always) serves every process.  Each table has three scripted human seats and
no bots, so every action is a measured round trip: seat ``s`` of table ``t``
joins through process ``(t + s) % n``, seat 0 first (its process becomes the
owner), so with 2 or 3 processes most seats are forwarded through Redis to the
owner.  A seat on its turn waits 0.5-1.5 x ``--think``, plays its first hint
or passes, and times the round trip to the state that shows its action.
Printed per process count: actions/s (the growth of every log in Redis), p50
and p99 round trip for sockets on the owner (local) and on another process
(forwarded), and the machine's load.

    python bench/cluster.py --tables 30 --duration 15

Bounded: each run stops after ``--duration`` seconds; everything binds
127.0.0.1 and is stopped on exit.  A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
import websockets

from bench.server import BENCH_LIMITS, REPO_ROOT, free_port, http_json, proc_cpu_seconds
from server.redis_embedded import EmbeddedRedis

__all__ = ["main"]


@dataclass
class Seat:
    table: str
    token: str
    seat: int
    url: str
    local: bool
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _die_with_us() -> None:
    """preexec_fn: the server gets SIGTERM if this bench dies (Linux), never outlives it."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


def cpu(pid: int) -> float:
    user, system = proc_cpu_seconds(pid)
    return user + system


def start_servers(
    count: int, redis_url: str, logs: Path, extra: Sequence[str] = ()
) -> list[tuple[subprocess.Popen[bytes], str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAODEKUAI_")}
    started = []
    for index in range(count):
        port = free_port()
        with (logs / f"server-{count}-{index}.log").open("ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "server", "serve", "--host", "127.0.0.1",
                 "--port", str(port), "--redis-url", redis_url, "--log-level", "warning",
                 *BENCH_LIMITS, *extra],
                cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, preexec_fn=_die_with_us,
            )  # fmt: skip
        started.append((proc, f"http://127.0.0.1:{port}"))
    deadline = time.monotonic() + 60
    for proc, url in started:
        while True:
            try:
                if http_json(f"{url}/healthz").get("ok"):
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server {url} did not start")
            time.sleep(0.1)
    return started


def stop_servers(started: list[tuple[subprocess.Popen[bytes], str]]) -> None:
    for proc, _ in started:
        proc.terminate()
    for proc, _ in started:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def play(seat: Seat, stop_at: float, think: float, rng: random.Random) -> None:
    loop = asyncio.get_running_loop()
    try:
        async with websockets.connect(seat.url, max_size=None) as ws:
            await ws.send(json.dumps({"type": "join", "table": seat.table, "token": seat.token}))
            acted_at = -1
            sent_at: float | None = None
            while loop.time() < stop_at:
                try:
                    raw = await asyncio.wait_for(ws.recv(), max(0.1, stop_at - loop.time()))
                except TimeoutError:
                    return
                frame = json.loads(raw)
                if frame["type"] == "error":
                    seat.errors.append(frame["code"])
                    continue
                if frame["type"] != "state":
                    continue
                version = frame["version"]
                if sent_at is not None and version > acted_at:
                    seat.latencies.append(loop.time() - sent_at)
                    sent_at = None
                view = frame["view"]
                # A full state again at the version it acted on (the table moved to
                # another process): its action may have died with the old owner.
                if version < acted_at or (version == acted_at and frame["events"]):
                    continue
                if view["result"] is not None:
                    if seat.seat != 0:
                        continue
                    message = {"type": "new_match" if view["match_over"] else "next_deal"}
                elif view["turn"] == seat.seat:
                    hints = view["hints"]
                    message = {"type": "play", "cards": hints[0]} if hints else {"type": "pass"}
                else:
                    continue
                acted_at = version
                await asyncio.sleep(think * rng.uniform(0.5, 1.5))
                sent_at = loop.time()
                await ws.send(json.dumps({**message, "version": version}))
    except (websockets.ConnectionClosed, OSError) as exc:
        seat.errors.append(type(exc).__name__)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def run_once(
    processes: int, args: argparse.Namespace, redis_url: str, redis_pid: int, logs: Path
) -> dict[str, Any]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    started = start_servers(processes, redis_url, logs)
    try:
        urls = [url for _, url in started]
        seats: list[Seat] = []
        for t in range(args.tables):
            table = http_json(
                f"{urls[t % processes]}/api/tables", {"humans": 3, "bots": [], "deals": 10}
            )
            for s in range(3):
                url = urls[(t + s) % processes]
                ws = url.replace("http://", "ws://") + "/ws"
                token = table["seats"][s]["token"]
                seats.append(Seat(table["table"], token, s, ws, local=s == 0 or processes == 1))
        loop = asyncio.get_running_loop()
        stop_at = loop.time() + args.warmup + args.duration
        rng = random.Random(args.seed)
        # Seat 0 of every table first: its process becomes the owner.
        tasks = [
            asyncio.create_task(play(s, stop_at, args.think, rng)) for s in seats if s.seat == 0
        ]
        await asyncio.sleep(1.0)
        tasks += [asyncio.create_task(play(s, stop_at, args.think, rng)) for s in seats if s.seat]
        await asyncio.sleep(args.warmup)
        for seat in seats:
            seat.latencies.clear()
        keys = [f"pdk:{{{s.table}}}:log" for s in seats if s.seat == 0]
        pids = [proc.pid for proc, _ in started]
        before = sum(int(client.llen(k)) for k in keys)
        cpu_before = [cpu(pid) for pid in pids], cpu(redis_pid)
        load_before = os.getloadavg()[0]
        await asyncio.sleep(args.duration)
        after = sum(int(client.llen(k)) for k in keys)
        cpu_after = [cpu(pid) for pid in pids], cpu(redis_pid)
        await asyncio.gather(*tasks)
        owners = {}
        for url in urls:
            owners[url] = http_json(f"{url}/healthz")["tables_owned"]
    finally:
        stop_servers(started)
        client.close()
    local = [x for s in seats if s.local for x in s.latencies]
    forwarded = [x for s in seats if not s.local for x in s.latencies]
    errors = [e for s in seats for e in s.errors if e != "stale_version"]
    actions = max(1, after - before)
    server_cpu = sum(cpu_after[0]) - sum(cpu_before[0])
    return {
        "processes": processes,
        "tables": args.tables,
        "actions_per_s": round((after - before) / args.duration, 1),
        "server_cpu_ms_per_action": round(server_cpu * 1000 / actions, 3),
        "redis_cpu_ms_per_action": round((cpu_after[1] - cpu_before[1]) * 1000 / actions, 3),
        "local": summary(local),
        "forwarded": summary(forwarded),
        "tables_owned": list(owners.values()),
        "errors": len(errors),
        "load_1m": round(max(load_before, os.getloadavg()[0]), 2),
    }


def summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 50) * 1000, 1),
        "p99_ms": round(percentile(values, 99) * 1000, 1),
    }


async def bench(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="pdk-cluster-bench-") as tmp,
        EmbeddedRedis(Path(tmp) / "redis") as server,
    ):
        for processes in args.processes:
            assert server.pid is not None
            result = await run_once(processes, args, server.url, server.pid, Path(tmp))
            print(json.dumps(result), flush=True)
            results.append(result)
        if args.kills:
            result = await failover(args, server.url, Path(tmp))
            print(json.dumps(result), flush=True)
            results.append(result)
    return results


async def grown(client: redis.Redis, key: str, length: int, deadline: float) -> None:
    """Wait until list ``key`` is longer than ``length`` (a guard at ``deadline``)."""
    loop = asyncio.get_running_loop()
    while int(client.llen(key)) <= length:
        if loop.time() > deadline:
            raise RuntimeError(f"{key} did not grow past {length}: no takeover")
        await asyncio.sleep(0.01)


async def failover(args: argparse.Namespace, redis_url: str, logs: Path) -> dict[str, Any]:
    """SIGKILL the owner of a playing table ``--kills`` times (default lease); each
    takeover is the time from the kill to the next action Redis holds."""
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    started = start_servers(3, redis_url, logs)
    takeovers: list[float] = []
    loop = asyncio.get_running_loop()
    try:
        urls = [url for _, url in started]
        names = {http_json(f"{u}/healthz")["process"]: i for i, u in enumerate(urls)}
        table = http_json(
            f"{urls[0]}/api/tables",
            {"humans": 1, "bots": ["easy", "easy"], "deals": 10, "bot_speed_ms": 100},
        )
        key = f"pdk:{{{table['table']}}}:log"
        # One socket on every process, so whichever survives has a reason to take over.
        stop_at = loop.time() + 3600
        watchers = [
            Seat(
                table["table"], table["seats"][0]["token"], 0, u.replace("http", "ws") + "/ws", True
            )
            for u in urls
        ]
        tasks = [
            asyncio.create_task(play(w, stop_at, 0.05, random.Random(i)))
            for i, w in enumerate(watchers)
        ]
        rng = random.Random(args.seed)
        while len(takeovers) < args.kills:
            await asyncio.sleep(1.0 + rng.random())
            raw = client.get(f"pdk:{{{table['table']}}}:lease")
            if not isinstance(raw, bytes):
                continue
            victim = names.get(raw.decode().partition(" ")[2])
            if victim is None:
                continue
            proc = started[victim][0]
            before = int(client.llen(key))
            killed = loop.time()
            proc.kill()
            proc.wait()
            await grown(client, key, before, killed + 60)
            takeovers.append(loop.time() - killed)
            # Back to three processes, the restarted one's sockets reconnect to it.
            started[victim] = start_servers(1, redis_url, logs)[0]
            urls[victim] = started[victim][1]
            names = {http_json(f"{u}/healthz")["process"]: i for i, u in enumerate(urls)}
            tasks[victim].cancel()
            watchers[victim] = Seat(
                table["table"], table["seats"][0]["token"], 0,
                urls[victim].replace("http", "ws") + "/ws", True,
            )  # fmt: skip
            tasks[victim] = asyncio.create_task(play(watchers[victim], stop_at, 0.05, rng))
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        stop_servers(started)
        client.close()
    return {
        "takeover_s": {
            "kills": len(takeovers),
            "p50": round(percentile(takeovers, 50), 2),
            "p99": round(percentile(takeovers, 99), 2),
            "max": round(max(takeovers), 2),
        },
        "lease_s": 3.0,
        "load_1m": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--duration", type=float, default=15.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--think", type=float, default=0.2, help="mean seconds a seat waits")
    parser.add_argument("--processes", type=int, nargs="*", default=[1, 2, 3])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--kills", type=int, default=0, help="then SIGKILL the owner this many times (3 processes)"
    )
    args = parser.parse_args(argv)
    print(
        f"# {platform.node()} {platform.machine()} cpus={os.cpu_count()} "
        f"python={platform.python_version()} load={os.getloadavg()}",
        flush=True,
    )
    asyncio.run(bench(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
