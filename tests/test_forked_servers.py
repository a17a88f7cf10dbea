"""The servers tests start are forked from a zygote (tests/forked_servers.py): each
must still be a server process of its own, as ``python -m server serve`` makes one."""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ServerFactory, ServerProcess
from tests.forked_servers import can_fork

# Forking turned off (PDK_FORK_SERVERS=0, to rule the zygote out): every server is
# exec'd, which the last test checks anyway.
forking = pytest.mark.skipif(
    os.environ.get("PDK_FORK_SERVERS") == "0", reason="PDK_FORK_SERVERS=0: no server is forked"
)


def _health(server: ServerProcess) -> dict[str, Any]:
    with urllib.request.urlopen(f"{server.url}/healthz", timeout=15) as response:
        body: dict[str, Any] = json.loads(response.read())
        return body


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def _server_lines(server: ServerProcess) -> list[str]:
    """What the server wrote to its log, without the launcher's own header lines."""
    return [line for line in server.log_text().splitlines() if not line.startswith("--- ")]


@forking
def test_a_forked_server_is_a_process_of_its_own_that_sigkill_ends(
    server_process: ServerFactory,
) -> None:
    server = server_process()
    assert server.forked
    assert _health(server)["pid"] == server.pid != os.getpid()
    assert _parent_of(server.pid or 0) != os.getpid()  # the zygote's child, not ours
    assert server.kill() == -signal.SIGKILL
    assert not server.running


@forking
def test_a_forked_server_stopped_by_sigterm_exits_zero_with_its_whole_log(
    server_process: ServerFactory,
) -> None:
    server = server_process()
    assert any("storage: external Redis" in line for line in _server_lines(server))
    assert server.stop() == 0
    assert "stopped" in _server_lines(server)[-1]


@forking
def test_a_forked_server_runs_with_the_environment_it_was_given(
    server_process: ServerFactory,
) -> None:
    server = server_process(env={"PAODEKUAI_LOG_FORMAT": "json"})
    assert server.forked
    logged = [line for line in _server_lines(server) if line.startswith("{")]
    assert any("storage: external Redis" in json.loads(line)["message"] for line in logged)
    assert not any(" INFO " in line for line in _server_lines(server))  # no text format

    refused = server_process(env={"PAODEKUAI_MAX_SPECTATORS": "many"}, start=False)
    with pytest.raises(RuntimeError, match="status 2"):
        refused.start()
    assert refused.forked
    assert "PAODEKUAI_MAX_SPECTATORS" in refused.log_text()


@forking
def test_two_forked_servers_are_two_processes_to_the_cluster(
    server_process: ServerFactory,
) -> None:
    first, second = server_process(), server_process()
    assert first.forked
    assert second.forked
    assert first.pid != second.pid
    assert _health(first)["process"] != _health(second)["process"]


def test_a_server_asking_for_other_interpreter_settings_gets_a_fresh_interpreter(
    server_process: ServerFactory,
) -> None:
    assert not can_fork({**os.environ, "PYTHONHASHSEED": "123"})
    server = server_process(env={"PYTHONHASHSEED": "123"})
    assert not server.forked
    assert _health(server)["pid"] == server.pid
    assert _parent_of(server.pid or 0) == os.getpid()
