"""Server benchmark: N concurrent tables in one ``paodekuai serve`` process, on loopback.

Each table has one scripted human client (plays its first hint, passes when it
may, starts the next deal / a new match at the end) and two bots at bot speed
0 ms.  The server runs as a child process with its embedded Redis in a
temporary data directory.  Printed: actions per second (all seats), p50/p99
latency from sending a human action to receiving the state that shows it, and
server memory per table (RSS growth over the idle server, divided by tables).

    python bench/server.py --tables 200 --duration 20

Bounded: it stops after ``--duration`` seconds of play (or ``--max-actions``
human actions per table), binds 127.0.0.1 only, and kills its server on exit.
A benchmark, not a test: it prints figures and asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass
class TableRun:
    latencies: list[float] = field(default_factory=list)
    human_actions: int = 0
    first_version: int | None = None
    last_version: int = 0
    errors: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def http_json(url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url,
        data=data,
        headers={"Content-Type": "application/json"},
        method="POST" if data else "GET",
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def start_server(port: int, data_dir: Path, log_path: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAODEKUAI_")}
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", "--host", "127.0.0.1",
             "--port", str(port), "--data-dir", str(data_dir), "--log-level", "warning"],
            cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early; see {log_path}")
        try:
            if http_json(f"http://127.0.0.1:{port}/healthz").get("ok"):
                return proc
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not become healthy within 60 s")


async def play_table(
    ws_url: str,
    table: dict[str, Any],
    stop_at: float,
    max_actions: int,
    think: float,
    run: TableRun,
    rng: random.Random,
) -> None:
    """One scripted human: act on every new version where it is our move.

    Its thinking time is drawn uniformly from 0.5-1.5 x ``think`` (the mean is
    ``think``): people are not in lockstep, and 200 humans acting in the same
    millisecond every second would measure a burst no real table sees.
    """
    loop = asyncio.get_running_loop()
    async with websockets.connect(ws_url, max_size=None) as ws:
        await ws.send(
            json.dumps(
                {"type": "join", "table": table["table"], "token": table["seats"][0]["token"]}
            )
        )
        acted_at = -1
        sent_at: float | None = None
        while loop.time() < stop_at and run.human_actions < max_actions:
            try:
                raw = await asyncio.wait_for(ws.recv(), max(0.1, stop_at - loop.time()))
            except TimeoutError:
                break
            frame = json.loads(raw)
            if frame["type"] == "error":
                run.errors.append(frame["code"])
                continue
            if frame["type"] != "state":
                continue
            version = frame["version"]
            if run.first_version is None:
                run.first_version = version
            run.last_version = max(run.last_version, version)
            if sent_at is not None and version > acted_at:
                run.latencies.append(loop.time() - sent_at)
                sent_at = None
            view = frame["view"]
            if version <= acted_at:
                continue
            if view["result"] is not None:
                kind = "new_match" if view["match_over"] else "next_deal"
                message: dict[str, Any] = {"type": kind, "version": version}
            elif view["turn"] == view["seat"]:
                if view["hints"]:
                    message = {"type": "play", "version": version, "cards": view["hints"][0]}
                else:
                    message = {"type": "pass", "version": version}
            else:
                continue
            acted_at = version
            if think > 0:
                await asyncio.sleep(think * rng.uniform(0.5, 1.5))
            sent_at = loop.time()
            run.human_actions += 1
            await ws.send(json.dumps(message))


async def bench(args: argparse.Namespace, base: str, pid: int) -> dict[str, Any]:
    rss_idle = rss_bytes(pid)
    tables = [
        await asyncio.to_thread(
            http_json,
            f"{base}/api/tables",
            {"bot_speed_ms": 0, "bots": [args.bot_level] * 2, "deals": 10, "seed": 1000 + i},
        )
        for i in range(args.tables)
    ]
    runs = [TableRun() for _ in tables]
    loop = asyncio.get_running_loop()
    started = loop.time()
    stop_at = started + args.duration
    ws_url = base.replace("http://", "ws://") + "/ws"
    tasks = [
        asyncio.create_task(
            play_table(
                ws_url, t, stop_at, args.max_actions, args.think_ms / 1000, r, random.Random(i)
            )
        )
        for i, (t, r) in enumerate(zip(tables, runs, strict=True))
    ]
    # Sample memory while every table is live, halfway through.
    await asyncio.sleep(args.duration / 2)
    rss_live = rss_bytes(pid)
    await asyncio.gather(*tasks)
    elapsed = loop.time() - started
    latencies = sorted(lat for r in runs for lat in r.latencies)
    actions = sum(r.last_version - (r.first_version or 0) for r in runs)
    errors = [e for r in runs for e in r.errors]
    return {
        "tables": args.tables,
        "seconds": round(elapsed, 1),
        "actions": actions,
        "actions_per_s": round(actions / elapsed, 1),
        "human_actions": len(latencies),
        "p50_ms": round(1000 * statistics.median(latencies), 2) if latencies else None,
        "p99_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 2)
        if latencies
        else None,
        "max_ms": round(1000 * latencies[-1], 2) if latencies else None,
        "rss_idle_mib": round(rss_idle / 2**20, 1),
        "rss_live_mib": round(rss_live / 2**20, 1),
        "kib_per_table": round((rss_live - rss_idle) / 1024 / args.tables, 1),
        "errors": len(errors),
        "error_codes": sorted(set(errors)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of play")
    parser.add_argument("--max-actions", type=int, default=10_000, help="human actions per table")
    parser.add_argument(
        "--think-ms",
        type=float,
        default=1000.0,
        help="the scripted human's pause before each action (0: flat out, measures capacity)",
    )
    parser.add_argument("--bot-level", default="normal", choices=["easy", "normal", "strong"])
    parser.add_argument("--json", action="store_true", help="print one JSON line only")
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= 2000 or not 1 <= args.duration <= 600:
        parser.error("--tables must be 1..2000 and --duration 1..600")

    with tempfile.TemporaryDirectory(prefix="pdk-bench-") as tmp:
        port = free_port()
        proc = start_server(port, Path(tmp) / "data", Path(tmp) / "server.log")
        try:
            result = asyncio.run(bench(args, f"http://127.0.0.1:{port}", proc.pid))
        except BaseException:
            print((Path(tmp) / "server.log").read_text()[-4000:], file=sys.stderr)
            raise
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"tables: {result['tables']} (1 scripted human thinking {args.think_ms:g} ms "
          f"+ 2 {args.bot_level} bots at 0 ms each)")  # fmt: skip
    print(f"played: {result['seconds']} s, {result['actions']} actions "
          f"({result['human_actions']} timed human actions)")  # fmt: skip
    print(f"actions/s: {result['actions_per_s']}")
    print(f"latency send->state: p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, "
          f"max {result['max_ms']} ms")  # fmt: skip
    print(f"memory: idle {result['rss_idle_mib']} MiB, live {result['rss_live_mib']} MiB, "
          f"{result['kib_per_table']} KiB per table")  # fmt: skip
    print(f"errors: {result['errors']} {result['error_codes']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
