"""Can a handful of addresses lock players out by holding WebSockets? (issue 24, item 1)

    python -m bench.lockout --mode unjoined --sockets 5000 --addresses 100 --seconds 20
    python -m bench.lockout --mode seated ...
    python -m bench.lockout --mode mixed ...     # half unjoined, half seated
    python -m bench.lockout --source /tmp/before ...   # the server of another checkout

One ``paodekuai serve`` child (embedded Redis, default limits) on 127.0.0.1.
An attacker process opens ``--sockets`` game sockets from ``--addresses``
loopback addresses (127.0.0.2 and up: all of 127/8 is loopback on Linux), at
most ``--connecting`` handshakes at a time, and holds them: ``unjoined`` sockets
finish the handshake and never send ``join``; ``seated`` ones join seats of
tables their address created (up to four sockets a seat).  A socket the server
closes is reopened a second later, as a determined attacker would.

Once every hostile socket has been tried once, honest players measure for
``--seconds``, one after another, each from an address of its own (127.0.1.x):
a ``/healthz`` probe, a table creation, and a join (TCP connect, handshake,
``join``, until the first state frame) whose latency is recorded.  A probe that
fails or takes more than ``--probe-timeout`` counts as failed.  Prints p50/p99
of the honest join, the success counts, and the attacker's counts.  Bounded by
``--seconds`` plus the ramp (at most ``--ramp-timeout``); the server and the
attacker are killed on exit.  It asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import http.client
import json
import math
import multiprocessing
import os
import resource
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_SOCKETS = 20_000
MAX_SECONDS = 600.0
SOCKETS_PER_SEAT = 4
REOPEN_DELAY = 1.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def handshake(port: int) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


def masked_text(text: str) -> bytes:
    payload = text.encode()
    mask = os.urandom(4)
    size = len(payload)
    header = (
        struct.pack("!BB", 0x81, 0x80 | size)
        if size < 126
        else struct.pack("!BBH", 0x81, 0x80 | 126, size)
    )
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def create_table(port: int, source: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
    conn = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=timeout, source_address=(source, 0)
    )
    try:
        conn.request("POST", "/api/tables", json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        answer: dict[str, Any] = json.loads(response.read() or b"null")
        if response.status != 201:
            raise RuntimeError(f"table creation from {source}: {response.status} {answer}")
        return answer
    finally:
        conn.close()


def healthz(port: int, source: str, timeout: float) -> bool:
    conn = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=timeout, source_address=(source, 0)
    )
    try:
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        return response.status == 200 and json.loads(response.read()).get("ok") is True
    except (OSError, ValueError, http.client.HTTPException):
        return False
    finally:
        conn.close()


# --- the attacker (a process of its own) ---------------------------------------------


async def _hold(
    port: int,
    source: str,
    join: bytes | None,
    gate: asyncio.Semaphore,
    counts: dict[str, int],
    tried: asyncio.Event,
    pending: list[int],
) -> None:
    """One hostile socket: open it, hold it until the server closes it, reopen, forever."""
    first = True
    while True:
        writer: asyncio.StreamWriter | None = None
        opened = False
        try:
            async with gate:
                async with asyncio.timeout(10):
                    reader, opened_writer = await asyncio.open_connection(
                        "127.0.0.1", port, local_addr=(source, 0)
                    )
                writer = opened_writer
                opened_writer.write(handshake(port))
                async with asyncio.timeout(10):
                    head = await reader.readuntil(b"\r\n\r\n")
            if b" 101 " in head.split(b"\r\n", 1)[0]:
                opened = True
                counts["opened"] += 1
                counts["open"] += 1
                if join is not None:
                    opened_writer.write(join)
            else:
                counts["refused"] += 1
        except (OSError, asyncio.IncompleteReadError, TimeoutError, asyncio.LimitOverrunError):
            counts["refused"] += 1
        if first:
            first = False
            pending[0] -= 1
            if pending[0] == 0:
                tried.set()
        try:
            if opened and writer is not None:
                # Read (and drop) whatever comes until the server closes the socket.
                while await reader.read(65536):
                    pass
        except OSError:
            pass
        finally:
            if opened:
                counts["open"] -= 1
                counts["closed_by_server"] += 1
            if writer is not None:
                writer.close()
        await asyncio.sleep(REOPEN_DELAY)


def _attacker_tables(port: int, sources: list[str], per_address: int) -> dict[str, list[str]]:
    """Seat tokens per source address, from tables each address created itself."""
    seats = math.ceil(per_address / SOCKETS_PER_SEAT)
    tokens: dict[str, list[str]] = {}
    for source in sources:
        mine: list[str] = []
        while len(mine) < seats:
            table = create_table(port, source, {"humans": 3, "bots": [], "bot_speed_ms": 0}, 30)
            mine += [
                json.dumps({"type": "join", "table": table["table"], "token": seat["token"]})
                for seat in table["seats"]
            ]
        tokens[source] = mine[:seats]
    return tokens


async def _attack(args: argparse.Namespace, port: int, tried_flag: Any, report: Any) -> None:
    sources = [f"127.0.0.{2 + i}" for i in range(args.addresses)]
    per_address = math.ceil(args.sockets / args.addresses)
    seated_share = {"unjoined": 0.0, "seated": 1.0, "mixed": 0.5}[args.mode]
    seated_per_address = round(per_address * seated_share)
    tokens = (
        await asyncio.to_thread(_attacker_tables, port, sources, seated_per_address)
        if seated_per_address
        else {}
    )
    counts = {"opened": 0, "open": 0, "refused": 0, "closed_by_server": 0}
    gate = asyncio.Semaphore(args.connecting)
    tried = asyncio.Event()
    pending = [args.sockets]
    tasks = []
    for i in range(args.sockets):
        source = sources[i % len(sources)]
        k = i // len(sources)
        join = None
        if k < seated_per_address:
            seat_joins = tokens[source]
            join = masked_text(seat_joins[k // SOCKETS_PER_SEAT % len(seat_joins)])
        tasks.append(asyncio.create_task(_hold(port, source, join, gate, counts, tried, pending)))
    await tried.wait()
    report.put(("ramped", dict(counts)))
    tried_flag.set()
    while True:
        await asyncio.sleep(1)
        report.put(("counts", dict(counts)))


def _attacker_main(args: argparse.Namespace, port: int, tried_flag: Any, report: Any) -> None:
    raise_fd_limit()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_attack(args, port, tried_flag, report))


# --- the honest players --------------------------------------------------------------


def honest_join(
    port: int, source: str, table: dict[str, Any], timeout: float, steps: dict[str, list[float]]
) -> float | None:
    """Seconds from connect to the first state frame, or None if it failed or timed out;
    ``steps`` gets the seconds to the TCP connection, the handshake's answer and the state."""
    started = time.monotonic()
    deadline = started + timeout
    try:
        with socket.create_connection(
            ("127.0.0.1", port), timeout=timeout, source_address=(source, 0)
        ) as sock:
            connected = time.monotonic()
            sock.sendall(handshake(port))
            buffer = b""
            while b"\r\n\r\n" not in buffer:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = sock.recv(4096)
                if not chunk:
                    return None
                buffer += chunk
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            if b" 101 " not in head.split(b"\r\n", 1)[0]:
                return None
            upgraded = time.monotonic()
            token = table["seats"][0]["token"]
            sock.sendall(
                masked_text(json.dumps({"type": "join", "table": table["table"], "token": token}))
            )
            while True:
                while len(buffer) < 2 or len(buffer) < _frame_size(buffer):
                    sock.settimeout(max(0.01, deadline - time.monotonic()))
                    chunk = sock.recv(65536)
                    if not chunk:
                        return None
                    buffer += chunk
                size = _frame_size(buffer)
                frame, buffer = buffer[:size], buffer[size:]
                if frame[0] & 0x0F == 8:
                    return None
                if frame[0] & 0x0F == 1 and b'"state"' in frame[:200]:
                    done = time.monotonic()
                    steps["connect"].append(connected - started)
                    steps["handshake"].append(upgraded - connected)
                    steps["join"].append(done - upgraded)
                    return done - started
    except OSError:
        return None


def _frame_size(buffer: bytes) -> int:
    """Bytes of the server frame at the start of ``buffer`` (a lower bound until the
    length field is complete)."""
    size = buffer[1] & 0x7F
    if size == 126:
        return 4 + struct.unpack("!H", buffer[2:4])[0] if len(buffer) >= 4 else 4
    if size == 127:
        return 10 + struct.unpack("!Q", buffer[2:10])[0] if len(buffer) >= 10 else 10
    return 2 + size


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def run(args: argparse.Namespace) -> dict[str, Any]:
    source_dir = Path(args.source).resolve()
    port = free_port()
    data = Path(tempfile.mkdtemp(prefix="lockout-"))
    log_path = data / "server.log"
    env = {**os.environ, "PYTHONPATH": str(source_dir)}
    env = {k: v for k, v in env.items() if not k.startswith("PAODEKUAI_")}
    argv = [
        sys.executable, "-m", "server", "serve", "--host", "127.0.0.1", "--port", str(port),
        "--data-dir", str(data / "redis"), "--log-level", "warning", *args.server_arg,
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        server = subprocess.Popen(argv, cwd=source_dir, env=env, stdout=log, stderr=log)
    attacker: multiprocessing.context.SpawnProcess | None = None
    try:
        deadline = time.monotonic() + 60
        while not healthz(port, "127.0.0.1", 2):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not come up; see {log_path}")
            time.sleep(0.1)
        ctx = multiprocessing.get_context("spawn")
        tried, report = ctx.Event(), ctx.Queue()
        attacker = ctx.Process(target=_attacker_main, args=(args, port, tried, report))
        attacker.start()
        ramp_started = time.monotonic()
        if not tried.wait(args.ramp_timeout):
            print(f"the attack had not tried every socket after {args.ramp_timeout:.0f}s")
        ramp = time.monotonic() - ramp_started
        latencies: list[float] = []
        steps: dict[str, list[float]] = {"connect": [], "handshake": [], "join": []}
        joins = health = created = probes = 0
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            source = f"127.0.1.{1 + probes % 250}"
            probes += 1
            health += healthz(port, source, args.probe_timeout)
            try:
                table = create_table(
                    port, source, {"seed": probes, "bot_speed_ms": 0}, args.probe_timeout
                )
            except (OSError, RuntimeError, ValueError, http.client.HTTPException):
                continue
            created += 1
            took = honest_join(port, source, table, args.probe_timeout, steps)
            if took is not None:
                joins += 1
                latencies.append(took)
        last: dict[str, int] = {}
        while not report.empty():
            _, last = report.get_nowait()
        return {
            "mode": args.mode,
            "sockets": args.sockets,
            "addresses": args.addresses,
            "ramp_s": round(ramp, 1),
            "probes": probes,
            "healthz_ok": health,
            "tables_created": created,
            "joins_ok": joins,
            "join_p50_ms": round(1000 * statistics.median(latencies), 1) if latencies else None,
            "join_p99_ms": round(1000 * percentile(latencies, 0.99), 1) if latencies else None,
            "steps_p50_ms": {
                k: round(1000 * statistics.median(v), 1) for k, v in steps.items() if v
            },
            "attacker": last,
        }
    finally:
        if attacker is not None and attacker.is_alive():
            attacker.kill()
            attacker.join(10)
        if server.poll() is None:
            server.send_signal(signal.SIGKILL)
            server.wait(30)
        if not args.keep:
            shutil.rmtree(data, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["unjoined", "seated", "mixed"], default="unjoined")
    ap.add_argument("--sockets", type=int, default=5000)
    ap.add_argument("--addresses", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--connecting", type=int, default=100, help="handshakes in flight at once")
    ap.add_argument("--probe-timeout", type=float, default=5.0)
    ap.add_argument("--ramp-timeout", type=float, default=120.0)
    ap.add_argument("--source", default=str(REPO_ROOT), help="checkout whose server runs")
    ap.add_argument("--server-arg", action="append", default=[], help="extra serve flag")
    ap.add_argument("--keep", action="store_true", help="keep the server's data and log")
    args = ap.parse_args(argv)
    if not 1 <= args.sockets <= MAX_SOCKETS or not 1 <= args.addresses <= 250:
        ap.error(f"--sockets 1..{MAX_SOCKETS}, --addresses 1..250")
    if not 0 < args.seconds <= MAX_SECONDS:
        ap.error(f"--seconds must be in (0, {MAX_SECONDS:.0f}]")
    raise_fd_limit()
    print(json.dumps(run(args)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
