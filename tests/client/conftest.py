"""Fixtures for the browser tests: Debian's Chromium driven by Playwright against the real
server (``module_server_process`` from tests/conftest.py, one per module; ``server_process``
for a test that stops its server) with its Redis.

Tables are opened over HTTP with a fixed seed and joined through the invite link
(``/#table=...&token=...``), so every test starts from a known deal.  Reduced motion is
on unless a test asks otherwise, so nothing waits for an animation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from client_helpers import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, Live


# Module scope, not session: Playwright's sync API keeps its own event loop
# running until it stops, which would break every asyncio test collected after
# the browser tests.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(
            "browser tests need Debian's Chromium at /usr/bin/chromium "
            "(apt-get install -y --no-install-recommends chromium); CI installs it"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


# Fixed seeds on tables with several people (a test plays the other seats) are refused
# unless the server is told it is being tested.
TEST_ARGS = ["--allow-fixed-seeds", "true"]


@pytest.fixture(scope="module")
def shared_live(module_server_process: Callable[..., Any]) -> Live:
    # Every table of the module comes from 127.0.0.1: the per-address creation limit
    # (20 a minute by default) is for the public, not for a module of tests.
    process = module_server_process(args=[*TEST_ARGS, "--tables-per-minute", "100000"])
    return Live(url=process.url, process=process)


@pytest.fixture
def live(shared_live: Live) -> Iterator[Live]:
    """The module's server (one start per module, not per test): each test opens its own
    tables on it, so the tests cannot see each other.  A test that kills, stalls or
    restarts its server takes ``own_live`` instead."""
    assert shared_live.process.running, "the module's server died in an earlier test"
    yield shared_live
    assert shared_live.process.running, (
        f"the module's server died during this test:\n{shared_live.process.log_tail()}"
    )


@pytest.fixture
def own_live(server_process: Callable[..., Any]) -> Live:
    """A server of the test's own, on its own clean Redis database."""
    process = server_process(args=TEST_ARGS)
    return Live(url=process.url, process=process)


@pytest.fixture
def new_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """Factory: a page in a fresh browser context (own localStorage), errors collected.

    Any uncaught page error fails the test at teardown.  Auto-pass starts off (unless
    ``auto_pass``) so a test that passes by hand is not raced by the automatic pass, and
    smart select (unless ``smart_select``) so a tap toggles the one card a test names, and
    the first-game tour counts as seen (unless ``tour``) so its dialog covers nothing.
    """
    contexts: list[Any] = []
    errors: list[str] = []

    def make(
        width: int = 390,
        height: int = 844,
        locale: str = "en-US",
        reduced_motion: str = "reduce",
        auto_pass: bool = False,
        smart_select: bool = False,
        tour: bool = False,
    ) -> Any:
        context = browser.new_context(
            viewport={"width": width, "height": height},
            locale=locale,
            reduced_motion=reduced_motion,
        )
        contexts.append(context)
        first = {
            **({} if auto_pass else {"autoPass": False}),
            **({} if smart_select else {"smartSelect": False}),
            **({} if tour else {"tourSeen": True}),
        }
        if first:
            context.add_init_script(
                "try { if (!localStorage.getItem('pdk.settings'))"
                f" localStorage.setItem('pdk.settings', JSON.stringify({json.dumps(first)}));"
                " } catch (e) { /* about:blank has no storage */ }"
            )
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        return page

    yield make
    for context in contexts:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"
