"""A worker's browser pages, kept from one test to the next (``new_page`` in conftest.py).

A page in a fresh browser context costs about 0.7 s of CPU: a renderer process started,
every client file fetched from the server and compiled.  The same page sent on to the
next test's table costs about half (docs/performance.md, "Session 17").  So a page its
test is done with goes back to the pool of its browser (one per Chromium build and
xdist worker, tests/client/conftest.py), wiped, and the next test that asks for a page
with the same context options (locale, first settings) is given it, in whichever
module of the worker it is.

What a test can leave in a page, and what is done about it:

- its document, with its timers and sockets: the page goes to ``about:blank``;
- storage of every origin any of its frames visited (local storage, IndexedDB, the
  Cache API, cookies, service workers): cleared through the DevTools protocol; session
  storage does not outlive the page's leaving its origin;
- its history: reset, so the next test's first page has no page before it;
- console messages and page errors Playwright keeps for the page: cleared;
- viewport and reduced motion: set again for every test that takes the page;
- anything else that outlives a navigation (init scripts, routes, the fake clock, event
  listeners, permissions, going offline, extra headers, exposed functions, emulated
  media, timeouts): a test reaches all of it through the page attributes in
  ``_TAINTING`` (the context among them), and a page whose test touched one of those is
  closed with its context instead of coming back.

Playwright's HTTP cache stays with the context: that is most of the saving, and no test
here reads whether a client file came from the network.
"""

from __future__ import annotations

import contextlib
import functools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Error, Page

__all__ = ["PagePool", "PooledPage"]

# Page attributes through which a test can leave state that a navigation does not wipe.
_TAINTING = (
    "add_init_script",
    "add_locator_handler",
    "clock",
    "context",
    "emulate_media",
    "expose_binding",
    "expose_function",
    "go_back",
    "go_forward",
    "on",
    "once",
    "remove_locator_handler",
    "request",
    "requests",
    "route",
    "route_from_har",
    "route_web_socket",
    "set_default_navigation_timeout",
    "set_default_timeout",
    "set_extra_http_headers",
    "unroute",
    "unroute_all",
)


class PooledPage(Page):
    """Playwright's ``Page``, marked ``tainted`` once its test reaches any attribute in
    ``_TAINTING``.  A page becomes one by class assignment (it stays the object
    Playwright hands out for it everywhere, events and ``context.pages`` included)."""

    tainted = False


def _tainting(name: str) -> Any:
    base = getattr(Page, name)
    if isinstance(base, property):
        getter = base.fget
        assert getter is not None

        def read(self: PooledPage) -> Any:
            self.tainted = True
            return getter(self)

        return property(read, doc=base.__doc__)

    @functools.wraps(base)
    def call(self: PooledPage, *args: Any, **kwargs: Any) -> Any:
        self.tainted = True
        return base(self, *args, **kwargs)

    return call


for _name in _TAINTING:
    if hasattr(Page, _name):  # an older Playwright lacks some (route_web_socket, requests)
        setattr(PooledPage, _name, _tainting(_name))


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else None


@dataclass(eq=False)
class _Kept:
    """A page of the pool, the session that wipes it, and what it is lent with."""

    page: PooledPage
    context: Any
    key: str
    devtools: Any
    # False for a page its test asked not to be kept (the service worker's): closed after.
    keep: bool = True
    origins: set[str] = field(default_factory=set)
    # The taking test's list of uncaught page errors (swapped per test).
    errors: list[str] = field(default_factory=list)

    def close(self) -> None:
        with contextlib.suppress(Error):
            self.context.close()


class PagePool:
    """The pages of one browser, by context options."""

    def __init__(self, browser: Any, timeout_ms: float) -> None:
        self._browser = browser
        self._timeout_ms = timeout_ms
        self._idle: dict[str, list[_Kept]] = {}
        self._lent: dict[int, _Kept] = {}

    def take(
        self,
        *,
        errors: list[str],
        width: int,
        height: int,
        reduced_motion: str,
        context_options: dict[str, Any],
        init_script: str | None,
        keep: bool,
    ) -> PooledPage:
        """A page at ``width`` x ``height`` whose uncaught errors go to ``errors``: a
        kept one of the same ``context_options`` and ``init_script`` if there is one
        (unless not ``keep``), else one in a new context."""
        key = json.dumps([context_options, init_script], sort_keys=True)
        idle = self._idle.get(key, []) if keep else []
        if idle:
            kept = idle.pop()
            page = kept.page
            page.set_viewport_size({"width": width, "height": height})
        else:
            kept = self._make(key, width, height, context_options, init_script)
            page = kept.page
        Page.emulate_media(page, reduced_motion=reduced_motion)  # type: ignore[arg-type]
        kept.errors = errors
        kept.keep = keep
        self._lent[id(page)] = kept
        return page

    def _make(
        self,
        key: str,
        width: int,
        height: int,
        context_options: dict[str, Any],
        init_script: str | None,
    ) -> _Kept:
        context = self._browser.new_context(
            viewport={"width": width, "height": height}, **context_options
        )
        if init_script:
            context.add_init_script(init_script)
        page = context.new_page()
        page.set_default_timeout(self._timeout_ms)
        kept = _Kept(page=page, context=context, key=key, devtools=context.new_cdp_session(page))

        def visited(frame: Any) -> None:
            origin = _origin(frame.url)
            if origin is not None:
                kept.origins.add(origin)

        page.on("framenavigated", visited)
        page.on("pageerror", lambda exc: kept.errors.append(str(exc)))
        page.__class__ = PooledPage
        return kept

    def give_back(self, page: PooledPage) -> None:
        """``page``'s test is done with it: wiped and kept, or closed with its context
        if its test touched what cannot be wiped (or the wiping fails)."""
        kept = self._lent.pop(id(page))
        if not kept.keep or page.tainted or page.is_closed():
            kept.close()
            return
        try:
            # Leaving the origin discards its session storage (the test of the pool
            # checks it); the rest of its storage belongs to the context and is cleared.
            page.goto("about:blank")
            for origin in kept.origins:
                kept.devtools.send(
                    "Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"}
                )
            kept.origins.clear()
            kept.devtools.send("Page.resetNavigationHistory")
            for clear in ("clear_console_messages", "clear_page_errors"):
                getattr(page, clear, lambda: None)()
        except Error:
            kept.close()
            return
        self._idle.setdefault(kept.key, []).append(kept)

    def close(self) -> None:
        for kept in [*self._lent.values(), *(k for ks in self._idle.values() for k in ks)]:
            kept.close()
        self._lent.clear()
        self._idle.clear()
