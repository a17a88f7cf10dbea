"""The compose proxy's own connection limit per client (deploy/nginx.conf, ``limit_conn``),
run with Debian's nginx in front of a real app process, as tests/cluster/test_deploy.py
runs the same file."""

from __future__ import annotations

import base64
import os
import re
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from cluster_helpers import free_port
from test_deploy import nginx_dir, proxy_config_path, running_nginx

if TYPE_CHECKING:
    from conftest import ServerFactory

__all__ = ["nginx_dir"]  # the fixture, used by name below


class Handshake:
    """A game socket opened through the proxy from ``source``: its HTTP status, held open."""

    def __init__(self, port: int, source: str, path: str = "/ws", timeout: float = 10) -> None:
        self.sock = socket.create_connection(
            ("127.0.0.1", port), timeout, source_address=(source, 0)
        )
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                break
            head += chunk
        self.status = int(head.split(b" ", 2)[1]) if head else 0

    def close(self) -> None:
        self.sock.close()


def per_client_limit() -> int:
    found = re.search(r"limit_conn per_client (\d+);", proxy_config_path().read_text())
    assert found is not None, "deploy/nginx.conf sets no limit_conn per client"
    return int(found[1])


def test_the_proxy_refuses_one_client_more_sockets_than_its_limit(
    server_process: ServerFactory, nginx_dir: Path
) -> None:
    srv = server_process(args=["--trusted-proxies", "127.0.0.1/32"])
    limit = per_client_limit()
    port = free_port()
    held: list[Handshake] = []
    with running_nginx(nginx_dir, port, [srv, srv, srv]):
        try:
            for _ in range(limit):
                held.append(Handshake(port, source="127.0.0.2"))
            assert [ws.status for ws in held] == [101] * limit
            one_more = Handshake(port, source="127.0.0.2")
            held.append(one_more)
            assert one_more.status == 429
            # Another address is not held back by the first one's sockets.
            other = Handshake(port, source="127.0.0.3")
            held.append(other)
            assert other.status == 101
        finally:
            for ws in held:
                ws.close()
