"""The ``paodekuai`` command: argument parsing, and ``serve`` run for real as a subprocess."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis

from server.cli import browser_url, build_parser, main, redact_url, settings_from_args
from server.config import OPTIONS
from server.redis_embedded import SOCKET_NAME

if TYPE_CHECKING:
    from conftest import ServerFactory

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_serve_flags_fill_the_settings(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        [
            "serve",
            "--host", "0.0.0.0",
            "--port", "9000",
            "--data-dir", str(tmp_path / "d"),
            "--table-ttl", "2h",
            "--log-level", "warning",
        ]
    )  # fmt: skip
    settings = settings_from_args(args, {}, check_paths=False)
    assert (settings.host, settings.port, settings.table_ttl_seconds) == ("0.0.0.0", 9000, 7200)
    assert settings.data_dir == tmp_path / "d"
    assert settings.log_level == "warning"
    assert settings.redis_url is None


def test_serve_flags_left_out_fall_back_to_the_environment() -> None:
    args = build_parser().parse_args(["serve", "--port", "9000"])
    environ = {"PAODEKUAI_PORT": "9001", "PAODEKUAI_REDIS_URL": "redis://r:6379/0"}
    settings = settings_from_args(args, environ, check_paths=False)
    assert settings.port == 9000
    assert settings.redis_url == "redis://r:6379/0"


def test_a_command_is_required() -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([])
    assert exited.value.code == 2


def test_a_bad_setting_exits_with_status_2_and_says_which_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--port", "70000"]) == 2
    err = capsys.readouterr().err
    assert "--port: port must be 1..65535, not 70000" in err
    assert "[bad_port]" in err


def test_python_dash_m_server_is_the_paodekuai_command_and_documents_every_variable() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "server", "serve", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.startswith("usage: paodekuai serve")
    help_text = " ".join(shown.stdout.split())  # argparse wraps long lines
    for option in OPTIONS:
        assert option.flag in help_text
        assert option.env in help_text


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8000/"),
        ("0.0.0.0", "http://localhost:8000/"),
        ("::", "http://localhost:8000/"),
        ("::1", "http://[::1]:8000/"),
        ("games.example.org", "http://games.example.org:8000/"),
    ],
)
def test_the_printed_url_is_one_a_browser_can_open(host: str, url: str) -> None:
    assert browser_url(host, 8000) == url


def test_redis_passwords_never_reach_the_log() -> None:
    assert redact_url("redis://:hunter2@redis:6379/0") == "redis://:***@redis:6379/0"
    assert redact_url("redis://game:hunter2@redis:6379/0") == "redis://game:***@redis:6379/0"
    assert redact_url("redis://redis:6379/0") == "redis://redis:6379/0"


def test_serve_with_embedded_redis_prints_its_url_and_stops_cleanly_on_sigterm(
    server_process: ServerFactory,
) -> None:
    server = server_process(embedded=True)
    assert server.data_dir is not None
    assert (server.data_dir / SOCKET_NAME).exists()
    assert f"Pao De Kuai is ready: open http://127.0.0.1:{server.port}/" in server.log_text()
    assert server.stop() == 0
    # Redis got its SHUTDOWN: it removed its socket and said goodbye in its log.
    assert not (server.data_dir / SOCKET_NAME).exists()
    assert "ready to exit" in (server.data_dir / "redis.log").read_text()


def test_serve_stops_cleanly_on_sigint_too(server_process: ServerFactory) -> None:
    server = server_process(embedded=True)
    assert server.kill(signal.SIGINT) == 0
    assert server.data_dir is not None
    assert not (server.data_dir / SOCKET_NAME).exists()


def test_serve_restarts_on_its_data_dir_after_sigkill_and_keeps_the_data(
    server_process: ServerFactory,
) -> None:
    server = server_process(embedded=True)
    assert server.data_dir is not None
    store = redis.Redis(unix_socket_path=str(server.data_dir / SOCKET_NAME))
    try:
        store.set("written-before-sigkill", "kept")
    finally:
        store.close()
    assert server.kill() == -signal.SIGKILL
    server.start()  # waits for the orphaned redis to exit and free the data dir
    store = redis.Redis(unix_socket_path=str(server.data_dir / SOCKET_NAME))
    try:
        assert store.get("written-before-sigkill") == b"kept"
    finally:
        store.close()


def test_serve_on_an_external_redis_leaves_that_redis_running(
    server_process: ServerFactory, redis_url: str
) -> None:
    server = server_process()
    assert server.redis_url == redis_url
    assert server.stop() == 0
    client = redis.Redis.from_url(redis_url)
    try:
        assert client.ping() is True
    finally:
        client.close()


def test_serve_on_a_busy_port_fails_and_still_shuts_its_redis_down(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        finished = subprocess.run(
            [sys.executable, "-m", "server", "serve", "--port", str(port),
             "--data-dir", str(tmp_path)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )  # fmt: skip
    assert finished.returncode != 0
    assert "is ready" not in finished.stdout
    assert not (tmp_path / SOCKET_NAME).exists()
    assert "ready to exit" in (tmp_path / "redis.log").read_text()


def test_serve_runs_on_uvloop(server_process: ServerFactory) -> None:
    # uvloop is a dependency because the same server spends less CPU per action on it
    # (docs/performance.md); uvicorn would quietly fall back to asyncio's loop without it.
    server = server_process(embedded=True)
    with urllib.request.urlopen(f"{server.url}/api/usage", timeout=5) as response:
        usage = json.loads(response.read())
    assert usage["event_loop"].startswith("uvloop"), usage["event_loop"]
