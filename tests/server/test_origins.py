"""DNS rebinding and the server's own origin, over a real server process: a request is
served only when its ``Host`` is one of the server's names, and a page only when its
``Origin`` is the server's own (scheme included) or a listed one."""

from __future__ import annotations

import base64
import os
import socket
from typing import TYPE_CHECKING

import pytest
from wire import http_json

from server.origins import HostAllowList

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

EVIL = "rebind.evil.example"


def handshake(srv: ServerProcess, host: str, origin: str) -> int:
    """The status of a game socket handshake sent with these ``Host`` and ``Origin``."""
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as sock:
        key = base64.b64encode(os.urandom(16)).decode()
        head = (
            f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            f"Sec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n\r\n"
        )
        sock.sendall(head.encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(1024)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def create(srv: ServerProcess, host: str, origin: str) -> tuple[int, str | None]:
    status, body = http_json(
        "POST", f"{srv.url}/api/tables", {}, headers={"Host": host, "Origin": origin}
    )
    return status, body["error"]["code"] if status >= 400 else None


def test_a_rebound_name_is_refused_even_with_a_matching_origin(
    server_process: ServerFactory,
) -> None:
    srv = server_process()
    evil = f"{EVIL}:{srv.port}"
    assert create(srv, evil, f"http://{evil}") == (421, "host_not_allowed")
    assert handshake(srv, evil, f"http://{evil}") == 403
    status, body = http_json("GET", f"{srv.url}/healthz", headers={"Host": evil})
    assert (status, body["error"]["code"]) == (421, "host_not_allowed")
    # An address the server is not bound to is not its own either.
    assert create(srv, f"10.1.2.3:{srv.port}", f"http://10.1.2.3:{srv.port}")[0] == 421
    # Its own names: the bind address and the localhost names.
    for name in ("127.0.0.1", "localhost"):
        own = f"{name}:{srv.port}"
        assert create(srv, own, f"http://{own}") == (201, None)
        assert handshake(srv, own, f"http://{own}") == 101


def test_an_https_page_is_not_the_plain_http_servers_own(server_process: ServerFactory) -> None:
    srv = server_process()
    own = f"127.0.0.1:{srv.port}"
    assert create(srv, own, f"https://{own}") == (403, "origin_not_allowed")
    assert handshake(srv, own, f"https://{own}") == 403


def test_the_listed_origins_host_names_are_the_servers_own(server_process: ServerFactory) -> None:
    srv = server_process(args=["--allowed-origins", "https://games.example"])
    assert create(srv, "games.example", "https://games.example") == (201, None)
    assert handshake(srv, "games.example", "https://games.example") == 101
    assert create(srv, EVIL, "https://games.example") == (421, "host_not_allowed")
    assert handshake(srv, EVIL, "https://games.example") == 403


@pytest.mark.parametrize("bind", ["0.0.0.0", "::"])
def test_a_server_on_every_address_answers_to_any_address_but_not_to_other_names(
    bind: str,
) -> None:
    # (Pure: a test server bound to every interface could collide with other tests' ports.)
    hosts = HostAllowList((), bind)
    assert hosts.allows("10.1.2.3:8000")
    assert hosts.allows("[fd00::5]:8000")
    assert not hosts.allows(f"{EVIL}:8000")
    assert not HostAllowList((), "10.0.0.7").allows("10.1.2.3:8000")
    assert HostAllowList((), "10.0.0.7").allows("10.0.0.7:8000")
    assert HostAllowList(("*",), "127.0.0.1").allows(EVIL)
