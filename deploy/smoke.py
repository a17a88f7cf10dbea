"""Smoke test of a running stack: kill the replica that owns a table mid-play, measure.

    python deploy/smoke.py http://127.0.0.1:8000 --admin-token TOKEN \\
        --kill-cmd 'podman kill {host}' [--restart-cmd 'podman start {host}']

It creates a table (one scripted human, two bots), plays it over a game socket through
the proxy as the browser client does (pings every second, a silent socket given up and
opened again), finds the replica that owns the table from the operator's /healthz
(``--admin-token``, or PAODEKUAI_ADMIN_TOKEN), runs ``--kill-cmd`` with that replica's
``{host}`` (its host name: a container's id under docker and podman), ``{pid}`` and
``{process}`` filled in, and keeps playing while it probes the proxy (a request and a
game-socket upgrade every 100 ms).  With ``--restart-cmd`` (which should return once
the replica is up) it then starts the replica again and waits for the proxy to send
it traffic.

It prints what it measured (one ``name: value`` line each) and exits 1 when an action
the player was told of is lost (the table's version went back), when play does not go
on, when a proxied request or upgrade waited longer than ``--stall`` seconds (2), or
when the restarted replica has no traffic within ``--return-within`` seconds (10).
docs/operations.md has the figures of the compose stack.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import itertools
import json
import os
import shlex
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import websockets
from websockets.exceptions import WebSocketException

__all__ = ["Report", "main", "run"]

T = TypeVar("T")

# How often the player pings, and how long a socket may stay silent after a ping.
PING_SECONDS = 1.0
SILENT_SECONDS = 3.0
# How often the proxy is probed, and how long one probe may take before it is a stall
# for sure (it is still measured up to this).
PROBE_SECONDS = 0.1
PROBE_GIVE_UP_SECONDS = 30.0
# Actions played before the kill, and after play goes on again.
ACTIONS_BEFORE = 8
ACTIONS_AFTER = 6
# Probing goes on at least this long after the kill (a dead replica's cost shows when
# the proxy meets it, which round robin does within a few requests).
PROBE_AFTER_KILL_SECONDS = 5.0
GUARD_SECONDS = 60.0


class SmokeError(Exception):
    """The stack cannot be smoke-tested as asked (not a finding about the stack)."""


@dataclass
class Report:
    replicas: int = 0
    owner: str = ""
    version_at_kill: int = 0
    play_resumed_seconds: float | None = None
    slowest_request_seconds: float = 0.0
    slowest_request: str = ""
    requests: int = 0
    request_errors: int = 0
    returned_seconds: float | None = None
    restart_took: float = 0.0
    kill_took: float = 0.0
    last_version: int = 0
    sockets: int = 0
    endings: dict[str, int] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        resumed = self.play_resumed_seconds
        returned = self.returned_seconds
        return [
            f"replicas: {self.replicas}",
            f"owner killed: {self.owner}",
            f"version at kill: {self.version_at_kill}",
            f"play went on after: {'never' if resumed is None else f'{resumed:.2f} s'}"
            f" (from the start of --kill-cmd, which took {self.kill_took:.2f} s)",
            f"slowest proxied request: {self.slowest_request_seconds:.3f} s"
            f" ({self.slowest_request})",
            f"proxied requests: {self.requests} ({self.request_errors} answered with an error)",
            "restarted replica had traffic after: "
            + ("-" if returned is None else f"{returned:.2f} s")
            + (f" (--restart-cmd took {self.restart_took:.2f} s)" if self.restart_took else ""),
            f"lost actions: {len(self.lost)}",
            f"last version told: {self.last_version} (over {self.sockets} sockets)",
            f"socket endings and error frames: {json.dumps(self.endings, sort_keys=True)}",
            *(f"FAIL: {failure}" for failure in self.failures),
            "result: " + ("FAIL" if self.failures else "ok"),
        ]


class Stack:
    """The stack behind ``url``: plain HTTP requests, timed."""

    def __init__(self, url: str, token: str, insecure: bool) -> None:
        self.url = url.rstrip("/")
        parts = urlsplit(self.url)
        self.host = parts.hostname or "127.0.0.1"
        self.tls = parts.scheme == "https"
        self.port = parts.port or (443 if self.tls else 80)
        self.token = token
        self.context = ssl.create_default_context() if self.tls else None
        if self.context is not None and insecure:
            self.context.check_hostname = False
            self.context.verify_mode = ssl.CERT_NONE
        self.restart_took = 0.0
        self.ws_url = ("wss:" if self.tls else "ws:") + self.url.partition(":")[2] + "/ws"

    def request(
        self, path: str, *, body: Any = None, operator: bool = False, timeout: float = 10
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if operator:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.context) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, None

    def processes(self) -> dict[str, dict[str, Any]]:
        """Every replica the proxy spreads plain requests over, by process id."""
        found: dict[str, dict[str, Any]] = {}
        quiet = 0
        # Round robin: a few rounds without a new process means all were seen.
        while quiet < 12:
            status, body = self.request("/healthz", operator=True, timeout=5)
            if status != 200 or not isinstance(body, dict) or "process" not in body:
                raise SmokeError(
                    f"/healthz answered {status} without the process details: give the "
                    "stack's admin token (--admin-token or PAODEKUAI_ADMIN_TOKEN)"
                )
            quiet = quiet + 1 if body["process"] in found else 0
            found[body["process"]] = body
        return found

    def upgrade(self, table: str, timeout: float) -> int:
        """A game-socket handshake through the proxy, closed at once; its status."""
        raw = socket.create_connection((self.host, self.port), timeout)
        sock: socket.socket = raw
        try:
            if self.context is not None:
                sock = self.context.wrap_socket(raw, server_hostname=self.host)
            key = base64.b64encode(os.urandom(16)).decode()
            sock.sendall(
                f"GET /ws?table={table} HTTP/1.1\r\nHost: {urlsplit(self.url).netloc}\r\n"
                f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                f"Sec-WebSocket-Version: 13\r\nOrigin: {self.url}\r\n\r\n".encode()
            )
            head = b""
            while b"\r\n" not in head:
                chunk = sock.recv(256)
                if not chunk:
                    break
                head += chunk
            return int(head.split(b" ", 2)[1]) if head else 0
        finally:
            sock.close()


class Player:
    """The table's human seat, played as the browser plays it."""

    def __init__(self, stack: Stack, table: str, token: str, seat: int) -> None:
        self.stack = stack
        self.table = table
        self.token = token
        self.seat = seat
        self.told: list[tuple[float, int, int]] = []  # (when, version, socket number)
        self.lost: list[str] = []
        self.sockets = 0
        # How the sockets ended: close code, error reason or exception, counted.
        self.endings: dict[str, int] = {}

    def _ended(self, why: str) -> None:
        self.endings[why] = self.endings.get(why, 0) + 1

    @property
    def version(self) -> int:
        return self.told[-1][1] if self.told else 0

    def resumed_at(self, version: int, socket_at_kill: int) -> float:
        """When the first version past ``version`` was told on a socket opened after
        the kill (a frame the dead owner had sent before it died is no resumption),
        or on the same socket if it lived on (it was on another replica)."""
        later = [when for when, v, sock in self.told if v > version and sock > socket_at_kill]
        same = [when for when, v, sock in self.told if v > version]
        return min(later) if later else min(same)

    async def run(self) -> None:
        url = f"{self.stack.ws_url}?table={self.table}"
        while True:
            try:
                async with websockets.connect(
                    url,
                    open_timeout=5,
                    close_timeout=1,
                    ping_interval=None,
                    ssl=self.stack.context,
                    origin=self.stack.url,  # type: ignore[arg-type]
                ) as ws:
                    self.sockets += 1
                    await ws.send(json.dumps({"type": "join", "table": self.table,
                                              "token": self.token}))  # fmt: skip
                    await self._play(ws)
                self._ended(f"closed {ws.close_code}")
            except (WebSocketException, OSError, TimeoutError) as error:
                self._ended(type(error).__name__)
            await asyncio.sleep(0.2)

    async def _play(self, ws: Any) -> None:
        pinger = asyncio.create_task(self._ping(ws))
        try:
            await self._read(ws)
        finally:
            pinger.cancel()

    async def _ping(self, ws: Any) -> None:
        while True:
            await ws.send(json.dumps({"type": "ping"}))
            await asyncio.sleep(PING_SECONDS)

    async def _read(self, ws: Any) -> None:
        acted_at = -1
        while True:
            try:
                async with asyncio.timeout(SILENT_SECONDS):
                    raw = await ws.recv()
            except TimeoutError:
                self._ended("silent")
                return  # no answer to the pings: given up, as the browser does
            frame = json.loads(raw)
            if frame.get("type") == "error":
                # An action refused (stale after a failover, say): no state follows it,
                # so start again from the full state a new socket is told.
                self._ended(f"error {frame.get('code')}")
                return
            if frame.get("type") != "state":
                continue
            version: int = frame["version"]
            if version < self.version:
                self.lost.append(f"told version {self.version}, then {version}")
            self.told.append((time.monotonic(), version, self.sockets))
            view = frame["view"]
            if version == acted_at and frame["events"]:
                continue
            message: dict[str, Any] | None = None
            if view["match_over"]:
                message = {"type": "new_match"}
            elif view["result"] is not None:
                message = {"type": "next_deal"}
            elif view["turn"] == self.seat:
                hints = view["hints"]
                message = {"type": "play", "cards": hints[0]} if hints else {"type": "pass"}
            if message is not None:
                acted_at = version
                await ws.send(json.dumps({**message, "version": version}))

    async def until_version(self, version: int, guard: float = GUARD_SECONDS) -> bool:
        deadline = time.monotonic() + guard
        while self.version < version:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.02)
        return True


async def in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a thread of its own that never holds up the script's exit.

    A probe may wait on a stalled replica until the proxy gives up (30 s in
    deploy/nginx.conf).  ``asyncio.to_thread`` would make the script's exit wait for
    it too; a probe still waiting at the end is counted instead, as unanswered for as
    long as it has waited (``Prober.settle``), and left behind."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not done.done():  # cancelled meanwhile
            outcome()

    def run() -> None:
        try:
            result = fn(*args)
        except Exception as error:  # handed to the waiting task, as to_thread would
            report = functools.partial(settle, functools.partial(done.set_exception, error))
        else:
            report = functools.partial(settle, functools.partial(done.set_result, result))
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(report)

    threading.Thread(target=run, name="probe", daemon=True).start()
    return await done


class Prober:
    """A plain request and a game-socket upgrade through the proxy, every 100 ms."""

    def __init__(self, stack: Stack, table: str, report: Report) -> None:
        self.stack = stack
        self.table = table
        self.report = report
        # Probes still waiting: (what, since when), by a number of their own.
        self.waiting: dict[int, tuple[str, float]] = {}
        self._numbers = itertools.count()

    async def run(self) -> None:
        while True:
            await asyncio.gather(
                in_daemon_thread(self._timed, "GET /healthz", self._get),
                in_daemon_thread(self._timed, f"upgrade /ws?table={self.table}", self._ws),
                asyncio.sleep(PROBE_SECONDS),
            )

    def _get(self) -> bool:
        status, _ = self.stack.request("/healthz", timeout=PROBE_GIVE_UP_SECONDS)
        return status == 200

    def _ws(self) -> bool:
        return self.stack.upgrade(self.table, PROBE_GIVE_UP_SECONDS) == 101

    def _timed(self, what: str, probe: Any) -> None:
        number, start = next(self._numbers), time.monotonic()
        self.waiting[number] = (what, start)
        try:
            ok = probe()
        except OSError:
            ok = False
        del self.waiting[number]
        self._count(what, time.monotonic() - start, ok)

    def _count(self, what: str, took: float, ok: bool) -> None:
        self.report.requests += 1
        self.report.request_errors += not ok
        if took > self.report.slowest_request_seconds:
            self.report.slowest_request_seconds = took
            self.report.slowest_request = what

    def settle(self) -> None:
        """At the end: a probe still waiting has waited this long, unanswered."""
        now = time.monotonic()
        for what, start in list(self.waiting.values()):
            self._count(what + " (unanswered)", now - start, False)


def owner_of(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> str:
    """The process whose table count went up by the one table made here."""
    grown = [
        proc
        for proc, info in after.items()
        if info["tables_owned"] > before.get(proc, {"tables_owned": 0})["tables_owned"]
    ]
    if len(grown) != 1:
        raise SmokeError(
            f"cannot tell the table's owner ({len(grown)} replicas took tables meanwhile): "
            "run the smoke test on a quiet stack"
        )
    return grown[0]


def shell(command: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(command, shell=True, check=False)


def fill(command: str, process: str) -> str:
    host, pid, _ = process.rsplit("-", 2)
    return command.format(host=shlex.quote(host), pid=pid, process=shlex.quote(process))


async def run(args: argparse.Namespace) -> Report:
    report = Report()
    stack = Stack(args.url, args.admin_token, args.insecure)
    before = stack.processes()
    report.replicas = len(before)
    if report.replicas < 2:
        raise SmokeError(f"the proxy reaches {report.replicas} replica: a kill needs two or more")
    body = {"humans": 1, "bots": ["easy", "easy"], "bot_speed_ms": 50}
    status, created = stack.request("/api/tables", body=body)
    if status not in (200, 201):
        raise SmokeError(f"creating a table was answered {status}")
    table = created["table"]
    seat = created["seats"][0]
    player = Player(stack, table, seat["token"], seat["seat"])
    tasks = [asyncio.create_task(player.run())]
    prober: Prober | None = None
    try:
        if not await player.until_version(ACTIONS_BEFORE):
            raise SmokeError(f"table {table} did not get {ACTIONS_BEFORE} actions in time")
        owner = owner_of(before, stack.processes())
        report.owner = owner
        prober = Prober(stack, table, report)
        tasks.append(asyncio.create_task(prober.run()))
        report.version_at_kill = player.version
        socket_at_kill = player.sockets
        killed_at = time.monotonic()
        kill = await asyncio.to_thread(shell, fill(args.kill_cmd, owner))
        report.kill_took = time.monotonic() - killed_at
        if kill.returncode != 0:
            raise SmokeError(f"--kill-cmd exited with {kill.returncode}")
        # Play goes on when several more actions are told within the guard: one frame
        # the stopped owner had already sent is no resumption (and the guard bounds the
        # whole wait, not only its first action's).
        if await player.until_version(report.version_at_kill + ACTIONS_AFTER, args.guard):
            resumed = player.resumed_at(report.version_at_kill, socket_at_kill)
            report.play_resumed_seconds = resumed - killed_at
        else:
            report.failures.append(f"play did not go on within {args.guard:.0f} s")
        await asyncio.sleep(max(0.0, killed_at + PROBE_AFTER_KILL_SECONDS - time.monotonic()))
        if args.restart_cmd:
            report.returned_seconds = await restart(args, stack, owner)
            report.restart_took = stack.restart_took
            if report.returned_seconds is None:
                report.failures.append(
                    f"the restarted replica had no traffic within {args.return_within} s"
                )
            version = player.version
            if not await player.until_version(version + 2):
                report.failures.append("play stopped after the restart")
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if prober is not None:
            prober.settle()
    report.lost = player.lost
    report.last_version, report.sockets = player.version, player.sockets
    report.endings = player.endings
    if player.lost:
        report.failures.append(f"actions lost: {'; '.join(player.lost)}")
    if report.slowest_request_seconds > args.stall:
        report.failures.append(
            f"a proxied request waited {report.slowest_request_seconds:.2f} s (> {args.stall} s)"
        )
    return report


async def restart(args: argparse.Namespace, stack: Stack, owner: str) -> float | None:
    """Start the killed replica again (``--restart-cmd`` returns once it is up); seconds
    from then until the proxy sends it a request, None if not within --return-within."""
    host = owner.rsplit("-", 2)[0]
    started_at = time.monotonic()
    done = await asyncio.to_thread(shell, fill(args.restart_cmd, owner))
    back_at = time.monotonic()
    stack.restart_took = back_at - started_at
    if done.returncode != 0:
        raise SmokeError(f"--restart-cmd exited with {done.returncode}")
    while time.monotonic() - back_at <= args.return_within:
        status, body = await asyncio.to_thread(
            stack.request, "/healthz", operator=True, timeout=args.stall
        )
        if status == 200 and body["process"] != owner and body["process"].startswith(host + "-"):
            return time.monotonic() - back_at
        await asyncio.sleep(0.05)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("url", help="the stack's address, e.g. http://127.0.0.1:8000")
    parser.add_argument("--kill-cmd", required=True, help="kills {host} / {pid} / {process}")
    parser.add_argument("--restart-cmd", help="starts the killed replica again")
    parser.add_argument("--admin-token", default=os.environ.get("PAODEKUAI_ADMIN_TOKEN", ""))
    parser.add_argument("--stall", type=float, default=2.0, help="seconds a request may wait")
    parser.add_argument("--return-within", type=float, default=10.0)
    parser.add_argument(
        "--guard", type=float, default=GUARD_SECONDS, help="seconds play may take to go on"
    )
    parser.add_argument("--insecure", action="store_true", help="https without verification")
    args = parser.parse_args(argv)
    try:
        report = asyncio.run(run(args))
    except SmokeError as error:
        print(f"smoke: cannot run: {error}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
