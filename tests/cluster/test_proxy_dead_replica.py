"""The compose proxy (deploy/nginx.conf, run natively as tests/cluster/test_deploy.py
runs it) in front of a replica that was killed the way a container is: its address
drops packets, so nothing refuses a connection and only a timeout tells.  No request
and no game-socket upgrade may wait longer than ``BUDGET_SECONDS``: every client here
gives up after that long, so a stall fails the test.  And deploy/nginx-reresolve.sh,
compose's way of running nginx, sends traffic to a replica that comes back at a new
address within ``RETURN_SECONDS``, and none to its old address."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from cluster_helpers import ADMIN_TOKEN, create_table, free_port, health
from test_deploy import nginx_dir, proxy_config_path, running_nginx
from test_proxy_limits import Handshake

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

__all__ = ["nginx_dir"]  # the fixture, used by name below

# docs/operations.md: what a dead replica may cost a request through the proxy, and
# how soon a replica back at a new address has traffic again.
BUDGET_SECONDS = 2.0
RETURN_SECONDS = 10.0
NGINX = "/usr/sbin/nginx"
RERESOLVE = Path(__file__).resolve().parent.parent.parent / "deploy" / "nginx-reresolve.sh"


class Address(NamedTuple):
    host: str
    port: int


@contextlib.contextmanager
def packet_dropping(host: str, port: int) -> Iterator[Address]:
    """An address whose SYNs are dropped, as a killed container's are: a listener that
    never accepts, with its accept queue already full (Linux then drops new SYNs)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(0)
    fillers = []
    for _ in range(2):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex((host, port))
        fillers.append(filler)
    try:
        yield Address(host, port)
    finally:
        for sock in [*fillers, listener]:
            sock.close()


class Counter:
    """A listener that counts the connections made to it (and answers none)."""

    def __init__(self, host: str, port: int) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, port))
        self.listener.listen(64)
        self.count = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.count += 1
            conn.close()

    def close(self) -> None:
        self.listener.close()


def within_budget(base: str, port: int, tables: int) -> None:
    """Requests of every kind through the proxy, each given up after the budget."""
    for _ in range(6):
        assert health(base, timeout=BUDGET_SECONDS)["ok"] is True
    created = create_table(base, timeout=BUDGET_SECONDS, humans=1, bots=["easy", "easy"])
    assert created["table"]
    # Game sockets of many tables: the hash sends some of them to the dead replica first.
    for number in range(tables):
        ws = Handshake(port, "127.0.0.1", f"/ws?table=t{number}", timeout=BUDGET_SECONDS)
        ws.close()
        assert ws.status == 101


def test_a_replica_that_drops_packets_costs_no_request_more_than_the_budget(
    server_process: ServerFactory, nginx_dir: Path
) -> None:
    args = ["--trusted-proxies", "127.0.0.1/32", "--admin-token", ADMIN_TOKEN]
    live = [server_process(args=args) for _ in range(2)]
    port = free_port()
    with (
        packet_dropping("127.0.0.1", free_port()) as dead,
        running_nginx(nginx_dir, port, [dead, *live]) as base,
    ):
        within_budget(base, port, tables=12)
    # The dead replica was tried (and found out by its silence), not just never chosen.
    log = (nginx_dir / "out.log").read_text()  # the config logs errors to stderr
    assert "upstream timed out (110: Connection timed out) while connecting to upstream" in log
    assert f"127.0.0.1:{dead.port}" in log


def local_server(factory: ServerFactory, host: str, port: int) -> ServerProcess:
    """A server on ``host`` (any 127.x address) and ``port``."""
    args = ["--trusted-proxies", "127.0.0.0/8", "--admin-token", ADMIN_TOKEN]
    srv = factory(args=[*args, "--host", host, "--port", str(port)], start=False)
    srv.port = port
    srv.url = f"http://{host}:{port}"
    srv.start()
    return srv


def test_a_replica_back_at_a_new_address_gets_traffic_and_its_old_address_none(
    server_process: ServerFactory, nginx_dir: Path
) -> None:
    app_port, port = free_port(), free_port()
    hosts = {"app1": "127.0.0.2", "app2": "127.0.0.3", "app3": "127.0.0.4"}
    servers = {name: local_server(server_process, host, app_port) for name, host in hosts.items()}
    # The names resolve through a file the test rewrites, as compose's DNS changes.
    hosts_file = nginx_dir / "hosts"
    resolver = nginx_dir / "resolve.sh"
    resolver.write_text(f"#!/bin/sh\nawk -v n=\"$1\" '$2 == n {{ print $1 }}' {hosts_file}\n")
    resolver.chmod(0o755)

    def publish() -> None:
        hosts_file.write_text("".join(f"{a} {n}\n" for n, a in hosts.items()))

    publish()
    text = proxy_config_path().read_text().replace("listen 8000;", f"listen 127.0.0.1:{port};")
    (nginx_dir / "nginx.in.conf").write_text(text.replace(":8000 ", f":{app_port} "))
    env = {
        **os.environ,
        "NGINX": NGINX,
        "NGINX_CONF_IN": str(nginx_dir / "nginx.in.conf"),
        "NGINX_CONF": str(nginx_dir / "nginx.conf"),
        "RESOLVE": str(resolver),
    }
    argv = ["sh", str(RERESOLVE), "-p", str(nginx_dir), "-e", str(nginx_dir / "error.log")]
    argv += ["-g", f"daemon off; pid {nginx_dir / 'nginx.pid'};"]
    base = f"http://127.0.0.1:{port}"
    with (nginx_dir / "out.log").open("wb") as out:
        script = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        until_served(base, {s.pid for s in servers.values()})
        # Killed: its address now drops packets (compose's DNS may still name it).
        servers["app1"].kill()
        with packet_dropping(hosts["app1"], app_port):
            within_budget(base, port, tables=12)
            # Started again at another address.
            hosts["app1"] = "127.0.0.5"
            back = local_server(server_process, hosts["app1"], app_port)
            publish()
            until_served(base, {back.pid}, RETURN_SECONDS)
        old = Counter("127.0.0.2", app_port)
        try:
            within_budget(base, port, tables=12)
            pids = {health(base, ADMIN_TOKEN, timeout=BUDGET_SECONDS)["pid"] for _ in range(9)}
            assert back.pid in pids
            assert old.count == 0
        finally:
            old.close()
    finally:
        script.send_signal(signal.SIGTERM)
        script.wait(20)
    assert "nginx-reresolve: replicas now at" in (nginx_dir / "out.log").read_text()


def until_served(base: str, pids: set[int | None], guard: float = 60.0) -> None:
    """Wait (at most ``guard`` seconds, then fail) until requests through the proxy
    have reached every process of ``pids``."""
    deadline = time.monotonic() + guard
    seen: set[int | None] = set()
    while not pids <= seen:
        assert time.monotonic() < deadline, f"not served by {pids - seen} within {guard} s"
        with contextlib.suppress(OSError):
            seen.add(health(base, ADMIN_TOKEN, timeout=BUDGET_SECONDS)["pid"])
        time.sleep(0.05)
