"""Fixtures for the browser tests: Debian's Chromium (its headless shell, or the whole
browser for a module with ``FULL_BROWSER = True``) driven by Playwright against the real
server with its Redis: one server per pytest(-xdist) worker that every browser module of the
worker shares (``live``), a module's own (``OWN_SERVER = True`` in the module, for a module
whose tests read what the whole server holds: the lobby's lists, the leaderboard), or a
test's own (``own_live``, for a test that stops its server).

Tables are opened over HTTP with a fixed seed and joined through the invite link
(``/#table=...&token=...``), so every test starts from a known deal.  Reduced motion is
on unless a test asks otherwise, so nothing waits for an animation.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from client_helpers import CHROMIUM, CHROMIUM_ARGS, HEADLESS_SHELL, WAIT_MS, Live
from page_pool import PagePool

from server.redis_embedded import EmbeddedRedis
from tests.conftest import ServerLauncher


class BrowserServer:
    """One Chromium build, launched once per worker by Playwright's own ``launch-server``
    (the same flags as ``launch``), that browser modules connect to."""

    def __init__(self, config: Path) -> None:
        # Playwright's public command line, in a session of its own: ``python -m
        # playwright`` runs the driver as its child, so stop() signals the whole group
        # and neither the driver nor Chromium outlives the worker.
        self.config = config
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "playwright", "launch-server", "--browser", "chromium",
             "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )  # fmt: skip
        assert self._proc.stdout is not None
        self.endpoint = self._proc.stdout.readline().strip()
        if not self.endpoint.startswith("ws://"):
            self.stop()
            raise RuntimeError(f"Playwright's browser server did not start: {self.endpoint!r}")

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._proc.pid, sig)

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    def stop(self) -> None:
        # On SIGTERM the driver closes Chromium, then exits.
        self._signal(signal.SIGTERM)
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


class BrowserServers:
    """The worker's browsers: the headless shell for most modules, the whole Chromium for
    a module that sets ``FULL_BROWSER = True``; each started on first use (a worker that
    never needs the whole browser never starts it) and again if it died."""

    def __init__(self, config_dir: Path) -> None:
        self._config_dir = config_dir
        self._running: dict[Path, BrowserServer] = {}
        self._stopped: list[BrowserServer] = []

    def endpoint(self, *, full: bool) -> str:
        executable = CHROMIUM if full or not HEADLESS_SHELL.exists() else HEADLESS_SHELL
        server = self._running.get(executable)
        if server is None or not server.running:
            if server is not None:
                self._stopped.append(server)
            config = self._config_dir / f"{executable.name}.json"
            config.write_text(
                json.dumps({"executablePath": str(executable), "args": CHROMIUM_ARGS})
            )
            server = self._running[executable] = BrowserServer(config)
        return server.endpoint

    def stop(self) -> None:
        for server in [*self._running.values(), *self._stopped]:
            server.stop()


@pytest.fixture(scope="session")
def browser_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserServers]:
    if not CHROMIUM.exists():
        pytest.skip(
            "browser tests need Debian's Chromium at /usr/bin/chromium "
            "(apt-get install -y --no-install-recommends chromium chromium-headless-shell); "
            "CI installs it"
        )
    servers = BrowserServers(tmp_path_factory.mktemp("chromium"))
    yield servers
    servers.stop()


# Playwright's sync API is started per module, not per session: while it runs it keeps
# its event loop marked as running, which would break every asyncio test that the worker
# runs after the browser modules.  Connecting to the worker's running Chromium is what
# makes that cheap (about 1 s of CPU a module less than launching one).
@pytest.fixture(scope="module")
def browser(browser_servers: BrowserServers, request: pytest.FixtureRequest) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    endpoint = browser_servers.endpoint(full=getattr(request.module, "FULL_BROWSER", False))
    with sync_playwright() as pw:
        chromium = pw.chromium.connect(endpoint)
        try:
            yield chromium
        finally:
            chromium.close()


# Fixed seeds on tables with several people (a test plays the other seats) are refused
# unless the server is told it is being tested.
TEST_ARGS = ["--allow-fixed-seeds", "true"]


# Every table and player of the shared server comes from 127.0.0.1, for many modules in a
# row: the per-address and per-minute budgets are for the public, not for a run of tests.
SHARED_ARGS = [
    *TEST_ARGS,
    *("--tables-per-minute", "100000", "--tables-per-minute-total", "100000"),
    *("--history-per-minute", "100000", "--player-writes-per-minute", "100000"),
    *("--codes-per-minute", "100000", "--lobby-watchers-per-minute", "100000"),
    *("--queue-joins-per-minute", "100000", "--profiles-per-minute", "100000"),
]


@pytest.fixture(scope="session")
def worker_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerLauncher]:
    """Starts the worker's shared server on first use (a worker without browser tests
    starts none) and stops it when the worker is done.  It has a Redis of its own: it
    outlives every module, and other modules' tests read or act on the whole of their
    Redis (its client list, killing its connections), which a server that stays would
    disturb and be disturbed by."""
    with EmbeddedRedis(tmp_path_factory.mktemp("browser-redis")) as own:
        launcher = ServerLauncher(
            log_dir=tmp_path_factory.mktemp("browser-server"), redis_url=own.url
        )
        yield launcher
        launcher.stop_all()


@pytest.fixture(scope="module")
def shared_live(request: pytest.FixtureRequest) -> Live:
    if getattr(request.module, "OWN_SERVER", False):
        launcher = request.getfixturevalue("module_server_process")
        process = launcher(args=SHARED_ARGS)
        return Live(url=process.url, process=process)
    launcher = request.getfixturevalue("worker_server")
    if not launcher.started:
        launcher(args=SHARED_ARGS)
    process = launcher.started[-1]
    if not process.running:
        # It died in an earlier module, whose test failed for it: later modules get a new one.
        launcher(args=SHARED_ARGS)
        process = launcher.started[-1]
    return Live(url=process.url, process=process)


@pytest.fixture
def live(shared_live: Live) -> Iterator[Live]:
    """The shared server (one start per worker, not per module or test): each test opens
    its own tables on it, so the tests cannot see each other.  A test that kills, stalls
    or restarts its server takes ``own_live`` instead."""
    assert shared_live.process.running, "the shared server died in an earlier test"
    yield shared_live
    assert shared_live.process.running, (
        f"the shared server died during this test:\n{shared_live.process.log_tail()}"
    )


@pytest.fixture
def own_live(server_process: Callable[..., Any]) -> Live:
    """A server of the test's own, on its own clean Redis database."""
    process = server_process(args=TEST_ARGS)
    return Live(url=process.url, process=process)


@pytest.fixture(scope="module")
def page_pool(browser: Any) -> Iterator[PagePool]:
    """The module's pages, kept from one test to the next (tests/client/page_pool.py)."""
    pool = PagePool(browser, WAIT_MS)
    yield pool
    pool.close()


@pytest.fixture
def new_page(page_pool: PagePool) -> Iterator[Callable[..., Any]]:
    """Factory: a page that looks to its test like one in a fresh browser context (own
    storage, no history), errors collected.  It is a page an earlier test of the module
    left, wiped, when one with the same locale and first settings is free: a fresh
    context costs twice the CPU (tests/client/page_pool.py says what is wiped, and why
    a page whose test touched its context, clock, routes or listeners is not kept).

    Any uncaught page error fails the test at teardown.  Auto-pass starts off (unless
    ``auto_pass``) so a test that passes by hand is not raced by the automatic pass, and
    smart select (unless ``smart_select``) so a tap toggles the one card a test names, and
    the first-game tour counts as seen (unless ``tour``) so its dialog covers nothing.
    The service worker (client/sw.js) is blocked unless ``service_worker``: installing
    it fetches and stores the whole client again in every fresh context, a fifth of a
    page load's CPU, and only the tests of the worker and of going offline are about it.
    A page with the service worker is never kept.
    """
    pages: list[Any] = []
    errors: list[str] = []

    def make(
        width: int = 390,
        height: int = 844,
        locale: str = "en-US",
        reduced_motion: str = "reduce",
        auto_pass: bool = False,
        smart_select: bool = False,
        tour: bool = False,
        service_worker: bool = False,
    ) -> Any:
        first = {
            **({} if auto_pass else {"autoPass": False}),
            **({} if smart_select else {"smartSelect": False}),
            **({} if tour else {"tourSeen": True}),
        }
        init_script = (
            "try { if (!localStorage.getItem('pdk.settings'))"
            f" localStorage.setItem('pdk.settings', JSON.stringify({json.dumps(first)}));"
            " } catch (e) { /* about:blank has no storage */ }"
            if first
            else None
        )
        page = page_pool.take(
            errors=errors,
            width=width,
            height=height,
            reduced_motion=reduced_motion,
            context_options={
                "locale": locale,
                "service_workers": "allow" if service_worker else "block",
            },
            init_script=init_script,
            keep=not service_worker,
        )
        pages.append(page)
        return page

    yield make
    for page in pages:
        page_pool.give_back(page)
    assert not errors, f"uncaught errors in the page: {errors}"
