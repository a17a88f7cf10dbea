"""What looping ``GET /api/tables/{id}/history`` costs the server and an honest table.

    python -m bench.history --entries 2000 --seconds 20 --clients 4

One ``paodekuai serve`` child (embedded Redis, shipped limits except the seat action
rate, lifted so the long log fills fast).  A one-human table with two instant bots is
played until its log holds ``--entries`` entries; then, for ``--seconds`` each:

- ``baseline``: an honest player on another table (as in bench/attacks.py: acts about
  three times a second, times each action to the state that shows it);
- ``history``: the same, while ``--clients`` keep-alive connections from 127.0.0.2 ask
  for the long table's history (with its seat token) as fast as they are answered.

Each window prints the honest p50/p99, the server process's CPU (share of one core,
from /proc), the history answers by status and, for the flood, the server CPU beyond
the baseline's per answered request and per request of any status.  It prints
figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import websockets

from bench.attacks import Target, honest
from bench.chaos import Server, next_move

__all__ = ["main"]


def cpu_seconds(pid: int) -> float:
    """User + system CPU the process has used, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def fill(url: str, table: dict[str, Any], entries: int) -> int:
    """Play seat 0 as fast as the server answers until the log holds ``entries``."""
    ws_url = url.replace("http://", "ws://") + "/ws"
    seat = table["seats"][0]
    async with websockets.connect(ws_url, open_timeout=10, max_size=None) as ws:
        await ws.send(json.dumps({"type": "join", "table": table["table"], "token": seat["token"]}))
        acted = -1
        while True:
            async with asyncio.timeout(15):
                frame = json.loads(await ws.recv())
            if frame["type"] != "state":
                continue
            version = frame["version"]
            if version >= entries:
                return int(version)
            move = next_move(frame)
            if move is not None and version != acted:
                acted = version
                await ws.send(json.dumps(move))


def flood(port: int, path: str, token: str, stop: threading.Event, counts: dict[str, int]) -> None:
    """Ask for ``path`` on one keep-alive connection from 127.0.0.2 until ``stop``."""
    headers = {"Authorization": f"Bearer {token}", "Host": f"127.0.0.1:{port}"}
    conn: http.client.HTTPConnection | None = None
    while not stop.is_set():
        try:
            if conn is None:
                conn = http.client.HTTPConnection(
                    "127.0.0.1", port, timeout=10, source_address=("127.0.0.2", 0)
                )
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            key = str(response.status)
            counts[key] = counts.get(key, 0) + 1
            if response.status == 429:
                # A polite client would wait Retry-After; an attacker does not.
                continue
        except (OSError, http.client.HTTPException):
            counts["errors"] = counts.get("errors", 0) + 1
            if conn is not None:
                conn.close()
            conn = None
    if conn is not None:
        conn.close()


def window(
    server: Server, honest_table: dict[str, Any], seconds: float, flooders: int, path: str,
    token: str,
) -> dict[str, Any]:  # fmt: skip
    assert server.proc is not None
    stop = threading.Event()
    counts: list[dict[str, int]] = [{} for _ in range(flooders)]
    threads = [
        threading.Thread(target=flood, args=(server.port, path, token, stop, c), daemon=True)
        for c in counts
    ]
    cpu_before, wall_before = cpu_seconds(server.proc.pid), time.monotonic()
    for thread in threads:
        thread.start()
    # The same honest player as bench/attacks.py (refused actions are not timed).
    latencies, _refused = asyncio.run(honest(server.url, honest_table, seconds))
    stop.set()
    for thread in threads:
        thread.join(30)
    cpu = cpu_seconds(server.proc.pid) - cpu_before
    wall = time.monotonic() - wall_before
    latencies.sort()
    statuses: dict[str, int] = {}
    for c in counts:
        for key, n in c.items():
            statuses[key] = statuses.get(key, 0) + n
    return {
        "honest_actions": len(latencies),
        "p50_ms": round(1000 * statistics.median(latencies), 1) if latencies else None,
        "p99_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 1)
        if latencies
        else None,
        "server_cpu_share": round(cpu / wall, 3),
        "server_cpu_s": round(cpu, 2),
        "wall_s": round(wall, 1),
        "history_answers": statuses,
        "load_1m": round(os.getloadavg()[0], 2),
    }


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    workdir = Path(tempfile.mkdtemp(prefix="pdk-history-"))
    extra = ["--actions-per-second", "1000", *args.server_arg]
    server = Server(workdir / "data", workdir / "server.log", defaults=True, extra=extra)
    server.start()
    target = Target(server)
    rows: list[dict[str, Any]] = []
    try:
        long_table = target.create_table(deals=10)
        honest_table = target.create_table(deals=10)
        assert long_table is not None
        assert honest_table is not None
        version = asyncio.run(fill(server.url, long_table, args.entries))
        path = f"/api/tables/{long_table['table']}/history{args.query}"
        token = long_table["seats"][0]["token"]
        print(json.dumps({"log_entries": version}), flush=True)
        base = window(server, honest_table, args.seconds, 0, path, token)
        rows.append({"window": "baseline", **base})
        print(json.dumps(rows[-1]), flush=True)
        hit = window(server, honest_table, args.seconds, args.clients, path, token)
        answered = hit["history_answers"].get("200", 0)
        asked = sum(hit["history_answers"].values())
        extra_cpu = hit["server_cpu_s"] - base["server_cpu_share"] * hit["wall_s"]
        rows.append(
            {
                "window": "history",
                **hit,
                "cpu_ms_per_200": round(1000 * extra_cpu / answered, 2) if answered else None,
                # Refusals (429) cost the HTTP stack's share too.
                "cpu_ms_per_request": round(1000 * extra_cpu / asked, 3) if asked else None,
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=2000, help="log entries of the table")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each window")
    parser.add_argument("--clients", type=int, default=4, help="flooding connections")
    parser.add_argument("--query", default="", help="appended to the path, e.g. ?page=1")
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        help="extra flag for the server (repeat), e.g. --server-arg=--history-per-minute=100000",
    )
    args = parser.parse_args(argv)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
