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

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from client_helpers import CHROMIUM, CHROMIUM_ARGS, HEADLESS_SHELL, RECORD_SENT_JS, WAIT_MS, Live
from page_pool import PagePool

from server.redis_embedded import EmbeddedRedis
from tests.conftest import ServerLauncher


class Browsers:
    """The worker's Playwright driver and Chromium builds, with a page pool each: the
    headless shell for most modules, the whole Chromium for a module that sets
    ``FULL_BROWSER = True``; each started on first use (a worker that never needs the
    whole browser never starts it) and again if it died.

    Playwright's sync API keeps its event loop marked as the thread's running loop
    between calls, which would make every asyncio test the worker runs after a browser
    module refuse to start its own loop.  So the mark is Playwright's only while a
    browser module runs (``enter``/``leave``), and cleared otherwise; Playwright's loop
    itself is suspended in its driver fiber meanwhile, and nothing runs on it.  Keeping
    one driver and one Chromium connection for the whole worker saves the driver's
    start and a connection per module, and lets pages go from one module to the next
    (``PagePool``)."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._running: dict[Path, tuple[Any, PagePool]] = {}

    def enter(self) -> None:
        if self._playwright is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._loop = asyncio.get_running_loop()
        else:
            asyncio._set_running_loop(self._loop)

    def leave(self) -> None:
        asyncio._set_running_loop(None)

    def get(self, *, full: bool) -> tuple[Any, PagePool]:
        """The browser and its pool, for a module that is between enter and leave."""
        executable = CHROMIUM if full or not HEADLESS_SHELL.exists() else HEADLESS_SHELL
        running = self._running.get(executable)
        if running is None or not running[0].is_connected():
            browser = self._playwright.chromium.launch(
                executable_path=str(executable), args=CHROMIUM_ARGS
            )
            running = self._running[executable] = (browser, PagePool(browser, WAIT_MS))
        return running

    def stop(self) -> None:
        if self._playwright is None:
            return
        self.enter()
        for browser, pool in self._running.values():
            pool.close()
            with contextlib.suppress(Exception):
                browser.close()
        self._playwright.stop()
        self.leave()


@pytest.fixture(scope="session")
def browsers() -> Iterator[Browsers]:
    if not CHROMIUM.exists():
        pytest.skip(
            "browser tests need Debian's Chromium at /usr/bin/chromium "
            "(apt-get install -y --no-install-recommends chromium chromium-headless-shell); "
            "CI installs it"
        )
    browsers = Browsers()
    yield browsers
    browsers.stop()


@pytest.fixture(scope="module")
def browser_and_pool(
    browsers: Browsers, request: pytest.FixtureRequest
) -> Iterator[tuple[Any, PagePool]]:
    browsers.enter()
    try:
        yield browsers.get(full=getattr(request.module, "FULL_BROWSER", False))
    finally:
        browsers.leave()


@pytest.fixture(scope="module")
def browser(browser_and_pool: tuple[Any, PagePool]) -> Any:
    return browser_and_pool[0]


@pytest.fixture(scope="module")
def page_pool(browser_and_pool: tuple[Any, PagePool]) -> PagePool:
    """The worker's pages of this module's browser, kept from one test to the next
    (tests/client/page_pool.py)."""
    return browser_and_pool[1]


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


@pytest.fixture
def new_page(page_pool: PagePool) -> Iterator[Callable[..., Any]]:
    """Factory: a page that looks to its test like one in a fresh browser context (own
    storage, no history), errors collected.  It is a page an earlier test of the worker
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
    A page with the service worker is never kept.  ``record_sent`` records every frame
    the page sends (``RECORD_SENT_JS``; ``sent_types`` reads it) from its first load on.
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
        record_sent: bool = False,
    ) -> Any:
        first = {
            **({} if auto_pass else {"autoPass": False}),
            **({} if smart_select else {"smartSelect": False}),
            **({} if tour else {"tourSeen": True}),
        }
        scripts = [RECORD_SENT_JS] if record_sent else []
        if first:
            scripts.append(
                "try { if (!localStorage.getItem('pdk.settings'))"
                f" localStorage.setItem('pdk.settings', JSON.stringify({json.dumps(first)}));"
                " } catch (e) { /* about:blank has no storage */ }"
            )
        init_script = ";\n".join(scripts) or None
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
