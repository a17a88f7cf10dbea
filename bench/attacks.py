"""An honest table's latency while each attack of issues 9 and 24 runs, plus a socket fuzz.

    python -m bench.attacks --seconds 20
    python -m bench.attacks --only fuzz --seconds 60

One ``paodekuai serve`` child (embedded Redis, default limits).  An honest
player (127.0.0.1; one human and two bots at speed 0) acts about three times a
second and measures, per action, the time from sending it to receiving the
first state after it: every accepted action is timed, also when the bots'
instant answers come in the same state (its version then moves by more than
one); an action refused (an error frame) is counted, not timed.  Each attack
runs from other loopback addresses (127.0.0.2 and up) for ``--seconds``, one
after the other, and the honest table's p50/p99 is printed for each window,
with the machine's load:

- ``baseline``: no attack;
- ``compressed``: 1 MB frames of one repeated byte, offering permessage-deflate;
- ``non_readers``: 40 seated sockets that ask for hints and never read;
- ``silent``: 1,500 TCP connections that send nothing, reopened when closed;
- ``slowloris``: 300 connections trickling a header byte a second;
- ``unjoined``: 1,100 game sockets from 20 addresses that never send a join,
  reopened when the server closes them (issue 24, item 1);
- ``bot_speed``: one seat sending ``bot_speed`` frames as fast as it can;
- ``flood_reconnect``: one seat sending pings as fast as it can, reconnecting
  after each 1008 close (issue 24, item 7);
- ``tables``: one address creating tables as fast as it can;
- ``tables_many``: 64 addresses creating tables as fast as they can (issue 24,
  item 4);
- ``fuzz``: four sockets sending hostile frames (bench/fuzz_frames.py) as fast
  as they can; every reply is checked for cards the seat does not hold.

Bounded by ``--seconds`` per attack; every thread and socket stops, and the
server is killed on exit.  It prints figures; it asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import queue
import random
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import websockets

from bench.chaos import Server, next_move
from bench.fuzz_frames import frames, leaked_cards

__all__ = ["main"]

# An attack runs until its stop event (threading or multiprocessing) is set.
Attack = Callable[["Target", Any, dict[str, int]], None]


class Target:
    def __init__(self, server: Server) -> None:
        self.port = server.port
        self.url = server.url

    def connect(self, source: str, *, rcvbuf: int | None = None) -> socket.socket:
        sock = socket.socket()
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(5)
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", self.port))
        return sock

    def create_table(self, source: str = "127.0.0.1", **body: Any) -> dict[str, Any] | None:
        data = json.dumps({"bot_speed_ms": 0, **body}).encode()
        sock = self.connect(source)
        try:
            head = (
                f"POST /api/tables HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                "Connection: close\r\n\r\n"
            )
            sock.sendall(head.encode() + data)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        except OSError:
            return None
        finally:
            sock.close()
        status = answer.split(b" ", 2)[1] if answer else b""
        if status != b"201":
            return None
        table: dict[str, Any] = json.loads(answer.split(b"\r\n\r\n", 1)[1])
        return table


def ws_open(target: Target, source: str, table: dict[str, Any], **kw: Any) -> socket.socket:
    """A joined game socket spoken by hand (so it can misbehave)."""
    sock = target.connect(source, **kw)
    sock.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{target.port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError("closed during the handshake")
        head += chunk
    join = {"type": "join", "table": table["table"], "token": table["seats"][0]["token"]}
    send_frame(sock, json.dumps(join).encode())
    return sock


def send_frame(sock: socket.socket, payload: bytes, opcode: int = 1) -> None:
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        header = bytes([0x80 | opcode, 0x80 | n])
    elif n < 1 << 16:
        header = bytes([0x80 | opcode, 0xFE]) + n.to_bytes(2, "big")
    else:
        header = bytes([0x80 | opcode, 0xFF]) + n.to_bytes(8, "big")
    body = (
        bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if n < 4096 else _mask(payload, mask)
    )
    sock.sendall(header + mask + body)


def _mask(payload: bytes, mask: bytes) -> bytes:
    key = int.from_bytes((mask * (len(payload) // 4 + 1))[: len(payload)], "big")
    return (int.from_bytes(payload, "big") ^ key).to_bytes(len(payload), "big")


def loop_until(stop: Any, body: Callable[[], None]) -> None:
    while not stop.is_set():
        try:
            body()
        except OSError:
            time.sleep(0.05)


# --- the attacks -----------------------------------------------------------------


def compressed(target: Target, stop: Any, counts: dict[str, int]) -> None:
    table = target.create_table("127.0.0.2")
    big = json.dumps({"type": "ping", "pad": "a" * 1_000_000}).encode()

    def once() -> None:
        assert table is not None
        sock = ws_open(target, "127.0.0.2", table)
        try:
            send_frame(sock, big)
            counts["frames"] = counts.get("frames", 0) + 1
            sock.recv(65536)
        finally:
            sock.close()

    loop_until(stop, once)


def non_readers(target: Target, stop: Any, counts: dict[str, int]) -> None:
    socks: list[socket.socket] = []
    while not stop.is_set() and len(socks) < 40:
        table = target.create_table(f"127.0.1.{len(socks) + 1}")
        if table is None:
            break
        try:
            socks.append(ws_open(target, f"127.0.1.{len(socks) + 1}", table, rcvbuf=4096))
        except OSError:
            break
    hint = json.dumps({"type": "ping"}).encode()
    while not stop.is_set():
        for sock in socks:
            try:
                send_frame(sock, hint)
                counts["frames"] = counts.get("frames", 0) + 1
            except OSError:
                counts["dropped"] = counts.get("dropped", 0) + 1
        time.sleep(0.1)
    for sock in socks:
        sock.close()


def _holders(count: int, first_octet: int, payload: bytes | None) -> Attack:
    def attack(target: Target, stop: Any, counts: dict[str, int]) -> None:
        socks: dict[int, socket.socket] = {}
        while not stop.is_set():
            for i in range(count):
                if stop.is_set():
                    break
                sock = socks.get(i)
                try:
                    if sock is None:
                        sock = socks[i] = target.connect(f"127.0.{first_octet}.{2 + i % 200}")
                        counts["opened"] = counts.get("opened", 0) + 1
                        if payload is not None:
                            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
                    elif payload is not None:
                        sock.sendall(payload)
                except OSError:
                    counts["closed_by_server"] = counts.get("closed_by_server", 0) + 1
                    if sock is not None:
                        sock.close()
                    socks.pop(i, None)
            time.sleep(1.0)
        for sock in socks.values():
            sock.close()

    return attack


def bot_speed(target: Target, stop: Any, counts: dict[str, int]) -> None:
    table = target.create_table("127.0.3.1", humans=2, bots=["normal"])
    assert table is not None
    sock = ws_open(target, "127.0.3.1", table)
    sock.setblocking(False)
    i = 0
    while not stop.is_set():
        i += 1
        frame = json.dumps({"type": "bot_speed", "version": 0, "ms": i % 2}).encode()
        try:
            sock.setblocking(True)
            send_frame(sock, frame)
            sock.setblocking(False)
            counts["frames"] = counts.get("frames", 0) + 1
            while sock.recv(65536):
                pass
        except BlockingIOError:
            pass
        except OSError:
            break
    sock.close()


def unjoined(target: Target, stop: Any, counts: dict[str, int]) -> None:
    """Game sockets that finish the handshake and never join, kept open."""
    upgrade = (
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{target.port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    ).encode()
    socks: dict[int, socket.socket] = {}
    while not stop.is_set():
        for i in range(1100):
            if stop.is_set():
                break
            sock = socks.get(i)
            try:
                if sock is None:
                    sock = socks[i] = target.connect(f"127.0.8.{2 + i % 20}")
                    sock.sendall(upgrade)
                    counts["opened"] = counts.get("opened", 0) + 1
                else:
                    sock.setblocking(False)
                    try:
                        if sock.recv(65536) == b"":
                            raise ConnectionError
                    except BlockingIOError:
                        pass
                    finally:
                        sock.setblocking(True)
            except OSError:
                counts["closed_by_server"] = counts.get("closed_by_server", 0) + 1
                if sock is not None:
                    sock.close()
                socks.pop(i, None)
        time.sleep(0.5)
    for sock in socks.values():
        sock.close()


def flood_reconnect(target: Target, stop: Any, counts: dict[str, int]) -> None:
    """One seat flooding pings, reconnecting as soon as it is closed."""
    table = target.create_table("127.0.9.1", humans=2, bots=["normal"])
    assert table is not None
    ping = json.dumps({"type": "ping"}).encode()
    while not stop.is_set():
        try:
            sock = ws_open(target, "127.0.9.1", table)
        except OSError:
            counts["join_failed"] = counts.get("join_failed", 0) + 1
            time.sleep(0.05)
            continue
        counts["joins"] = counts.get("joins", 0) + 1
        sock.setblocking(False)
        try:
            while not stop.is_set():
                sock.setblocking(True)
                send_frame(sock, ping)
                sock.setblocking(False)
                counts["frames"] = counts.get("frames", 0) + 1
                try:
                    data = sock.recv(65536)
                    if not data:
                        break
                    if b"flood_backoff" in data:
                        counts["backed_off"] = counts.get("backed_off", 0) + 1
                except BlockingIOError:
                    pass
        except OSError:
            pass
        finally:
            sock.close()
        counts["closed"] = counts.get("closed", 0) + 1


def tables_many(target: Target, stop: Any, counts: dict[str, int]) -> None:
    def one(n: int) -> None:
        while not stop.is_set():
            try:
                made = target.create_table(f"127.0.10.{n}")
            except OSError:
                made = None
            key = "created" if made is not None else "refused"
            counts[key] = counts.get(key, 0) + 1

    threads = [threading.Thread(target=one, args=(n,)) for n in range(1, 65)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def tables(target: Target, stop: Any, counts: dict[str, int]) -> None:
    def once() -> None:
        made = target.create_table("127.0.4.1")
        key = "created" if made is not None else "refused"
        counts[key] = counts.get(key, 0) + 1

    loop_until(stop, once)


def fuzz(target: Target, stop: Any, counts: dict[str, int]) -> None:
    def one(n: int) -> None:
        table = target.create_table(f"127.0.5.{n}", deals=10)
        assert table is not None
        sock = ws_open(target, f"127.0.5.{n}", table)
        reader = _Reader(sock, counts)
        reader.start()
        stream = frames(random.Random(n))
        try:
            while not stop.is_set():
                frame = next(stream)
                send_frame(sock, frame.encode() if isinstance(frame, str) else frame)
                counts["frames"] = counts.get("frames", 0) + 1
        except OSError:
            counts["socket_lost"] = counts.get("socket_lost", 0) + 1
        finally:
            sock.close()
            reader.join(5)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class _Reader(threading.Thread):
    """Reads a fuzzed socket's replies and counts the cards it should not have seen."""

    def __init__(self, sock: socket.socket, counts: dict[str, int]) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.counts = counts
        self.buffer = b""

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def run(self) -> None:
        try:
            while True:
                first, second = self._read(2)
                size = second & 0x7F
                if size == 126:
                    size = int.from_bytes(self._read(2), "big")
                elif size == 127:
                    size = int.from_bytes(self._read(8), "big")
                payload = self._read(size)
                if first & 0x0F != 1:
                    continue
                reply = json.loads(payload)
                self.counts["replies"] = self.counts.get("replies", 0) + 1
                self.counts["leaks"] = self.counts.get("leaks", 0) + len(leaked_cards(reply))
        except (OSError, ConnectionError, ValueError):
            self.counts["readers_ended"] = self.counts.get("readers_ended", 0) + 1


ATTACKS: dict[str, Attack | None] = {
    "baseline": None,
    "compressed": compressed,
    "non_readers": non_readers,
    "silent": _holders(1500, 6, None),
    "slowloris": _holders(300, 7, b"X"),
    "unjoined": unjoined,
    "bot_speed": bot_speed,
    "flood_reconnect": flood_reconnect,
    "tables": tables,
    "tables_many": tables_many,
    "fuzz": fuzz,
}


# --- the honest table --------------------------------------------------------------


async def honest(url: str, table: dict[str, Any], seconds: float) -> tuple[list[float], int]:
    """Play for ``seconds``: the latency of every accepted action, and how many were
    refused."""
    latencies: list[float] = []
    refused = 0
    ws_url = url.replace("http://", "ws://") + "/ws"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            async with websockets.connect(ws_url, open_timeout=10) as ws:
                join = {
                    "type": "join",
                    "table": table["table"],
                    "token": table["seats"][0]["token"],
                }
                await ws.send(json.dumps(join))
                # The action in flight: the version it was sent at, and when.
                pending: tuple[int, float] | None = None
                while time.monotonic() < deadline:
                    async with asyncio.timeout(15):
                        frame = json.loads(await ws.recv())
                    if frame["type"] == "error" and pending is not None:
                        refused += 1
                        pending = None
                        continue
                    if frame["type"] != "state":
                        continue
                    version = frame["version"]
                    # Only our action moves the table on our turn; the bots' instant
                    # answers may come in the same state (version + 3, not + 1).
                    if pending is not None and version > pending[0]:
                        latencies.append(time.monotonic() - pending[1])
                        pending = None
                    move = next_move(frame)
                    if move is not None and pending is None:
                        await asyncio.sleep(0.3)  # a person's pace, under the action limit
                        pending = (version, time.monotonic())
                        await ws.send(json.dumps(move))
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException):
            await asyncio.sleep(0.2)
    return latencies, refused


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    workdir = Path(tempfile.mkdtemp(prefix="pdk-attacks-"))
    server = Server(workdir / "data", workdir / "server.log", defaults=True, extra=args.server_arg)
    server.start()
    target = Target(server)
    table = target.create_table(deals=10)
    assert table is not None
    rows: list[dict[str, Any]] = []
    try:
        for name, attack in ATTACKS.items():
            if args.only and name not in args.only:
                continue
            # The attacker runs in its own process, so it competes with the honest
            # client for CPU as a remote attacker would, not for this process's GIL.
            context = multiprocessing.get_context("fork")
            stop = context.Event()
            results: multiprocessing.Queue[dict[str, int]] = context.Queue()
            process = None
            if attack is not None:
                process = context.Process(
                    target=_attack_process, args=(attack, target, stop, results)
                )
                process.start()
                time.sleep(1.0)  # let the attack build up
            latencies, refused = asyncio.run(honest(server.url, table, args.seconds))
            stop.set()
            counts: dict[str, int] = {}
            if process is not None:
                with contextlib.suppress(queue.Empty):
                    counts = results.get(timeout=60)
                process.join(30)
                if process.is_alive():
                    process.kill()
            latencies.sort()
            rows.append(
                {
                    "attack": name,
                    "honest_actions": len(latencies),
                    "honest_refused": refused,
                    "p50_ms": round(1000 * statistics.median(latencies), 1) if latencies else None,
                    "p99_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 1)
                    if latencies
                    else None,
                    "max_ms": round(1000 * latencies[-1], 1) if latencies else None,
                    "healthz": _healthz(server.url),
                    "load_1m": round(os.getloadavg()[0], 2),
                    **counts,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    finally:
        server.kill()
        if server.proc is not None and server.proc.poll() is None:
            server.proc.wait()
        log = (workdir / "server.log").read_text(errors="replace")
        rows.append({"server_log_tracebacks": log.count("Traceback"), "log_bytes": len(log)})
        print(json.dumps(rows[-1]), flush=True)
        shutil.rmtree(workdir, ignore_errors=True)
    return rows


def _attack_process(
    attack: Attack, target: Target, stop: Any, results: multiprocessing.Queue[dict[str, int]]
) -> None:
    counts: dict[str, int] = {}
    try:
        attack(target, stop, counts)
    finally:
        results.put(counts)


def _healthz(url: str) -> int:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each attack")
    parser.add_argument("--only", nargs="*", choices=list(ATTACKS), help="run only these")
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        help="extra flag for the server (repeat), e.g. --server-arg=--actions-per-second=10000",
    )
    args = parser.parse_args(argv)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
