"""The lowest versions pyproject.toml allows really run the server.

deploy/constraints-lowest.txt pins every runtime dependency at its lower bound;
this installs exactly those in a fresh venv (from the configured package index),
starts the server from this checkout on them, creates a table and plays a move
over a game socket.  Slow: a venv and a pip install, made as cheaply as pip allows
(the running pip installs into a venv that has none, no byte-code compiled up
front), and kept for the next run in the user's cache, keyed by everything that
decides its contents (``lowest_venv``): every run still checks that it holds
exactly the pins.  A fresh machine (CI) makes it once.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from websockets.sync.client import connect

from bench.chaos import next_move
from tests.conftest import free_port

# Not from conftest: a test directory's own conftest may shadow the top one.
REPO_ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = REPO_ROOT / "deploy" / "constraints-lowest.txt"


def runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(text) for text in project["dependencies"]]


def pins() -> dict[str, Version]:
    found: dict[str, Version] = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            found[name.strip().lower()] = Version(version.strip())
    return found


def lower_bound(requirement: Requirement) -> Version | None:
    for spec in requirement.specifier:
        if spec.operator == ">=":
            return Version(spec.version)
    return None


def test_every_runtime_dependency_is_pinned_at_its_lower_bound() -> None:
    pinned = pins()
    for requirement in runtime_requirements():
        bound = lower_bound(requirement)
        assert bound is not None, f"{requirement} has no lower bound"
        assert pinned.get(requirement.name.lower()) is not None, f"{requirement.name} not pinned"
        pin = pinned[requirement.name.lower()]
        # The pin is the bound itself, or its first release (6.2 -> 6.2.805324).
        assert pin.release[: len(bound.release)] == bound.release, (requirement, pin)
        assert requirement.specifier.contains(pin), (requirement, pin)
    assert set(pinned) == {r.name.lower() for r in runtime_requirements()}


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paodekuai-tests"


def lowest_venv(scratch: Path) -> Path:
    """A venv holding the pinned lowest versions: the cached one made from the same
    pins, requirements and interpreter, or a new one, renamed into the cache once
    whole (a run that loses the race to another uses the other's; without a writable
    cache it stays in ``scratch``)."""
    key = hashlib.sha256(
        "\n".join(
            [
                CONSTRAINTS.read_text(),
                *sorted(str(r) for r in runtime_requirements()),
                sys.version,
                os.path.realpath(sys.executable),
                platform.machine(),
            ]
        ).encode()
    ).hexdigest()[:16]
    cached = _cache_dir() / f"lowest-venv-{key}"
    if (cached / "bin" / "python").exists():
        return cached
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        venv = cached.parent / f"{cached.name}.{os.getpid()}"
    except OSError:
        venv = scratch / "venv"
    # No pip inside: the running one installs into it (--python), and compiles nothing
    # up front (the server compiles what it imports).  Only ``bin/python`` is used, so
    # renaming the venv (its scripts name the old path) changes nothing that runs.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    names = [r.name for r in runtime_requirements()]
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--no-compile", "--only-binary", ":all:", "-c", str(CONSTRAINTS), *names],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    if venv.parent == scratch:
        return venv
    try:
        venv.rename(cached)
    except OSError:
        shutil.rmtree(venv, ignore_errors=True)  # another run cached it first
    return cached


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
            return bool(json.loads(response.read()).get("ok"))
    except (OSError, ValueError):
        return False


@pytest.mark.slow
def test_the_lowest_allowed_versions_serve_a_table_and_a_move(tmp_path: Path) -> None:
    python = lowest_venv(tmp_path) / "bin" / "python"
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "list", "--format", "json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    installed = {p["name"].lower(): Version(p["version"]) for p in json.loads(listed.stdout)}
    for name, pin in pins().items():
        assert installed[name] == pin, f"{name}: {installed[name]} installed, {pin} pinned"

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAODEKUAI_")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    argv = [str(python), "-m", "server", "serve", "--port", str(port),
            "--data-dir", str(tmp_path / "data")]  # fmt: skip
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while not healthy(url):
            assert server.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        request = urllib.request.Request(
            f"{url}/api/tables",
            data=json.dumps({"seed": 4, "bot_speed_ms": 0}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            table: dict[str, Any] = json.loads(response.read())
        with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=10) as ws:
            join = {"type": "join", "table": table["table"], "token": table["seats"][0]["token"]}
            ws.send(json.dumps(join))
            moved_at: int | None = None
            while True:
                frame = json.loads(ws.recv(timeout=20))
                assert frame["type"] == "state", frame
                if moved_at is not None and frame["version"] > moved_at:
                    break  # the move was accepted: the table moved on past it
                move = next_move(frame)
                if move is not None and move["type"] in ("play", "pass"):
                    ws.send(json.dumps(move))
                    moved_at = frame["version"]
    finally:
        server.terminate()
        server.wait(30)
    assert "Traceback" not in log_path.read_text()
    assert re.search(r"uvicorn", log_path.read_text())
