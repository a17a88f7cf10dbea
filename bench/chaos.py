"""Chaos: play tables while SIGKILLing the server (or its embedded Redis), then audit.

    python -m bench.chaos --target server --kills 100 --tables 4
    python -m bench.chaos --target redis --kills 100 --tables 4

One ``paodekuai serve`` child with the embedded Redis in a temporary data dir.
``--tables`` scripted humans (one per table, two bots at speed 0) play on,
reconnecting whenever their socket drops, while a killer SIGKILLs, at random
moments (``--min-gap``..``--max-gap`` seconds apart), either the whole server
process (restarted at once on the same port and data dir) or only its
redis-server child (which the server's supervisor restarts from its AOF).

Every ``state`` frame a client received is recorded, and audited as the run
goes (every ``--audit-every`` seconds, and once at the end): the stored log of
each table is read back and replayed forward from where the last audit
stopped, and the audit counts:

- **lost actions**: versions a client saw that the stored log does not reach;
- **diverged states**: a recorded seat view that differs from the view the
  stored log gives at that version (a state that was never really stored);
- **leaks**: a card held by another seat, anywhere in a frame.

Running totals go to stderr after each audit; the final JSON to stdout.
Bounded in kills and wall time (``--seconds`` covers the whole run, the final
audit included, since audits keep up as it goes).  The server child is tied
to this process (parent-death SIGKILL, and SIGTERM/SIGINT handlers), so even a
killed bench leaves no server behind.  A benchmark, not a test: it prints what
it measured.
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
from server.redis_embedded import exit_with_parent
from server.rooms.log import Replay, TableMeta
from server.rooms.store import Redis, TableStore

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

    def spawn(self) -> None:
        """Start the child (from the main thread: its parent-death signal is tied to
        the forking thread) without waiting for it."""
        argv = [
            sys.executable, "-m", "server", "serve", "--host", "127.0.0.1",
            "--port", str(self.port), "--data-dir", str(self.data_dir), "--log-level", "warning",
        ]  # fmt: skip
        if not self.defaults:
            argv += ["--actions-per-second", "1000", "--tables-per-minute", "100000"]
        argv += self.extra
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                argv,
                cwd=REPO_ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=exit_with_parent(signal.SIGKILL),
            )

    def _came_up(self, deadline: float) -> bool:
        if healthy(self.url):
            return True
        assert self.proc is not None
        if self.proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"server did not come up; see {self.log_path}")
        return False

    def start(self, timeout: float = 60.0) -> None:
        """Spawn the child and wait until /healthz answers."""
        self.spawn()
        deadline = time.monotonic() + timeout
        while not self._came_up(deadline):
            time.sleep(0.05)

    async def astart(self) -> None:
        """``start`` for an event loop: spawned here, health polled off the loop."""
        self.spawn()
        deadline = time.monotonic() + 60.0
        while True:
            if await asyncio.to_thread(self._came_up, deadline):
                return
            await asyncio.sleep(0.05)

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
    # The audit's cursor: the stored table read up to ``audited`` entries.
    audited: int = -1
    replay: Replay | None = None


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
                    async with asyncio.timeout(10):
                        raw = await ws.recv()
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


@dataclass
class Audit:
    """Running totals of the audit."""

    lost: int = 0
    diverged: int = 0
    leaks: int = 0
    views_checked: int = 0
    # Views older than the audit's cursor when checked (0 if frames come in order).
    behind: int = 0
    rounds: int = 0

    def check(
        self, seen: Seen, views: dict[int, list[bytes]], meta: TableMeta, entries: list[Any]
    ) -> None:
        """Replay ``seen``'s table from the cursor and check ``views`` against it.

        The views were taken before the log was read, so each was of a stored state
        (an action is stored before anyone hears of it): a version past the log's
        end is a lost action.  The cursor stops at the newest version the client
        saw, since a client's frames come in version order (a reconnect starts at
        the current state), so later views are never behind it.
        """
        if seen.replay is None:
            seen.replay = Replay(meta)
            seen.audited = 0
        top = max(views, default=0)
        self.lost += max(0, top - len(entries))
        self.behind += sum(len(v) for version, v in views.items() if version < seen.audited)
        for version in range(seen.audited, min(top, len(entries)) + 1):
            if version > seen.audited:
                seen.replay.feed(entries[version - 1])
                seen.audited = version
            if version not in views:
                continue
            state = seen.replay.match
            want = msgspec.json.decode(msgspec.json.encode(engine.seat_view(state, 0)))
            others = {engine.card_code(c) for s in (1, 2) for c in state.deal.hands[s]}
            for raw in views[version]:
                self.views_checked += 1
                got = msgspec.json.decode(raw)
                if got != want:
                    self.diverged += 1
                if state.deal.result is not None:
                    # A finished deal reveals its remaining cards, and only then.
                    got.pop("revealed")
                if card_strings(got) & others:
                    self.leaks += 1

    async def run(self, server: Server, tables: list[Seen]) -> bool:
        """One round over every table; False (nothing counted) if Redis is down now."""
        client = aioredis.Redis(unix_socket_path=str(server.data_dir / "redis.sock"))
        try:
            return await self.run_on(client, tables)
        finally:
            await client.aclose()

    async def run_on(self, client: Redis, tables: list[Seen]) -> bool:
        """``run`` reading the tables through ``client``: any Redis the store runs on (one
        node, a Sentinel primary, a Redis Cluster).  The caller closes ``client``."""
        store = TableStore(client, 7 * 24 * 3600)
        try:
            for seen in tables:
                snapshot, seen.views = seen.views, {}
                try:
                    loaded = await store.load(seen.table)
                except (OSError, aioredis.RedisError):
                    seen.views = _merged(snapshot, seen.views)
                    return False
                if loaded is None:
                    self.lost += max(snapshot, default=0)
                    continue
                self.check(seen, snapshot, *loaded)
        finally:
            await store.aclose()
        self.rounds += 1
        return True


def _merged(a: dict[int, list[bytes]], b: dict[int, list[bytes]]) -> dict[int, list[bytes]]:
    for version, views in b.items():
        a.setdefault(version, []).extend(views)
    return a


async def kill_once(server: Server, target: str) -> float | None:
    """SIGKILL the target and wait until the server answers again: the recovery time."""
    if target == "server":
        server.kill()
        down = time.monotonic()
        await server.astart()
        return time.monotonic() - down
    pid = server.redis_pid()
    if pid is None:
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    down = time.monotonic()
    while not (
        server.redis_pid() not in (None, pid) and await asyncio.to_thread(healthy, server.url)
    ):
        if time.monotonic() > down + 60:
            raise RuntimeError("the embedded redis did not come back in 60 s")
        await asyncio.sleep(0.05)
    return time.monotonic() - down


async def chaos(args: argparse.Namespace) -> dict[str, Any]:
    random.seed(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="pdk-chaos-"))
    server = Server(workdir / "data", workdir / "server.log")
    started = time.monotonic()
    # Kills stop early enough for the settle and one last (short) audit round.
    kills_until = started + max(0.0, args.seconds - 10.0)
    kills = 0
    recoveries: list[float] = []
    audit = Audit()
    tables: list[Seen] = []

    def progress(final: bool = False) -> None:
        figures = {
            "kills": kills,
            "seconds": round(time.monotonic() - started),
            "actions": sum(t.actions for t in tables),
            "reconnects": sum(t.reconnects for t in tables),
            **vars(audit),
        }
        print(("final " if final else "") + json.dumps(figures), file=sys.stderr, flush=True)

    try:
        await server.astart()
        tables = [Seen(*await create_table(server.url)) for _ in range(args.tables)]
        ws_url = f"ws://127.0.0.1:{server.port}/ws"
        stop = asyncio.Event()
        players = [asyncio.create_task(play(ws_url, seen, stop)) for seen in tables]
        next_audit = time.monotonic() + args.audit_every
        try:
            while kills < args.kills and time.monotonic() < kills_until:
                await asyncio.sleep(random.uniform(args.min_gap, args.max_gap))
                recovery = await kill_once(server, args.target)
                if recovery is None:
                    continue
                kills += 1
                recoveries.append(recovery)
                if time.monotonic() >= next_audit and await audit.run(server, tables):
                    progress()
                    next_audit = time.monotonic() + args.audit_every
            # Let every client settle on the final state before the last round.
            await asyncio.sleep(2.0)
        finally:
            stop.set()
            for task in players:
                task.cancel()
            await asyncio.gather(*players, return_exceptions=True)
        for _ in range(120):  # Redis down at this moment: it comes back within seconds
            if await audit.run(server, tables):
                break
            await asyncio.sleep(0.5)
        progress(final=True)
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    recoveries.sort()
    return {
        "target": args.target,
        "kills": kills,
        # Every kill counted was followed by a healthy server (else the run raises).
        "kills_survived": len(recoveries),
        "seconds": round(time.monotonic() - started, 1),
        "tables": args.tables,
        "client_actions": sum(t.actions for t in tables),
        "states_received": sum(t.frames for t in tables),
        "reconnects": sum(t.reconnects for t in tables),
        "recovery_p50_s": round(recoveries[len(recoveries) // 2], 2) if recoveries else None,
        "recovery_p99_s": round(recoveries[len(recoveries) * 99 // 100], 2) if recoveries else None,
        "recovery_max_s": round(recoveries[-1], 2) if recoveries else None,
        "lost": audit.lost,
        "diverged": audit.diverged,
        "leaks": audit.leaks,
        "views_checked": audit.views_checked,
        "views_behind_cursor": audit.behind,
        "audit_rounds": audit.rounds,
        "load": os.getloadavg(),
        "workdir": str(workdir),
    }


async def _main(args: argparse.Namespace) -> dict[str, Any]:
    # SIGTERM/SIGHUP cancel the run like Ctrl-C does, so the finally blocks stop the
    # server; a SIGKILLed bench takes it down through the parent-death signal.
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, task.cancel)
    return await chaos(args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=["server", "redis"], default="server")
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument(
        "--seconds", type=float, default=900.0, help="stop after this long (audit included)"
    )
    parser.add_argument(
        "--audit-every", type=float, default=30.0, help="seconds between audit rounds"
    )
    parser.add_argument("--min-gap", type=float, default=0.3)
    parser.add_argument("--max-gap", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the data dir and server log")
    args = parser.parse_args(argv)
    result = asyncio.run(_main(args))
    print(json.dumps(result, indent=2))
    bad = result["lost"] or result["diverged"] or result["leaks"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
