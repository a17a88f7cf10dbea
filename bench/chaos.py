"""Chaos: play tables while SIGKILLing the server (or its embedded Redis), then audit.

    python -m bench.chaos --target server --kills 100 --tables 4
    python -m bench.chaos --target redis --kills 100 --tables 4

One ``paodekuai serve`` child with the embedded Redis in a temporary data dir.
``--tables`` scripted humans (one per table, two bots at speed 0) play on,
reconnecting whenever their socket drops, while a killer SIGKILLs, at random
moments (``--min-gap``..``--max-gap`` seconds apart), either the whole server
process (restarted at once on the same port and data dir) or only its
redis-server child (which the server's supervisor restarts from its AOF).

Every ``state`` frame a client received is recorded.  At the end the stored
log of each table is read back and replayed, and the audit counts:

- **lost actions**: versions a client saw that the stored log does not reach;
- **diverged states**: a recorded seat view that differs from the view the
  stored log gives at that version (a state that was never really stored);
- **leaks**: a card held by another seat, anywhere in a frame.

Bounded in kills and seconds (``--seconds``), it stops by itself and kills
its server on exit.  A benchmark, not a test: it prints what it measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aioredis
import websockets

from server import engine
from server.rooms.log import rebuild
from server.rooms.store import TableStore

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parent.parent
CARD = re.compile(r"^[3-9TJQKA2][SHDC]$")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class Server:
    """The server child process: started, SIGKILLed and restarted on one port and data dir."""

    def __init__(
        self,
        data_dir: Path,
        log_path: Path,
        *,
        defaults: bool = False,
        extra: list[str] | None = None,
    ) -> None:
        # defaults: run with the shipped limits (bench/attacks.py); otherwise lift the
        # per-seat and per-address limits, since every scripted client is 127.0.0.1.
        self.defaults = defaults
        self.extra = extra or []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        argv = [
            sys.executable, "-m", "server", "serve", "--host", "127.0.0.1",
            "--port", str(self.port), "--data-dir", str(self.data_dir), "--log-level", "warning",
        ]  # fmt: skip
        if not self.defaults:
            argv += ["--actions-per-second", "1000", "--tables-per-minute", "100000"]
        argv += self.extra
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not healthy(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not come up; see {self.log_path}")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def redis_pid(self) -> int | None:
        try:
            return int((self.data_dir / "redis.pid").read_text().strip())
        except (OSError, ValueError):
            return None


@dataclass
class Seen:
    """What one table's client received."""

    table: str
    token: str
    views: dict[int, list[bytes]] = field(default_factory=dict)  # version -> views (JSON)
    frames: int = 0
    reconnects: int = 0
    actions: int = 0
    leaks: int = 0


async def create_table(url: str) -> tuple[str, str]:
    body = json.dumps({"bot_speed_ms": 0, "deals": 10}).encode()

    def post() -> dict[str, Any]:
        request = urllib.request.Request(
            f"{url}/api/tables", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer

    answer = await asyncio.to_thread(post)
    return answer["table"], answer["seats"][0]["token"]


def next_move(frame: dict[str, Any]) -> dict[str, Any] | None:
    view, version = frame["view"], frame["version"]
    if view["match_over"]:
        return {"type": "new_match", "version": version}
    if view["result"] is not None:
        return {"type": "next_deal", "version": version}
    if view["turn"] != view["seat"]:
        return None
    if view["hints"]:
        return {"type": "play", "version": version, "cards": view["hints"][0]}
    return {"type": "pass", "version": version}


async def play(ws_url: str, seen: Seen, stop: asyncio.Event) -> None:
    """Play one seat until ``stop``, reconnecting after every drop."""
    while not stop.is_set():
        try:
            async with websockets.connect(ws_url, open_timeout=5, close_timeout=1) as ws:
                await ws.send(
                    json.dumps({"type": "join", "table": seen.table, "token": seen.token})
                )
                acted = -1
                while not stop.is_set():
                    raw = await asyncio.wait_for(ws.recv(), 10)
                    frame = json.loads(raw)
                    if frame["type"] != "state":
                        continue
                    seen.frames += 1
                    version = frame["version"]
                    seen.views.setdefault(version, []).append(msgspec.json.encode(frame["view"]))
                    move = next_move(frame)
                    if move is not None and version > acted:
                        acted = version
                        await ws.send(json.dumps(move))
                        seen.actions += 1
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException):
            seen.reconnects += 1
            await asyncio.sleep(random.uniform(0.05, 0.3))


def card_strings(view: Any) -> set[str]:
    if isinstance(view, str):
        return {view} if CARD.match(view) else set()
    if isinstance(view, dict):
        return set().union(*(card_strings(k) | card_strings(v) for k, v in view.items()))
    if isinstance(view, list):
        return set().union(*(card_strings(v) for v in view)) if view else set()
    return set()


async def audit(server: Server, tables: list[Seen]) -> dict[str, int]:
    """Compare every recorded view with the view the stored log gives at its version."""
    client = aioredis.Redis(unix_socket_path=str(server.data_dir / "redis.sock"))
    store = TableStore(client, 7 * 24 * 3600)
    lost = diverged = leaks = checked = 0
    try:
        for seen in tables:
            loaded = await store.load(seen.table)
            if loaded is None:
                lost += max(seen.views, default=0)
                continue
            meta, entries = loaded
            top = max(seen.views, default=0)
            lost += max(0, top - len(entries))
            for version, views in sorted(seen.views.items()):
                if version > len(entries):
                    continue
                state = rebuild(meta, entries[:version]).match
                expected = engine.seat_view(state, 0)
                want = msgspec.json.decode(msgspec.json.encode(expected))
                others = {engine.card_code(c) for s in (1, 2) for c in state.deal.hands[s]}
                for raw in views:
                    checked += 1
                    got = msgspec.json.decode(raw)
                    if got != want:
                        diverged += 1
                    if card_strings(got) & others:
                        leaks += 1
    finally:
        await client.aclose()
    return {"lost": lost, "diverged": diverged, "leaks": leaks, "views_checked": checked}


async def chaos(args: argparse.Namespace) -> dict[str, Any]:
    random.seed(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="pdk-chaos-"))
    server = Server(workdir / "data", workdir / "server.log")
    server.start()
    tables = [Seen(*await create_table(server.url)) for _ in range(args.tables)]
    ws_url = f"ws://127.0.0.1:{server.port}/ws"
    stop = asyncio.Event()
    players = [asyncio.create_task(play(ws_url, seen, stop)) for seen in tables]
    kills = survived = 0
    recoveries: list[float] = []
    started = time.monotonic()
    try:
        while kills < args.kills and time.monotonic() - started < args.seconds:
            await asyncio.sleep(random.uniform(args.min_gap, args.max_gap))
            if args.target == "server":
                await asyncio.to_thread(server.kill)
                kills += 1
                down = time.monotonic()
                await asyncio.to_thread(server.start)
            else:
                pid = server.redis_pid()
                if pid is None:
                    continue
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                kills += 1
                down = time.monotonic()
                deadline = down + 60
                while not (
                    server.redis_pid() not in (None, pid)
                    and await asyncio.to_thread(healthy, server.url)
                ):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the embedded redis did not come back in 60 s")
                    await asyncio.sleep(0.05)
            recoveries.append(time.monotonic() - down)
            survived += 1
        # Let every client settle on the final state before the audit.
        await asyncio.sleep(2.0)
    finally:
        stop.set()
        for task in players:
            task.cancel()
        await asyncio.gather(*players, return_exceptions=True)
    elapsed = time.monotonic() - started
    result = await audit(server, tables)
    server.stop()
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    recoveries.sort()
    return {
        "target": args.target,
        "kills": kills,
        "kills_survived": survived,
        "seconds": round(elapsed, 1),
        "tables": args.tables,
        "client_actions": sum(t.actions for t in tables),
        "states_received": sum(t.frames for t in tables),
        "reconnects": sum(t.reconnects for t in tables),
        "recovery_p50_s": round(recoveries[len(recoveries) // 2], 2) if recoveries else None,
        "recovery_max_s": round(recoveries[-1], 2) if recoveries else None,
        **result,
        "load": os.getloadavg(),
        "workdir": str(workdir),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=["server", "redis"], default="server")
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=900.0, help="stop after this long")
    parser.add_argument("--min-gap", type=float, default=0.3)
    parser.add_argument("--max-gap", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the data dir and server log")
    args = parser.parse_args(argv)
    result = asyncio.run(chaos(args))
    print(json.dumps(result, indent=2))
    bad = result["lost"] or result["diverged"] or result["leaks"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
