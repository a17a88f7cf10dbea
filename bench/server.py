"""Server benchmark: N concurrent tables in one ``paodekuai serve`` process, on loopback.

Each table has one scripted human client (plays its first hint, passes when it
may, starts the next deal / a new match at the end) and two bots at bot speed
0 ms (``--humans 3``: three scripted humans, no bots).  The clients take deltas
(``--frames full``: whole state frames, as before deltas) and count the bytes
each seat receives: per accepted action (mean, and p99 of the frames that told
of actions) and the join frame.  The server runs as a child process with its embedded Redis in a
temporary data directory.  Printed: actions per second (all seats), p50/p99
latency from sending a human action to receiving the state that shows it, and
server memory per table (RSS growth over the idle server, divided by tables).

    python bench/server.py --tables 200 --duration 20
    python bench/server.py --tables 50 --humans 3 --frames full --server-root /tmp/base

Bounded: it stops after ``--duration`` seconds of play (or ``--max-actions``
human actions per table), binds 127.0.0.1 only, and kills its server on exit.
A benchmark, not a test: it prints figures and asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import re
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

import msgspec
import websockets

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from server.deltas import Mirror  # noqa: E402 - after the path above
from server.deltas.wire import PUBLIC_FIELDS, SEAT_FIELDS, expand  # noqa: E402


@dataclass
class TableRun:
    latencies: list[float] = field(default_factory=list)
    human_actions: int = 0
    errors: list[str] = field(default_factory=list)
    # Latencies before this index are not counted (--steady: taken while tables joined).
    counted_from: int = 0
    # Set when its first state arrives.
    joined: asyncio.Event = field(default_factory=asyncio.Event)
    # Bytes this seat received: its first (join) frame, then every later frame that
    # told of accepted actions as (bytes, actions it told of), and the bytes of the rest.
    join_bytes: int = 0
    action_frames: list[tuple[int, int]] = field(default_factory=list)
    other_bytes: int = 0


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


# Every table and socket of the bench comes from one address (127.0.0.1), and it
# picks its seeds so runs compare: lift the per-client limits meant for the public.
BENCH_LIMITS = [
    "--tables-per-minute", "1000000", "--tables-per-minute-total", "10000000",
    "--max-connections", "20000",
    "--max-connections-per-client", "20000", "--allow-fixed-seeds", "true",
]  # fmt: skip

# Runs ``python -m server`` with a probe on the cyclic collector: each collection's
# generation, start (time.monotonic, the same clock in every process) and length,
# written as JSON to the path given when the server exits.
_GC_PROBE_LAUNCHER = """
import atexit, gc, json, runpy, sys, time
path = sys.argv.pop(1)
rows = []
began = [0.0, 0]
def probe(phase, info):
    if phase == "start":
        # The containers this collection will scan (its generation and the younger
        # ones): the collector's work, whatever the machine's load; counted before the
        # clock starts, so the pause is the collection's alone.
        began[1] = sum(len(gc.get_objects(g)) for g in range(info["generation"] + 1))
        began[0] = time.monotonic()
    else:
        rows.append((info["generation"], began[0], time.monotonic() - began[0], began[1]))
def write():
    with open(path, "w") as out:
        json.dump(rows, out)
gc.callbacks.append(probe)
atexit.register(write)
runpy.run_module("server", run_name="__main__", alter_sys=True)
"""

# Runs ``python -m server`` keeping what the cyclic collector finds unreachable once
# start-up is over (``gc.DEBUG_SAVEALL`` from the server's ``gc.freeze``): each SIGUSR2
# writes ``<prefix>.<n>`` with how many objects only the collector could free (reference
# cycles) and their types, and forgets them.  Nothing is freed meanwhile: a diagnostic.
_GC_CYCLES_LAUNCHER = """
import collections, gc, json, runpy, signal, sys
prefix = sys.argv.pop(1)
dumps = [0]
def dump(*_):
    gc.collect()
    def kind(o):
        if type(o).__name__ == "function":  # a closure in a cycle: which one
            return f"function {o.__module__}.{o.__qualname__}"
        if isinstance(o, BaseException):  # caught and kept with its traceback: which one
            return f"{type(o).__module__}.{type(o).__qualname__}: {str(o)[:70]}"
        return f"{getattr(type(o), '__module__', '?')}.{type(o).__qualname__}"
    kinds = collections.Counter(kind(o) for o in gc.garbage)
    dumps[0] += 1
    with open(f"{prefix}.{dumps[0]}", "w") as out:
        json.dump({"objects": len(gc.garbage), "types": kinds.most_common(25)}, out)
    gc.garbage.clear()
freeze = gc.freeze
def freeze_then_keep():
    freeze()
    gc.garbage.clear()
    gc.set_debug(gc.DEBUG_SAVEALL)
gc.freeze = freeze_then_keep
signal.signal(signal.SIGUSR2, dump)
runpy.run_module("server", run_name="__main__", alter_sys=True)
"""

# Runs ``python -m server`` with tracemalloc on; each SIGUSR2 dumps a snapshot to
# ``<prefix>.<n>`` (n = 1, 2, ...).
_TRACEMALLOC_LAUNCHER = """
import runpy, signal, sys, tracemalloc
prefix = sys.argv.pop(1)
dumps = [0]
def dump(*_):
    dumps[0] += 1
    tracemalloc.take_snapshot().dump(f"{prefix}.{dumps[0]}")
tracemalloc.start(4)
signal.signal(signal.SIGUSR2, dump)
runpy.run_module("server", run_name="__main__", alter_sys=True)
"""


def server_root(args: argparse.Namespace) -> Path:
    """The checkout whose ``server`` package runs: this one, or ``--server-root``.

    ``python -m server`` imports the package from its working directory first,
    so one venv runs any checkout whose dependencies it has (``bench/ab.py``
    serves a base commit's tree this way, played by this bench's client).
    """
    root = Path(args.server_root).resolve() if args.server_root else REPO_ROOT
    if not (root / "server" / "__main__.py").is_file():
        raise SystemExit(f"--server-root {root}: no server package there")
    return root


def table_request(args: argparse.Namespace, seed: int) -> dict[str, Any]:
    """The ``POST /api/tables`` body of a bench table: one human and two bots at 0 ms, or
    (``--humans 3``) three scripted humans and no bot, so no bot's CPU is in the figures."""
    if args.humans == 3:
        return {"humans": 3, "bots": [], "turn_seconds": 0, "deals": 10, "seed": seed}
    return {"bot_speed_ms": 0, "bots": [args.bot_level] * 2, "deals": 10, "seed": seed}


def start_server(
    port: int, data_dir: Path, log_path: Path, args: argparse.Namespace
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAODEKUAI_")}
    launcher: list[str] = ["-m", "server"]
    if args.cprofile:
        # Under cProfile every call costs several times more: for where, never for how much.
        launcher = ["-m", "cProfile", "-o", str(Path(args.cprofile).resolve()), *launcher]
    elif args.tracemalloc:
        launcher = ["-c", _TRACEMALLOC_LAUNCHER, str(Path(args.tracemalloc).resolve())]
    elif args.gc_probe:
        launcher = ["-c", _GC_PROBE_LAUNCHER, str(Path(args.gc_probe).resolve())]
    elif args.gc_cycles:
        launcher = ["-c", _GC_CYCLES_LAUNCHER, str(Path(args.gc_cycles).resolve())]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [args.server_python or sys.executable, *launcher, "serve", "--host", "127.0.0.1",
             "--port", str(port), "--data-dir", str(data_dir), "--log-level", "warning",
             *BENCH_LIMITS],
            cwd=server_root(args), env=env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early: {log_path.read_text()[-2000:]}")
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
    seat: int = 0,
    deltas: bool = True,
) -> None:
    """One scripted human: act on every new version where it is our move.

    Its thinking time is drawn uniformly from 0.5-1.5 x ``think`` (the mean is
    ``think``): people are not in lockstep, and 200 humans acting in the same
    millisecond every second would measure a burst no real table sees.
    """
    try:
        await _play_table(ws_url, table, stop_at, max_actions, think, run, rng, seat, deltas)
    except websockets.ConnectionClosed as exc:
        code = exc.rcvd.code if exc.rcvd is not None else 1006
        run.errors.append(f"closed:{code}")
    except OSError as exc:
        run.errors.append(f"socket:{type(exc).__name__}")


class _View(msgspec.Struct):
    seat: int
    turn: int | None
    result: Any
    match_over: bool
    hints: list[list[str]]


class _Frame(msgspec.Struct):
    """The parts of a server frame the scripted human reads (the rest is skipped)."""

    type: str
    version: int | None = None
    code: str | None = None
    view: _View | None = None


# The bench client shares the machine with the server: it decodes only what it reads.
_read_frame = msgspec.json.Decoder(_Frame).decode
_encoder = msgspec.json.Encoder()


def _write(message: dict[str, Any]) -> str:
    return _encoder.encode(message).decode()  # a text frame, as browsers send


def _read(text: str | bytes, mirror: Mirror | None) -> _Frame | str | None:
    """The frame as the scripted human reads it: a delta through the seat's mirror (the
    client's apply and digest check), read as the whole frame it stands for; a str is
    the reason to ask for a resync, None a delta ignored while one is awaited."""
    head = text[:20] if isinstance(text, bytes) else text[:20].encode()
    # A delta, or the whole picture a socket taking deltas is sent (server/deltas).
    if mirror is None or (b'"type":"d"' not in head and b'"type":"p"' not in head):
        frame = _read_frame(text)
        if mirror is not None and frame.type == "state":
            mirror.take(msgspec.json.decode(text))
        return frame
    whole = mirror.take(msgspec.json.decode(text))
    if whole is None or isinstance(whole, str):
        return whole
    if whole:
        return msgspec.convert(whole, _Frame)
    return _from_wire(mirror)


# Where a view's wire form holds what the scripted human reads (server/deltas/wire.py).
_TURN, _RESULT, _MATCH_OVER = (PUBLIC_FIELDS.index(f) for f in ("turn", "result", "match_over"))
_SEAT = len(PUBLIC_FIELDS) + SEAT_FIELDS.index("seat")


def _from_wire(mirror: Mirror) -> _Frame:
    """The frame a delta stands for, read from the mirror's picture: the few fields the
    scripted human reads, the hints expanded only when it is the seat's turn (as the
    whole frames are decoded only as far as ``_Frame``: the client is not measured)."""
    wire = mirror.picture["v"]
    seat, turn = wire[_SEAT], wire[_TURN]
    hints = expand(wire)["hints"] if turn == seat and wire[_RESULT] is None else []
    view = _View(seat, turn, wire[_RESULT], wire[_MATCH_OVER], hints)
    return _Frame(mirror.kind, mirror.version, None, view)


def _count_bytes(run: TableRun, size: int, version: int | None, seen: int) -> None:
    """Count a frame's bytes for the seat: the join frame, a frame telling of actions
    (versions past the last one seen), or another (a hint, a seat connecting)."""
    if seen < 0 and run.join_bytes == 0 and version is not None:
        run.join_bytes = size
    elif version is not None and version > seen:
        run.action_frames.append((size, version - seen))
    else:
        run.other_bytes += size


async def _play_table(
    ws_url: str,
    table: dict[str, Any],
    stop_at: float,
    max_actions: int,
    think: float,
    run: TableRun,
    rng: random.Random,
    seat: int,
    deltas: bool,
) -> None:
    loop = asyncio.get_running_loop()
    async with websockets.connect(ws_url, max_size=None) as ws:
        token = table["seats"][seat]["token"]
        join: dict[str, Any] = {"type": "join", "table": table["table"], "token": token}
        mirror = Mirror(whole=False) if deltas else None
        if deltas:
            join["deltas"] = True
        await ws.send(_write(join))
        acted_at = -1
        seen = -1
        sent_at: float | None = None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout_at(stop_at):
                while run.human_actions < max_actions:
                    text = await ws.recv()
                    frame = _read(text, mirror)
                    if frame is None:
                        continue
                    if isinstance(frame, str):
                        await ws.send(_write({"type": "resync", "reason": frame}))
                        run.errors.append(f"resync:{frame}")
                        continue
                    size = len(text) if isinstance(text, bytes) else len(text.encode())
                    _count_bytes(run, size, frame.version, seen)
                    if frame.type == "error":
                        run.errors.append(frame.code or "?")
                        continue
                    if frame.type != "state" or frame.version is None or frame.view is None:
                        continue
                    version, view = frame.version, frame.view
                    seen = max(seen, version)
                    run.joined.set()
                    if sent_at is not None and version > acted_at:
                        run.latencies.append(loop.time() - sent_at)
                        sent_at = None
                    if version <= acted_at:
                        continue
                    if view.result is not None and seat != 0:
                        continue  # the next deal is seat 0's to ask for, as a host's
                    if view.result is not None:
                        kind = "new_match" if view.match_over else "next_deal"
                        message: dict[str, Any] = {"type": kind, "version": version}
                    elif view.turn == view.seat:
                        if view.hints:
                            message = {"type": "play", "version": version, "cards": view.hints[0]}
                        else:
                            message = {"type": "pass", "version": version}
                    else:
                        continue
                    acted_at = version
                    if think > 0:
                        await asyncio.sleep(think * rng.uniform(0.5, 1.5))
                    sent_at = loop.time()
                    run.human_actions += 1
                    await ws.send(_write(message))


def proc_cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU time of ``pid`` so far (its children excluded)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def context_switches(pid: int) -> int:
    """Times ``pid`` went to sleep waiting for something (voluntary context switches)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    return 0


def redis_pid(server_pid: int) -> int | None:
    """The embedded redis-server started by the server (a child process of it)."""
    try:
        with open(f"/proc/{server_pid}/task/{server_pid}/children") as children:
            pids = [int(p) for p in children.read().split()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip().startswith("redis-server"):
                    return pid
        except OSError:
            continue
    return None


def start_profiler(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling the server for ``seconds`` (collapsed stacks, one line a stack).

    Only samples where the thread holds the GIL count: a socket write that wakes
    the reader on a busy machine often gets the writer preempted inside
    ``send()``, and wall-clock samples then blame the write for other
    processes' time.  The kernel's own share is in the system CPU figure.
    """
    return subprocess.Popen(
        ["py-spy", "record", "--pid", str(pid), "--duration", str(max(1, int(seconds))),
         "--rate", "250", "--format", "raw", "--gil", "--nonblocking", "--output", str(out)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
    )  # fmt: skip


def summarise_profile(path: Path, top: int) -> list[tuple[str, float, float]]:
    """(function, share of samples anywhere on the stack, share as the innermost frame)."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        total += count
        frames = [_frame_name(f) for f in stack.split(";")]
        for name in set(frames):
            inclusive[name] = inclusive.get(name, 0) + count
        own[frames[-1]] = own.get(frames[-1], 0) + count
    ranked = sorted(inclusive, key=lambda n: -inclusive[n])[:top]
    return [(n, inclusive[n] / max(1, total), own.get(n, 0) / max(1, total)) for n in ranked]


_FRAME = re.compile(r"^(?P<fn>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")


def _frame_name(frame: str) -> str:
    """``fn (path/to/file.py:12)`` -> ``fn (file.py)``: lines of one function count together."""
    match = _FRAME.match(frame)
    if match is None:
        return frame
    return f"{match['fn']} ({match['file'].rsplit('/', 1)[-1]})"


def summarise_collections(path: Path, window: list[float]) -> dict[str, dict[str, float]]:
    """The collector's work while the tables played, per generation: how many
    collections, their total and their longest pause (ms, wall clock), and the
    containers they scanned (in all, and the most at once)."""
    start, end = window
    rows = [(g, t, d, n) for g, t, d, n in json.loads(path.read_text()) if start <= t <= end]
    summary: dict[str, dict[str, float]] = {}
    for generation, name in enumerate(("young", "middle", "full")):
        lengths = [d for g, _t, d, _n in rows if g == generation]
        scanned = [n for g, _t, _d, n in rows if g == generation]
        summary[name] = {
            "collections": len(lengths),
            "total_ms": round(1000 * sum(lengths), 1),
            "max_ms": round(1000 * max(lengths, default=0.0), 1),
            "scanned": sum(scanned),
            "max_scanned": max(scanned, default=0),
        }
    return summary


def _file_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else -1


async def dump_tracemalloc(pid: int, path: Path) -> None:
    """Ask the server for a snapshot and wait until it is written (its size stops growing)."""
    os.kill(pid, signal.SIGUSR2)
    size = -1
    for _ in range(120):
        await asyncio.sleep(0.5)
        now = await asyncio.to_thread(_file_size, path)
        if now > 0 and now == size:
            return
        size = now
    raise RuntimeError(f"no tracemalloc snapshot at {path}")


def memory_breakdown(prefix: str, tables: int, top: int) -> dict[str, Any]:
    """Where the memory went: per table once all joined, then what grew until halfway.

    Snapshots: ``.1`` idle, ``.2`` every table joined, ``.3`` halfway.  An
    allocation made under a memo (``engine/memo.py`` on its traceback) and still
    held is a shared cache entry: it counts once, not per table.  The rest is
    split by the file of the innermost frame, in KiB per table.
    """
    import tracemalloc

    snaps = [tracemalloc.Snapshot.load(f"{prefix}.{n}") for n in (1, 2, 3)]

    def split(old: tracemalloc.Snapshot, new: tracemalloc.Snapshot) -> tuple[int, dict[str, int]]:
        shared = 0
        by_file: dict[str, int] = {}
        for stat in new.compare_to(old, "traceback"):
            if any(frame.filename.endswith("engine/memo.py") for frame in stat.traceback):
                shared += stat.size_diff
                continue
            name = str(stat.traceback[-1].filename).rsplit("site-packages/", 1)[-1]
            name = name.rsplit("lib/python3", 1)[-1].split("/", 1)[-1]
            by_file[name] = by_file.get(name, 0) + stat.size_diff
        return shared, by_file

    def per_table(by_file: dict[str, int]) -> list[tuple[str, float]]:
        ranked = sorted(by_file.items(), key=lambda kv: -kv[1])[:top]
        return [(name, round(size / 1024 / tables, 1)) for name, size in ranked]

    shared_joined, joined = split(snaps[0], snaps[1])
    shared_grown, grown = split(snaps[1], snaps[2])
    return {
        "joined_kib_per_table": round(sum(joined.values()) / 1024 / tables, 1),
        "joined_by_file": per_table(joined),
        "grown_kib_per_table": round(sum(grown.values()) / 1024 / tables, 1),
        "grown_by_file": per_table(grown),
        "shared_caches_mib": round((shared_joined + shared_grown) / 2**20, 1),
    }


def machine_speed(deals: int = 300) -> float:
    """This hour's speed of the machine: random self-play deals per second through the
    engine's ``apply`` (``bench/engine.py``'s figure (b)), in the bench's own process.

    The same code on the same VM runs up to twice as fast at one hour as at another
    (other tenants share the host), so a run's CPU figures are read next to this one:
    two runs compare only when their speeds do.  Played twice, the first to warm the
    engine's memos; the second is the figure.
    """
    sys.path.insert(0, str(REPO_ROOT))
    from bench.engine import bench_deals

    bench_deals(deals, 1)
    return round(bench_deals(deals, 1))


def memo_bytes_per_entry(deals: int = 60) -> dict[str, float]:
    """Bytes one entry of each shared memo holds, measured in the bench's own process.

    The server reports only how many entries its memos hold (sizing them there
    would stall it); this plays ``deals`` normal-bot deals here with the same
    code, then sizes every entry (keys, values and what they hold, each object
    once) and divides by the entries.
    """
    sys.path.insert(0, str(REPO_ROOT))
    from server import bots, engine
    from server.engine.memo import memo_name, memos

    every = memos()
    for m in every:
        m.cache_clear()
    for seed in range(deals):
        state = engine.new_match(engine.PRESETS["classic"], 10_000 + seed, 1)
        players = [bots.make_bot("normal", seed * 3 + s) for s in range(3)]
        while state.deal.result is None:
            seat = state.deal.turn
            view = engine.seat_view(state, seat, hints=engine.BOT_HINTS)
            engine.apply(state, players[seat].choose(view))
    seen: set[int] = set()
    out: dict[str, float] = {}
    for m in every:
        # The memo's dict (its cache_clear is that dict's bound clear method).
        cache: dict[Any, Any] = m.cache_clear.__self__  # type: ignore[attr-defined]
        if cache:
            size = sys.getsizeof(cache) + sum(
                _deep_size(k, seen) + _deep_size(v, seen) for k, v in cache.items()
            )
            out[memo_name(m)] = size / len(cache)
        m.cache_clear()
    return out


def _deep_size(value: object, seen: set[int]) -> int:
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, tuple | list | frozenset | set):
        size += sum(_deep_size(item, seen) for item in value)
    elif isinstance(value, msgspec.Struct):
        size += sum(_deep_size(getattr(value, f), seen) for f in value.__struct_fields__)
    return size


def shared_cache_bytes(entries: dict[str, int], per_entry: dict[str, float]) -> int:
    """Estimated bytes the server's memos hold, from their entries."""
    return int(sum(n * per_entry.get(name, 0.0) for name, n in entries.items()))


class Sample:
    """What the server, its Redis and this client had spent at one moment."""

    def __init__(self, base: str, server_pid: int, redis: int | None) -> None:
        self.usage: dict[str, Any] = http_json(f"{base}/api/usage")
        self.server_user, self.server_system = proc_cpu_seconds(server_pid)
        self.server_cpu = self.server_user + self.server_system
        self.server_sleeps = context_switches(server_pid)
        self.redis_cpu = sum(proc_cpu_seconds(redis)) if redis is not None else 0.0
        self.client_cpu = time.process_time()
        self.load = os.getloadavg()
        try:
            with urllib.request.urlopen(f"{base}/metrics", timeout=10) as reply:
                metrics = reply.read().decode()
        except OSError:
            metrics = ""  # not this client's to read
        # From a seat's frame arriving to the new state queued to every seat.
        self.action_latency = histogram_buckets(metrics, "pdk_action_latency_seconds", "")
        # The Redis round trip of a commit's append (group commit, WAIT included).
        self.append_latency = histogram_buckets(metrics, "pdk_redis_latency_seconds", 'op="append"')


def histogram_buckets(metrics: str, name: str, label: str) -> list[tuple[float, float]]:
    """One series of a histogram in ``/metrics`` text (its bucket lines that carry
    ``label``, all of them for ''), as (upper bound, cumulative count) pairs."""
    buckets = []
    for line in metrics.splitlines():
        if line.startswith(f"{name}_bucket{{") and label in line:
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float(bound), float(line.rsplit(" ", 1)[1])))
    return buckets


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(1000 * seconds, 2)


def histogram_quantile(
    q: float, before: list[tuple[float, float]], after: list[tuple[float, float]]
) -> float | None:
    """The q-quantile of what was observed between two readings of a cumulative
    histogram, interpolated linearly inside its bucket (as Prometheus does); None if
    nothing was observed or it lies in the open last bucket."""
    if not after or len(before) not in (0, len(after)):
        return None
    start = dict(before)
    counts = [(bound, count - start.get(bound, 0.0)) for bound, count in after]
    total = counts[-1][1]
    if total <= 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for bound, cumulative in counts:
        if cumulative >= rank:
            if bound == float("inf"):
                return None
            inside = cumulative - below
            return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = bound, cumulative
    return None


class LoopLag:
    """How late this client's event loop wakes a task that asked to sleep a few
    milliseconds: the time a frame the server has written may wait in this process
    before the scripted human reads it (the bench client's share of a latency)."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._tick())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time() + 0.005
            await asyncio.sleep(0.005)
            self.lags.append(max(0.0, loop.time() - asked))

    def quantile_ms(self, q: float) -> float | None:
        if not self.lags:
            return None
        ordered = sorted(self.lags)
        return round(1000 * ordered[int(q * (len(ordered) - 1))], 2)


async def warm_up(args: argparse.Namespace, base: str) -> None:
    """Play one table for ``args.warmup_actions`` human actions before anything is measured.

    The first table a process serves pays once for what every later one shares
    (lazily built tables of the engine and bots, the Redis connections, the
    allocator's first arenas); counted in the idle memory, that is not a
    table's cost.  The table stays open, so the live tables measured are one
    more than the ones the figures are divided by.
    """
    if args.warmup_actions <= 0:
        return
    table = await asyncio.to_thread(
        http_json,
        f"{base}/api/tables",
        table_request(args, 999),
    )
    ws_url = base.replace("http://", "ws://") + "/ws"
    stop_at = asyncio.get_running_loop().time() + 60
    runs = [TableRun() for _ in range(args.humans)]
    # Brisk players, within the per-socket rate limit; the first to reach its count
    # ends the warm-up (the others would wait for its moves).
    players = [
        asyncio.create_task(
            play_table(
                ws_url,
                table,
                stop_at,
                args.warmup_actions,
                0.1,
                run,
                random.Random(-1 - s),
                s,
                deltas=args.frames == "deltas",
            )
        )
        for s, run in enumerate(runs)
    ]
    await asyncio.wait(players, return_when=asyncio.FIRST_COMPLETED)
    for player in players:
        player.cancel()
    await asyncio.gather(*players, return_exceptions=True)
    errors = [e for run in runs for e in run.errors]
    if errors:
        raise SystemExit(f"the warm-up table failed: {errors}")


async def steady_start(
    base: str, pid: int, redis: int | None, runs: list[TableRun], window: list[float]
) -> tuple[Sample, float]:
    """``--steady``: the figures count from now, once every table has joined (or half
    the duration has gone by), so a thousand joins' CPU and waits are not in them."""
    for run in runs:
        run.counted_from = len(run.latencies)
    window[0] = time.monotonic()
    sample = await asyncio.to_thread(Sample, base, pid, redis)
    return sample, asyncio.get_running_loop().time()


async def create_tables(args: argparse.Namespace, base: str) -> list[dict[str, Any]]:
    """``args.tables`` tables, seeds 1000, 1001, ..., created a few requests at a time
    (one at a time, a thousand tables took half a minute before any play)."""
    gate = asyncio.Semaphore(8)

    async def create(i: int) -> dict[str, Any]:
        async with gate:
            body = table_request(args, 1000 + i)
            table: dict[str, Any] = await asyncio.to_thread(http_json, f"{base}/api/tables", body)
            return table

    return list(await asyncio.gather(*(create(i) for i in range(args.tables))))


async def bench(args: argparse.Namespace, base: str, pid: int) -> dict[str, Any]:
    await warm_up(args, base)
    rss_idle = rss_bytes(pid)
    redis = redis_pid(pid)
    if args.tracemalloc:
        await dump_tracemalloc(pid, Path(f"{args.tracemalloc}.1"))
    tables = await create_tables(args, base)
    # One scripted human per human seat (seat 0 alone unless --humans 3).
    players = [(t, seat) for t in tables for seat in range(args.humans)]
    runs = [TableRun() for _ in players]
    rss_created = rss_bytes(pid)
    loop = asyncio.get_running_loop()
    before = await asyncio.to_thread(Sample, base, pid, redis)
    started = loop.time()
    window = [time.monotonic()]
    stop_at = started + args.duration * (1.5 if args.steady else 1.0)
    ws_url = base.replace("http://", "ws://") + "/ws"
    deltas = args.frames == "deltas"
    tasks = [
        asyncio.create_task(
            play_table(
                ws_url,
                t,
                stop_at,
                args.max_actions,
                args.think_ms / 1000,
                r,
                random.Random(i),
                s,
                deltas=deltas,
            )
        )
        for i, ((t, s), r) in enumerate(zip(players, runs, strict=True))
    ]
    # Memory once every table has joined and shown its first state, before the shared
    # caches and the matches grow: what a table costs by itself.
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(args.duration / 2):
            await asyncio.gather(*(r.joined.wait() for r in runs))
    rss_joined = rss_bytes(pid)
    if args.steady:
        before, started = await steady_start(base, pid, redis, runs, window)
    lag = LoopLag()
    lag.start()
    if args.tracemalloc:
        await dump_tracemalloc(pid, Path(f"{args.tracemalloc}.2"))
    if args.gc_cycles:
        # The cycles of start-up, table creation and joins are not the play's.
        await dump_tracemalloc(pid, Path(f"{args.gc_cycles}.1"))
        actions_then = (await asyncio.to_thread(http_json, f"{base}/api/usage"))["actions"]
    profiler = None
    if args.profile:
        # Sample the middle of the run: every table joined, none finishing yet.
        await asyncio.sleep(min(2.0, args.duration / 4))
        profiler = start_profiler(pid, args.duration / 2, Path(args.profile))
    # Sample memory while every table is live, halfway through.
    await asyncio.sleep(max(0.0, started + args.duration / 2 - loop.time()))
    rss_live = rss_bytes(pid)
    usage_live = await asyncio.to_thread(http_json, f"{base}/api/usage")
    if args.tracemalloc:
        await dump_tracemalloc(pid, Path(f"{args.tracemalloc}.3"))
    cycles = None
    if args.gc_cycles:
        # Halfway, every socket still open: the play's cycles, not the sockets' ends.
        await dump_tracemalloc(pid, Path(f"{args.gc_cycles}.2"))
        actions_now = (await asyncio.to_thread(http_json, f"{base}/api/usage"))["actions"]
        cycles = json.loads(await asyncio.to_thread(Path(f"{args.gc_cycles}.2").read_text))
        cycles["per_action"] = round(cycles["objects"] / max(1, actions_now - actions_then), 2)
    await asyncio.gather(*tasks)
    await lag.stop()
    window.append(time.monotonic())
    after = await asyncio.to_thread(Sample, base, pid, redis)
    elapsed = loop.time() - started
    if profiler is not None:
        await asyncio.to_thread(profiler.wait, 60)
    latencies = sorted(lat for r in runs for lat in r.latencies[r.counted_from :])
    errors = [e for r in runs for e in r.errors]
    # The memos every table shares count once: estimate their bytes from their entries.
    per_entry = await asyncio.to_thread(memo_bytes_per_entry)
    cache_before = shared_cache_bytes(before.usage["shared_cache_entries"], per_entry)
    cache_live = shared_cache_bytes(usage_live["shared_cache_entries"], per_entry)
    rss_tables = rss_live - rss_idle - (cache_live - cache_before)
    # Every accepted action of every table (humans' and bots'), counted by the server.
    actions = after.usage["actions"] - before.usage["actions"]
    per_action = 1000 / max(1, actions)
    server_cpu = after.server_cpu - before.server_cpu
    bot_cpu = after.usage["bot_cpu_seconds"] - before.usage["bot_cpu_seconds"]
    return {
        "tables": args.tables,
        "humans": args.humans,
        "play_window": window,
        "warmup_actions": args.warmup_actions,
        "seconds": round(elapsed, 1),
        "actions": actions,
        "actions_per_s": round(actions / elapsed, 1),
        "human_actions": len(latencies),
        "p50_ms": round(1000 * statistics.median(latencies), 2) if latencies else None,
        "p99_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 2)
        if latencies
        else None,
        "max_ms": round(1000 * latencies[-1], 2) if latencies else None,
        # The humans' actions' latency as the server saw it (its own histogram, from
        # the frame read to the state queued), and how late this client's loop ran: a p99 far
        # above the server's with a client lag near it is the bench client's queue.
        **{
            f"server_{name}p{q:.0%}_ms".replace("%", ""): _ms(histogram_quantile(q, *series))
            for name, series in (
                ("", (before.action_latency, after.action_latency)),
                ("append_", (before.append_latency, after.append_latency)),
            )
            for q in (0.5, 0.99)
        },
        "client_lag_p50_ms": lag.quantile_ms(0.5),
        "client_lag_p99_ms": lag.quantile_ms(0.99),
        "server_cpu_ms_per_action": round(server_cpu * per_action, 3),
        "bot_cpu_ms_per_action": round(bot_cpu * per_action, 3),
        "server_cpu_ms_per_action_excluding_bots": round((server_cpu - bot_cpu) * per_action, 3),
        "redis_cpu_ms_per_action": round((after.redis_cpu - before.redis_cpu) * per_action, 3)
        if redis is not None
        else None,
        "client_cpu_ms_per_action": round((after.client_cpu - before.client_cpu) * per_action, 3),
        # How much of it the kernel spent for the process (socket writes, epoll, ...).
        "server_system_cpu_ms_per_action": round(
            (after.server_system - before.server_system) * per_action, 3
        ),
        # How often the server's event loop went to sleep and was woken, per action: on a
        # virtual machine each wake-up costs tens of microseconds of CPU by itself.
        "server_wakeups_per_action": round(
            (after.server_sleeps - before.server_sleeps) / max(1, actions), 2
        ),
        "server_cpu_share_of_core": round(server_cpu / elapsed, 3),
        "rss_idle_mib": round(rss_idle / 2**20, 1),
        "rss_live_mib": round(rss_live / 2**20, 1),
        # Halfway: includes the growth of the memo caches all tables share and of each
        # match so far (--tracemalloc splits them).
        "kib_per_table": round((rss_live - rss_idle) / 1024 / args.tables, 1),
        "shared_cache_mib": round(cache_live / 2**20, 1),
        "kib_per_table_without_caches": round(rss_tables / 1024 / args.tables, 1),
        "kib_per_table_joined": round((rss_joined - rss_idle) / 1024 / args.tables, 1),
        # What creating the tables over HTTP left behind, before any socket joined.
        "kib_per_table_created": round((rss_created - rss_idle) / 1024 / args.tables, 1),
        **_bytes_figures(runs),
        **({} if cycles is None else {"gc_cycles": cycles}),
        "errors": len(errors),
        "error_codes": sorted(set(errors)),
        "load_before": [round(x, 2) for x in before.load],
        "load_after": [round(x, 2) for x in after.load],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "event_loop": after.usage.get("event_loop", "unknown"),
    }


def _bytes_figures(runs: list[TableRun]) -> dict[str, Any]:
    """What the seats received: per accepted action a seat was told of (the join frame
    apart), the mean bytes and the p99 of the frames that told of actions; the join
    frame's mean; and the same mean over whole tables (every seat's bytes)."""
    frames = sorted(size for r in runs for size, _ in r.action_frames)
    told = sum(n for r in runs for _, n in r.action_frames)
    received = sum(size for r in runs for size, _ in r.action_frames) + sum(
        r.other_bytes for r in runs
    )
    joins = [r.join_bytes for r in runs if r.join_bytes]
    return {
        "bytes_per_action_per_seat": round(received / told, 1) if told else None,
        "bytes_p99_action_frame": frames[int(0.99 * (len(frames) - 1))] if frames else None,
        "bytes_join_frame": round(statistics.mean(joins)) if joins else None,
        "action_frames": len(frames),
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
    parser.add_argument(
        "--humans",
        type=int,
        default=1,
        choices=[1, 3],
        help="scripted humans per table: 1 (with two bots) or 3 (no bot: the server's CPU "
        "without any bot's)",
    )
    parser.add_argument(
        "--steady",
        action="store_true",
        help="count CPU, actions and latencies only once every table has joined (the "
        "play lasts up to 1.5 x --duration so that at least --duration is counted)",
    )
    parser.add_argument(
        "--server-root",
        metavar="PATH",
        help="run the server of another checkout (same venv), e.g. a base commit's worktree",
    )
    parser.add_argument(
        "--server-python",
        metavar="PATH",
        help="the interpreter that runs the server (default: this one), e.g. another venv's",
    )
    parser.add_argument(
        "--frames",
        default="deltas",
        choices=["deltas", "full"],
        help="what the scripted humans join for: deltas, or whole state frames",
    )
    parser.add_argument(
        "--warmup-actions",
        type=int,
        default=30,
        help="human actions of one table played before the idle memory is read (0: none, "
        "so one-time costs count per table)",
    )
    parser.add_argument(
        "--profile",
        metavar="PATH",
        help="also sample the server with py-spy over the middle half of the run, write its "
        "collapsed stacks to PATH and print the functions that cost the most",
    )
    parser.add_argument(
        "--cprofile",
        metavar="PATH",
        help="run the server under cProfile and write its stats to PATH (slows the server)",
    )
    parser.add_argument(
        "--tracemalloc",
        metavar="PREFIX",
        help="run the server under tracemalloc, dump snapshots idle, all joined and halfway "
        "to PREFIX.1-3, and print where the live tables' memory went (slows the server)",
    )
    parser.add_argument(
        "--gc-probe",
        metavar="PATH",
        help="time every collection of the server's cyclic GC (written to PATH) and print "
        "the collections of the play window per generation",
    )
    parser.add_argument(
        "--gc-cycles",
        metavar="PREFIX",
        help="keep what the server's cyclic GC finds unreachable while the tables play "
        "(gc.DEBUG_SAVEALL after start-up; snapshots PREFIX.1-2) and print how many objects "
        "per action only the collector could free, by type (nothing is freed: a diagnostic)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON line only")
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= 2000 or not 1 <= args.duration <= 600:
        parser.error("--tables must be 1..2000 and --duration 1..600")

    speed_before = machine_speed()
    with tempfile.TemporaryDirectory(prefix="pdk-bench-") as tmp:
        port = free_port()
        proc = start_server(port, Path(tmp) / "data", Path(tmp) / "server.log", args)
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
        if result["errors"]:
            # Why sockets were closed or refused: the server's own words.
            print((Path(tmp) / "server.log").read_text()[-3000:], file=sys.stderr)
    result["machine_deals_per_s"] = [speed_before, machine_speed()]
    if args.profile:
        result["profile_top"] = summarise_profile(Path(args.profile), 40)
    if args.tracemalloc:
        result["memory_by_file"] = memory_breakdown(args.tracemalloc, args.tables, 25)
    if args.gc_probe:
        result["collections"] = summarise_collections(Path(args.gc_probe), result["play_window"])
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"machine: {result['machine']}, {result['event_loop']}; load average "
          f"{result['load_before']} before, {result['load_after']} after; speed "
          f"{result['machine_deals_per_s']} engine deals/s before, after")  # fmt: skip
    seats = (
        f"1 scripted human thinking {args.think_ms:g} ms + 2 {args.bot_level} bots at 0 ms"
        if args.humans == 1
        else f"3 scripted humans thinking {args.think_ms:g} ms, no bot"
    )
    print(f"tables: {result['tables']} ({seats} each)")  # fmt: skip
    print(f"played: {result['seconds']} s, {result['actions']} accepted actions "
          f"({result['human_actions']} timed human actions)")  # fmt: skip
    # Every absolute figure moves with the machine: each line names the speed it was made at.
    machine = (f"[machine {result['machine_deals_per_s']} engine deals/s before/after, "
               f"load {result['load_after'][0]}]")  # fmt: skip
    print(f"actions/s: {result['actions_per_s']} {machine}")
    print(f"latency send->state: p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, "
          f"max {result['max_ms']} ms {machine}")  # fmt: skip
    print(f"  of which the server (its own histogram, frame read -> state queued, the "
          f"humans' actions): p50 {result['server_p50_ms']} ms, p99 {result['server_p99_ms']} "
          f"ms (its Redis append p50 {result['server_append_p50_ms']} ms, p99 "
          f"{result['server_append_p99_ms']} ms); this client's loop ran late by p50 "
          f"{result['client_lag_p50_ms']} ms, p99 {result['client_lag_p99_ms']} ms")  # fmt: skip
    print(f"server CPU per action: {result['server_cpu_ms_per_action']} ms = bots thinking "
          f"{result['bot_cpu_ms_per_action']} ms + the rest "
          f"{result['server_cpu_ms_per_action_excluding_bots']} ms "
          f"({result['server_cpu_share_of_core']:.0%} of one core; in the kernel "
          f"{result['server_system_cpu_ms_per_action']} ms; "
          f"{result['server_wakeups_per_action']} wake-ups per action) {machine}")  # fmt: skip
    print(f"bytes a seat received ({args.frames}): {result['bytes_per_action_per_seat']} B "
          f"per accepted action (join frame apart), p99 of a frame telling of actions "
          f"{result['bytes_p99_action_frame']} B, join frame {result['bytes_join_frame']} B; "
          f"a whole table per action: {args.humans} x that; machine speed "
          f"{result['machine_deals_per_s']} deals/s, load {result['load_after']}")  # fmt: skip
    print(f"redis CPU per action: {result['redis_cpu_ms_per_action']} ms; "
          f"bench client: {result['client_cpu_ms_per_action']} ms {machine}")  # fmt: skip
    print(f"memory: idle {result['rss_idle_mib']} MiB (after a warm-up table of "
          f"{result['warmup_actions']} human actions), live {result['rss_live_mib']} MiB; "
          f"{result['kib_per_table_without_caches']} KiB per table halfway, not counting "
          f"the shared caches ({result['shared_cache_mib']} MiB, estimated), "
          f"{result['kib_per_table']} KiB counting them, "
          f"{result['kib_per_table_joined']} KiB once all joined (of which "
          f"{result['kib_per_table_created']} KiB left by creating them over HTTP)")  # fmt: skip
    print(f"errors: {result['errors']} {result['error_codes']}")
    if args.gc_probe:
        print("cyclic GC while playing: " + ", ".join(
            f"{name} {c['collections']:g} ({c['total_ms']} ms, longest {c['max_ms']} ms; "
            f"{c['scanned'] / max(1, result['actions']):.1f} containers scanned per action, "
            f"at most {c['max_scanned']:g} at once)"
            for name, c in result["collections"].items()))  # fmt: skip
    if args.gc_cycles:
        cycles = result["gc_cycles"]
        print(f"objects only the cyclic GC could free, while playing: {cycles['objects']} "
              f"({cycles['per_action']} per accepted action); by type:")  # fmt: skip
        for name, count in cycles["types"]:
            print(f"  {count:8d}  {name}")
    if args.tracemalloc:
        memory = result["memory_by_file"]
        print(f"traced, once all joined: {memory['joined_kib_per_table']} KiB per table:")
        for name, kib in memory["joined_by_file"]:
            print(f"  {kib:8.1f}  {name}")
        print(f"traced, grown from then to halfway: {memory['grown_kib_per_table']} KiB per "
              f"table, and the shared caches {memory['shared_caches_mib']} MiB:")  # fmt: skip
        for name, kib in memory["grown_by_file"]:
            print(f"  {kib:8.1f}  {name}")
    if args.profile:
        print(f"profile ({args.profile}): share of samples, on the stack / innermost")
        for name, anywhere, innermost in result["profile_top"]:
            print(f"  {anywhere:6.1%} {innermost:6.1%}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
