"""deploy/smoke.py against native processes behind the compose proxy config (Debian's
nginx, as tests/cluster/test_deploy.py runs it): it passes a stack that survives the
owner's death, and fails one where requests stall."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from cluster_helpers import ADMIN_TOKEN, REPO_ROOT, free_port
from test_deploy import nginx_dir, running_nginx

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

__all__ = ["nginx_dir"]  # the fixture, used by name below

SMOKE = REPO_ROOT / "deploy" / "smoke.py"


def smoke(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(SMOKE), url, "--admin-token", ADMIN_TOKEN, *args]
    # A guard against a hung script, never a speed check.
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)


def figures(out: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


def three(server_process: ServerFactory) -> list[ServerProcess]:
    args = ["--trusted-proxies", "127.0.0.1/32", "--admin-token", ADMIN_TOKEN]
    return [server_process(args=args) for _ in range(3)]


def test_the_smoke_script_kills_the_owner_and_sees_play_go_on_without_a_stall(
    server_process: ServerFactory, nginx_dir: Path
) -> None:
    servers = three(server_process)
    with running_nginx(nginx_dir, free_port(), servers) as base:
        # A stall is a request that meets a replica which answers nothing: it waits out
        # nginx's proxy_read_timeout (30 s).  The script's default (2 s) is for a quiet
        # stack; at load 15 a probe of this healthy one took 5 s (session 15).
        done = smoke(base, "--kill-cmd", "kill -9 {pid}", "--stall", "30")
    assert done.returncode == 0, done.stdout + done.stderr
    found = figures(done.stdout)
    assert found["result"] == "ok"
    assert found["replicas"] == "3"
    assert found["lost actions"] == "0"
    assert re.match(r"\d+\.\d+ s \(", found["play went on after"]), found
    # It killed the owner, one of the three, by the pid it found for it.
    killed = [s for s in servers if not s.running]
    assert len(killed) == 1
    assert found["owner killed"].split("-")[-2] == str(killed[0].pid)


@pytest.mark.waits
def test_the_smoke_script_fails_a_stack_whose_requests_stall(
    server_process: ServerFactory, nginx_dir: Path
) -> None:
    servers = three(server_process)
    # A stopped process still takes connections (the kernel does) and answers none:
    # what nginx sends it waits, which the script must call a stall.
    with running_nginx(nginx_dir, free_port(), servers) as base:
        done = smoke(base, "--kill-cmd", "kill -STOP {pid}", "--guard", "10")
    for server in servers:
        if server.running:
            server.signal(signal.SIGCONT)  # so the fixture can stop it
    assert done.returncode == 1, done.stdout + done.stderr
    found = figures(done.stdout)
    assert found["result"] == "FAIL"
    assert float(found["slowest proxied request"].split()[0]) > 2.0
    assert "FAIL: a proxied request waited" in done.stdout
