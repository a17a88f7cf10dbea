"""The https front of docker-compose.yml (deploy/Caddyfile, started when DOMAIN is set)
run natively with Debian's Caddy: only its upstream address and ports rewritten, and
its certificate from Caddy's own local CA instead of Let's Encrypt (``local_certs``),
which a client here trusts.  Behind it, the compose nginx config and an app process,
as tests/cluster/test_deploy.py runs them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import websockets
from cluster_helpers import REPO_ROOT, free_port
from test_deploy import nginx_dir, running_nginx

if TYPE_CHECKING:
    from conftest import ServerFactory

__all__ = ["nginx_dir"]  # the fixture, used by name below

CADDY = shutil.which("caddy") or "/usr/bin/caddy"
DOMAIN = "games.example.org"


class Front:
    """Caddy on deploy/Caddyfile for DOMAIN, in front of ``upstream_port``."""

    def __init__(self, home: Path, upstream_port: int) -> None:
        self.home = home
        self.http_port, self.https_port = free_port(), free_port()
        text = (REPO_ROOT / "deploy" / "Caddyfile").read_text()
        assert "reverse_proxy proxy:8000 {" in text
        text = text.replace("proxy:8000", f"127.0.0.1:{upstream_port}")
        text = text.replace(
            "\tadmin off\n",
            f"\tadmin off\n\tlocal_certs\n\thttp_port {self.http_port}\n"
            f"\thttps_port {self.https_port}\n\tskip_install_trust\n",
        )
        (home / "Caddyfile").write_text(text)
        self.root = home / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"

    @contextlib.contextmanager
    def running(self) -> Iterator[ssl.SSLContext]:
        """Caddy started; yields a TLS context that trusts its local CA (only)."""
        env = {
            **os.environ,
            "DOMAIN": DOMAIN,
            "XDG_DATA_HOME": str(self.home / "data"),
            "XDG_CONFIG_HOME": str(self.home / "config"),
            "HOME": str(self.home),
        }
        argv = [CADDY, "run", "--config", str(self.home / "Caddyfile"), "--adapter", "caddyfile"]
        with (self.home / "caddy.log").open("wb") as out:
            process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield self._ready(process)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _ready(self, process: subprocess.Popen[bytes]) -> ssl.SSLContext:
        """Wait (a guard, not a speed check) until Caddy serves its certificate."""
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((self.home / "caddy.log").read_text())
            if self.root.exists():
                # Read while Caddy is still writing it, the root file holds no certificate
                # yet (ssl.SSLError, an OSError): not ready, like a refused connection.
                with contextlib.suppress(OSError):
                    context = ssl.create_default_context(cafile=str(self.root))
                    self.get(context, "/healthz")
                    return context
            time.sleep(0.1)

    def get(self, context: ssl.SSLContext, path: str) -> tuple[int, dict[str, Any]]:
        """GET https://DOMAIN{path}, the name sent in SNI and Host, to 127.0.0.1."""
        with (
            socket.create_connection(("127.0.0.1", self.https_port), 10) as raw,
            context.wrap_socket(raw, server_hostname=DOMAIN) as tls,
        ):
            request = f"GET {path} HTTP/1.1\r\nHost: {DOMAIN}\r\nConnection: close\r\n\r\n"
            tls.sendall(request.encode())
            answer = b""
            while chunk := tls.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        return int(head.split(b" ", 2)[1]), json.loads(body) if body.strip() else {}


@pytest.fixture
def front_home(tmp_path: Path) -> Path:
    if not Path(CADDY).exists():
        pytest.skip("the https test needs Debian's caddy (apt-get install caddy); CI installs it")
    (tmp_path / "caddy").mkdir()
    return tmp_path / "caddy"


async def test_with_a_domain_compose_serves_https_and_wss_with_a_certificate_for_it(
    server_process: ServerFactory, nginx_dir: Path, front_home: Path
) -> None:
    args = ["--trusted-proxies", "127.0.0.1/32", "--allowed-origins", f"https://{DOMAIN}"]
    srv = server_process(args=args)
    nginx_port = free_port()
    with running_nginx(nginx_dir, nginx_port, [srv, srv, srv]):
        front = Front(front_home, nginx_port)
        with front.running() as trusting:
            status, body = front.get(trusting, "/healthz")
            assert (status, body["ok"]) == (200, True)
            # Only the local CA vouches for it: a client that trusts the usual CAs refuses.
            with pytest.raises(ssl.SSLCertVerificationError):
                front.get(ssl.create_default_context(), "/healthz")
            # Plain http is sent to https.
            with socket.create_connection(("127.0.0.1", front.http_port), 10) as plain:
                plain.sendall(f"GET /x HTTP/1.1\r\nHost: {DOMAIN}\r\n\r\n".encode())
                head = plain.recv(65536).decode()
            assert head.split()[1] in ("301", "308")
            assert f"Location: https://{DOMAIN}/x" in head
            await play_over_wss(front, trusting)


async def play_over_wss(front: Front, context: ssl.SSLContext) -> None:
    """A table made over https, joined over wss from the page's origin: a state comes."""
    fields = {"humans": 1, "bots": ["easy", "easy"]}
    data = json.dumps(fields).encode()
    with (
        socket.create_connection(("127.0.0.1", front.https_port), 10) as raw,
        context.wrap_socket(raw, server_hostname=DOMAIN) as tls,
    ):
        tls.sendall(
            f"POST /api/tables HTTP/1.1\r\nHost: {DOMAIN}\r\nOrigin: https://{DOMAIN}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            "Connection: close\r\n\r\n".encode()
            + data
        )
        answer = b""
        while chunk := tls.recv(65536):
            answer += chunk
    created = json.loads(answer.partition(b"\r\n\r\n")[2])
    table, seat = created["table"], created["seats"][0]
    async with websockets.connect(
        f"wss://{DOMAIN}/ws?table={table}",
        host="127.0.0.1",
        port=front.https_port,
        ssl=context,
        origin=f"https://{DOMAIN}",  # type: ignore[arg-type]
        open_timeout=10,
    ) as ws:
        await ws.send(json.dumps({"type": "join", "table": table, "token": seat["token"]}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if frame["type"] == "state":
                assert frame["version"] >= 0
                return
