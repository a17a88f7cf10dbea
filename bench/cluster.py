"""Cluster benchmark: the same load through 1, 2 and 3 ``paodekuai serve`` processes.

One redis-server (the embedded one's binary and configuration: AOF, fsync
always) serves every process.  Each table has three scripted human seats and
no bots, so every action is a measured round trip.  Two ways to reach the
processes:

- ``--proxy``: Debian's nginx on the project's own deploy/nginx.conf (the file
  compose mounts; only its addresses rewritten, and its per-address connection
  cap lifted, since every bench socket comes from 127.0.0.1) in front of the
  processes; every socket opens ``/ws?table=<id>``, as the browser client does.
- without it, seat ``s`` of table ``t`` joins process ``(t + s) % n`` directly,
  seat 0 first (its process becomes the owner): round robin as it was, most
  seats forwarded through Redis to the owner.

A seat on its turn waits 0.5-1.5 x ``--think``, plays its first hint or passes,
and times the round trip to the state that shows its action.  Printed per
process count: actions/s (the growth of every log in Redis); server CPU per
action per process and summed (and Redis's, and the proxy's); the share of the
game frames (client frames sent plus frames received, counted by the bench)
that crossed between processes (the servers' own ``frames_forwarded``, where
they report it) and Redis PUBLISH calls per game frame (any version); p50 and
p99 round trip; the 1-minute load average before and after.

    python -m bench.cluster --proxy --tables 30 --duration 15 --pin
    python -m bench.cluster --proxy --server-root /tmp/base   # another checkout, same bench

``--pin`` pins server process ``i`` to CPU ``i % cpus`` (sched_setaffinity, as
``taskset -c`` would), so on a small machine processes do not wander.  Given
more CPUs than the most processes asked for (``taskset -c`` on the bench limits
what it is given), server ``i`` gets CPU ``i`` to itself and the bench (the
client), Redis and nginx keep to the rest.  Bounded:
each run stops after ``--duration`` seconds; everything binds 127.0.0.1 and is
stopped on exit.  A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import functools
import json
import os
import platform
import random
import re
import shutil
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


NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


@dataclass
class Seat:
    table: str
    token: str
    seat: int
    url: str
    local: bool
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Game frames this seat's socket sent and received (pings none: the bench sends none).
    frames: int = 0


def _die_with_us(core: int | None = None) -> None:
    """preexec_fn: the server gets SIGTERM if this bench dies (Linux), never outlives it;
    pinned to ``core`` when given (before exec, so every thread it starts inherits it)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    if core is not None:
        os.sched_setaffinity(0, {core})


def cpu(pid: int) -> float:
    user, system = proc_cpu_seconds(pid)
    return user + system


def start_servers(
    count: int,
    redis_url: str,
    logs: Path,
    root: Path = REPO_ROOT,
    pin: bool = False,
    extra: Sequence[str] = (),
    cores: Sequence[int] = (),
) -> list[tuple[subprocess.Popen[bytes], str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAODEKUAI_")}
    cpus = list(cores) or sorted(os.sched_getaffinity(0))
    started = []
    for index in range(count):
        port = free_port()
        core = cpus[index % len(cpus)] if pin else None
        with (logs / f"server-{count}-{index}.log").open("ab") as log:
            # cwd ``root`` puts that checkout's ``server`` package first on sys.path.
            proc = subprocess.Popen(
                [sys.executable, "-m", "server", "serve", "--host", "127.0.0.1",
                 "--port", str(port), "--redis-url", redis_url, "--log-level", "warning",
                 *BENCH_LIMITS, *extra],
                cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, preexec_fn=functools.partial(_die_with_us, core),
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


def proxy_config(source: Path, urls: list[str], port: int) -> str:
    """``source`` (deploy/nginx.conf) in front of ``urls`` and listening on ``port``:
    its app addresses rewritten, spare ones dropped, the per-address cap lifted."""
    text = source.read_text()
    servers = re.findall(r"^[ \t]*server app\d+:8000[^\n]*\n", text, re.MULTILINE)
    if len(servers) < len(urls):
        raise RuntimeError(f"{source} names {len(servers)} replicas, {len(urls)} wanted")
    for index, line in enumerate(servers):
        if index < len(urls):
            address = urls[index].removeprefix("http://")
            text = text.replace(line, line.replace(f"app{index + 1}:8000", address))
        else:
            text = text.replace(line, "")
    text = text.replace("listen 8000;", f"listen 127.0.0.1:{port};")
    # Every bench socket comes from 127.0.0.1: the per-address cap would refuse most.
    return re.sub(r"limit_conn per_client \d+;", "limit_conn per_client 65000;", text)


def start_proxy(source: Path, urls: list[str], prefix: Path) -> tuple[subprocess.Popen[bytes], str]:
    """nginx on ``source`` in front of ``urls``; its process and base URL."""
    prefix.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = prefix / "nginx.conf"
    config.write_text(proxy_config(source, urls, port))
    argv = [NGINX, "-c", str(config), "-p", str(prefix), "-e", str(prefix / "error.log"),
            "-g", f"daemon off; pid {prefix / 'nginx.pid'};"]  # fmt: skip
    with (prefix / "out.log").open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_us)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if http_json(f"{url}/healthz").get("ok"):
                return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"nginx did not start: {(prefix / 'out.log').read_text()}")
        time.sleep(0.1)


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its children (nginx's master and workers)."""
    total = cpu(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return total
    for child in children:
        with contextlib.suppress(OSError):
            total += cpu(int(child))
    return total


def frames_forwarded(urls: list[str]) -> int | None:
    """Game frames the servers at ``urls`` sent each other so far (None: a server of a
    release that does not count them)."""
    counts = [http_json(f"{url}/healthz").get("frames_forwarded") for url in urls]
    return None if None in counts else sum(counts)


def publishes(client: redis.Redis) -> int:
    """PUBLISH calls Redis has served (the bus between processes)."""
    stats: dict[str, Any] = client.info("commandstats")
    return int(stats.get("cmdstat_publish", {}).get("calls", 0))


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
            seat.frames += 1
            acted_at = -1
            sent_at: float | None = None
            while loop.time() < stop_at:
                try:
                    async with asyncio.timeout(max(0.1, stop_at - loop.time())):
                        raw = await ws.recv()
                except TimeoutError:
                    return
                seat.frames += 1
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
                seat.frames += 1
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
    root: Path = args.server_root
    started = start_servers(processes, redis_url, logs, root, args.pin, cores=args.server_cores)
    proxy: subprocess.Popen[bytes] | None = None
    try:
        urls = [url for _, url in started]
        if args.proxy:
            proxy, base = start_proxy(
                root / "deploy" / "nginx.conf", urls, logs / f"nginx-{processes}"
            )
        seats: list[Seat] = []
        for t in range(args.tables):
            create_at = base if args.proxy else urls[t % processes]
            table = http_json(f"{create_at}/api/tables", {"humans": 3, "bots": [], "deals": 10})
            for s in range(3):
                token = table["seats"][s]["token"]
                if args.proxy:
                    ws = f"{base.replace('http://', 'ws://')}/ws?table={table['table']}"
                    on_owner = True  # as far as the bench knows: the servers count forwarding
                else:
                    ws = urls[(t + s) % processes].replace("http://", "ws://") + "/ws"
                    on_owner = s == 0 or processes == 1
                seats.append(Seat(table["table"], token, s, ws, local=on_owner))
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
        frames_before = sum(s.frames for s in seats)
        publish_before = publishes(client)
        forwarded_before = frames_forwarded(urls)
        cpu_before = [cpu(pid) for pid in pids], cpu(redis_pid)
        proxy_before = tree_cpu(proxy.pid) if proxy is not None else 0.0
        load_before = os.getloadavg()[0]
        await asyncio.sleep(args.duration)
        after = sum(int(client.llen(k)) for k in keys)
        frames = sum(s.frames for s in seats) - frames_before
        publish_after = publishes(client)
        forwarded_after = frames_forwarded(urls)
        cpu_after = [cpu(pid) for pid in pids], cpu(redis_pid)
        proxy_after = tree_cpu(proxy.pid) if proxy is not None else 0.0
        load_after = os.getloadavg()[0]
        await asyncio.gather(*tasks)
        owners = {}
        handed_over = []
        for url in urls:
            health = http_json(f"{url}/healthz")
            owners[url] = health["tables_owned"]
            handed_over.append(health.get("tables_handed_over"))
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(10)
        stop_servers(started)
        client.close()
    local = [x for s in seats if s.local for x in s.latencies]
    forwarded = [x for s in seats if not s.local for x in s.latencies]
    errors = [e for s in seats for e in s.errors if e != "stale_version"]
    actions = max(1, after - before)
    per_process = [b - a for a, b in zip(cpu_before[0], cpu_after[0], strict=True)]
    crossed = None
    if forwarded_before is not None and forwarded_after is not None:
        crossed = forwarded_after - forwarded_before
    return {
        "processes": processes,
        "tables": args.tables,
        "route": ("proxy" if args.proxy else "direct round robin") + f" {root}",
        "pinned": args.pin,
        "actions_per_s": round((after - before) / args.duration, 1),
        "server_cpu_ms_per_action": round(sum(per_process) * 1000 / actions, 3),
        "per_process_cpu_ms_per_action": [round(c * 1000 / actions, 3) for c in per_process],
        "redis_cpu_ms_per_action": round((cpu_after[1] - cpu_before[1]) * 1000 / actions, 3),
        "proxy_cpu_ms_per_action": round((proxy_after - proxy_before) * 1000 / actions, 3),
        "game_frames": frames,
        "forwarded_frame_share": None if crossed is None else round(crossed / max(1, frames), 4),
        "publishes_per_game_frame": round((publish_after - publish_before) / max(1, frames), 4),
        "local": summary(local),
        "forwarded": summary(forwarded),
        "tables_owned": list(owners.values()),
        "tables_handed_over": handed_over,
        "errors": len(errors),
        "load_1m": [round(load_before, 2), round(load_after, 2)],
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
        "--proxy", action="store_true", help="through nginx on deploy/nginx.conf, /ws?table=<id>"
    )
    parser.add_argument("--pin", action="store_true", help="server i on CPU i %% cpus")
    parser.add_argument(
        "--server-root",
        type=lambda text: Path(text).resolve(),
        default=REPO_ROOT,
        help="the checkout whose server (and nginx.conf) runs",
    )
    parser.add_argument(
        "--kills", type=int, default=0, help="then SIGKILL the owner this many times (3 processes)"
    )
    args = parser.parse_args(argv)
    args.server_cores = []
    if args.pin:
        cores = sorted(os.sched_getaffinity(0))
        most = max(args.processes)
        if len(cores) > most:
            # A core for each server alone: this process (the client), Redis and nginx,
            # its children, keep to the cores left over.
            args.server_cores = cores[:most]
            os.sched_setaffinity(0, cores[most:])
    print(
        f"# {platform.node()} {platform.machine()} cpus={os.cpu_count()} "
        f"python={platform.python_version()} load={os.getloadavg()}",
        flush=True,
    )
    asyncio.run(bench(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
