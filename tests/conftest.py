"""Fixtures shared by every test directory.

- ``redis_server`` (session): one real redis-server (our EmbeddedRedis, same
  configuration as production) for the whole run; yields its ``unix://`` URL.
- ``redis_url`` (function): the same URL after FLUSHDB, so each test starts on
  an empty database.
- ``server_process`` (function, factory): the whole server as a process of its
  own (``python -m server serve``, forked from a process that has imported the
  server: tests/forked_servers.py), by default on the test's ``redis_url``.
  Calling it starts a server and waits for ``/healthz``; the returned
  ``ServerProcess`` can be ``kill()``-ed (SIGKILL by default), sent a ``signal()``
  (SIGSTOP, SIGCONT) and ``start()``-ed
  again on the same port and the same Redis.  Every process is stopped at the
  end of the test.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

import httpx
import pytest
import redis
import redis.asyncio as aioredis
from hypothesis import HealthCheck, settings

from server.redis_embedded import EmbeddedRedis
from tests.forked_servers import ForkedChild, can_fork, fork_server, server_env

__all__ = ["REPO_ROOT", "SCRIPTED_PACE", "ServerFactory", "ServerLauncher", "ServerProcess"]

REPO_ROOT = Path(__file__).resolve().parent.parent

# Flags for a server that scripted seats play on.  A scripted seat answers its turn
# within a millisecond, so with a bot at 50 ms it sends 15-20 frames a second for as
# long as a test plays: past the 10 a second (bursts of 20) a person's seat may send,
# and a quiet machine then answers ``rate_limited`` a few seconds in.  The tests of the
# limit itself (test_limits.py, test_shared_budgets.py) set their own.
SCRIPTED_PACE = ("--actions-per-second", "1000")


def _keep_bytecode() -> None:
    """Let the suite's Python processes keep compiled bytecode, outside the checkout.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (as in some CI images), every process
    compiles every module it imports from source, and the suite starts a few hundred
    server processes and workers: each server spent about 0.2 s more CPU importing
    (0.59-0.65 against 0.37-0.52 s), and the xdist workers rewrote and compiled every
    test module again.  The setting is kept in spirit: nothing is written into the
    source tree, the bytecode goes to a cache directory of the user's own
    (``PYTHONPYCACHEPREFIX``, which the processes this one starts inherit).
    """
    if not (sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")):
        return
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    prefix = Path(cache_home) / "paodekuai-tests" / "pycache"
    try:
        prefix.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return  # a read-only home: compile as asked
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    sys.pycache_prefix = str(prefix)
    sys.dont_write_bytecode = False


_keep_bytecode()

# Hypothesis: one profile for the whole suite.  No deadline (its 200 ms default
# fails examples on a loaded machine: a test's outcome must not depend on load),
# derandomized and without the example database, so every run, in CI or not,
# tries the same examples.  HYPOTHESIS_PROFILE=explore searches at random instead.
settings.register_profile(
    "suite",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

_STARTUP_TIMEOUT = 60.0  # generous: two slow cores, and an AOF may need loading
_STOP_TIMEOUT = 30.0
_LOG_TAIL_LINES = 40


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """How many workers ``-n auto`` (pyproject.toml's addopts) starts.

    The whole suite (no paths given): two more than the cores, since its tests spend
    much of their time waiting on a server, a bot's pause or Chromium, and the extra
    workers fill that (docs/performance.md, "The test suite").  Named files or tests
    run in this process, at once, as a developer or tests/mutants.py expects.  ``-n N``
    or PYTEST_XDIST_AUTO_NUM_WORKERS overrides both.  Session fixtures (the embedded
    Redis below) are per worker.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    if config.args_source is not pytest.Config.ArgsSource.TESTPATHS:
        return 0
    return (os.cpu_count() or 1) + 2


# What a test weighs when the modules are ordered (``pytest_collection_modifyitems``):
# a ``slow`` test (a venv install, a long property sweep) or one that ``waits`` (a SIGKILL
# series, a turn clock run out) takes tens of seconds, a browser test or one that starts
# servers a few, most others well under one.
_SLOW_WEIGHT = 60
_SERVER_WEIGHT = 6


def _weight(item: pytest.Item) -> int:
    if item.get_closest_marker("slow") or item.get_closest_marker("waits"):
        return _SLOW_WEIGHT
    if item.get_closest_marker("browser") is not None:
        return _SERVER_WEIGHT
    return _SERVER_WEIGHT if "server_process" in getattr(item, "fixturenames", ()) else 1


# How far into the others' weight the modules that wait are spread: not into the last
# part, where a long wait would be the suite's tail.
_WAITS_SPREAD = 0.7


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The heaviest modules first, and those that mostly wait spread among them; each
    module's tests in their own order.

    xdist hands out whole modules (``--dist loadfile``) in collection order
    (``--no-loadscope-reorder``; its own order is by test count, which put the few
    but long SIGKILL and venv modules last, where they alone made the suite's tail).
    Longest first keeps every worker busy to the end.  The waiting modules started
    together left the cores half idle for a minute (docs/performance.md, "The test
    suite"), so the first starts at once and the others follow at even steps of the
    working modules' weight.  Every worker sorts alike (they must collect alike); in one
    process the order only moves independent tests."""

    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    weights: dict[str, int] = {}
    waiting: set[str] = set()
    for item in items:
        name = module(item)
        weights[name] = weights.get(name, 0) + _weight(item)
        if item.get_closest_marker("waits") is not None:
            waiting.add(name)
    heaviest = sorted(weights, key=lambda name: -weights[name])  # stable: ties keep order
    waits = [name for name in heaviest if name in waiting]
    working = [name for name in heaviest if name not in waiting]
    step = _WAITS_SPREAD * sum(weights[name] for name in working) / max(len(waits), 1)
    order: list[str] = []
    placed, done = 0, 0
    for name in working:
        while placed < len(waits) and done >= step * placed:
            order.append(waits[placed])
            placed += 1
        order.append(name)
        done += weights[name]
    order += waits[placed:]
    rank = {name: i for i, name in enumerate(order)}
    items.sort(key=lambda item: rank[module(item)])


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture
def redis_url(redis_server: str) -> str:
    client = redis.Redis.from_url(redis_server)
    try:
        client.flushdb()
    finally:
        client.close()
    return redis_server


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """An asyncio Redis client of the test's (emptied) database, closed after it."""
    made = aioredis.Redis.from_url(redis_url)
    yield made
    await made.aclose()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """``paodekuai serve`` in a process of its own, bound to 127.0.0.1 on a fixed port.

    The process is forked from the test process's zygote (tests/forked_servers.py),
    or exec'd as ``argv`` when the test changed ``argv`` or asks for other
    ``PYTHON*`` settings (``forked`` says which).

    ``url`` has no trailing slash (``f"{srv.url}/healthz"``); ``ws_url`` is the
    game socket.  Output goes to ``log_path``; failures quote its tail.
    """

    def __init__(
        self,
        *,
        port: int,
        args: Sequence[str],
        env: Mapping[str, str],
        log_path: Path,
        redis_url: str | None,
        data_dir: Path | None,
    ) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}/ws"
        self.redis_url = redis_url
        self.data_dir = data_dir
        self.log_path = log_path
        self.argv = [
            sys.executable, "-m", "server", "serve",
            "--host", "127.0.0.1", "--port", str(port), *args,
        ]  # fmt: skip
        self._env = dict(env)
        self._proc: subprocess.Popen[bytes] | ForkedChild | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def forked(self) -> bool:
        """Whether it was forked from the zygote (tests/forked_servers.py), not exec'd."""
        return isinstance(self._proc, ForkedChild)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = _STARTUP_TIMEOUT) -> None:
        """Launch the server and return once ``/healthz`` answers 200."""
        if self.running:
            raise RuntimeError(f"server on port {self.port} is already running (pid {self.pid})")
        self._close_log()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in kill()/_close_log()
        # A test may run the server under another program (``prlimit``): then only a
        # fresh interpreter does what it asks.
        forked = self.argv[:3] == [sys.executable, "-m", "server"] and can_fork(self._env)
        started = "forked" if forked else "start"
        self._log.write(f"--- {started}: {' '.join(self.argv)}\n".encode())
        self._log.flush()
        if forked:
            self._proc = fork_server(self.argv[3:], env=self._env, log_path=self.log_path)
        else:
            self._proc = subprocess.Popen(
                self.argv,
                cwd=REPO_ROOT,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while True:
            status = self._proc.poll()
            if status is not None:
                self._close_log()
                raise RuntimeError(
                    f"server exited with status {status} before it was healthy:\n{self.log_tail()}"
                )
            if self.healthy():
                return
            if time.monotonic() >= deadline:
                self.kill()
                raise RuntimeError(
                    f"server was not healthy within {timeout:.0f}s:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def healthy(self) -> bool:
        try:
            # A generous bound: a loaded machine answering in 3 s is still healthy, and
            # a test waiting on health must fail on the answer, not on the hour's load.
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=15) as response:
                body = json.loads(response.read())
                return response.status == 200 and body.get("ok") is True
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def kill(self, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` (SIGKILL: no shutdown code runs) and wait; returns the exit status."""
        proc = self._proc
        if proc is None:
            raise RuntimeError("server was never started")
        if proc.poll() is None:
            proc.send_signal(sig)
        try:
            status = proc.wait(_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait()
        self._close_log()
        return status

    def signal(self, sig: int) -> None:
        """Send ``sig`` without waiting (SIGSTOP / SIGCONT to stall and resume it)."""
        if self._proc is None or self._proc.poll() is not None:
            raise RuntimeError(f"server on port {self.port} is not running")
        self._proc.send_signal(sig)

    def stop(self) -> int:
        """Graceful stop (SIGTERM), as an operator or systemd would; returns the exit status."""
        return self.kill(signal.SIGTERM)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        return "\n".join(self.log_text().rstrip().splitlines()[-lines:])

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.running else "stopped"
        return f"ServerProcess({self.url}, {state})"


class ServerFactory(Protocol):
    def __call__(
        self,
        *,
        redis_url: str | None = None,
        embedded: bool = False,
        data_dir: Path | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        start: bool = True,
    ) -> ServerProcess: ...


class ServerLauncher:
    """Starts ``ServerProcess``-es with one set of defaults; ``stop_all()`` ends them.

    One launcher per fixture scope: ``server_process`` makes one per test, the browser
    tests one per module for the server their tests share (tests/client/conftest.py).
    Calling it takes the arguments of ``ServerFactory``.
    """

    def __init__(self, *, log_dir: Path, redis_url: str) -> None:
        self._log_dir = log_dir
        self._redis_url = redis_url
        self.started: list[ServerProcess] = []

    def __call__(
        self,
        *,
        redis_url: str | None = None,
        embedded: bool = False,
        data_dir: Path | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        start: bool = True,
    ) -> ServerProcess:
        index = len(self.started)
        flags = list(args)
        chosen_redis: str | None = None
        if embedded:
            data_dir = data_dir or self._log_dir / f"server-data-{index}"
            flags += ["--data-dir", str(data_dir)]
        else:
            chosen_redis = redis_url or self._redis_url
            flags += ["--redis-url", chosen_redis]
        child_env = server_env()
        child_env.update(env or {})
        process = ServerProcess(
            port=free_port(),
            args=flags,
            env=child_env,
            log_path=self._log_dir / f"server-{index}.log",
            redis_url=chosen_redis,
            data_dir=data_dir,
        )
        self.started.append(process)
        if start:
            process.start()
        return process

    def stop_all(self) -> None:
        for process in self.started:
            if process.running:
                process.stop()
            process._close_log()


@pytest.fixture
def server_process(tmp_path: Path, redis_url: str) -> Iterator[ServerFactory]:
    """Factory: ``server_process()`` runs a server on this test's clean ``redis_url``.

    ``redis_url=...`` picks another Redis; ``embedded=True`` runs the embedded
    Redis in ``data_dir`` (default: a fresh dir under tmp_path) instead;
    ``args`` adds CLI flags, ``env`` adds environment variables; ``start=False``
    returns it unstarted.  Stopped with SIGTERM (then SIGKILL) at teardown.
    """
    launcher = ServerLauncher(log_dir=tmp_path, redis_url=redis_url)
    yield launcher
    launcher.stop_all()


# Database 0 is what ``redis_url`` empties before every test; servers that outlive a test
# keep their tables in another database of the same Redis, out of its reach.
_SHARED_DB = 1


@pytest.fixture(scope="module")
def module_server_process(
    tmp_path_factory: pytest.TempPathFactory, redis_server: str
) -> Iterator[ServerFactory]:
    """Factory like ``server_process``, for one server that a module's tests share.

    Its default Redis is database 1 of the session's Redis, emptied when the module
    starts: the per-test FLUSHDB of database 0 never touches it.  Each test must make
    its own tables; a test that stops, stalls or reconfigures its server takes
    ``server_process`` instead.  Stopped at the end of the module.
    """
    client = redis.Redis.from_url(redis_server, db=_SHARED_DB)
    try:
        client.flushdb()
    finally:
        client.close()
    launcher = ServerLauncher(
        log_dir=tmp_path_factory.mktemp("module-server"),
        redis_url=f"{redis_server}?db={_SHARED_DB}",
    )
    yield launcher
    launcher.stop_all()


# ---------------------------------------------------------------- in-process servers


class _Served(Protocol):
    url: str


@pytest.fixture
def client_dir(tmp_path: Path) -> Path:
    """A client dir holding only an index page, for a server run in the test's process."""
    path = tmp_path / "client"
    path.mkdir()
    (path / "index.html").write_text("<!doctype html><title>Pao De Kuai</title>")
    return path


@pytest.fixture
async def http(live: _Served) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the test's ``live`` server (each test package defines it); the
    timeout only tells a hang from a loaded machine."""
    async with httpx.AsyncClient(base_url=live.url, timeout=60.0) as client:
        yield client
