"""The page pool behind ``new_page`` (tests/client/page_pool.py): a page an earlier test
left reads like one in a fresh context, and a page whose test touched what a wipe
cannot reach is never handed out again."""

from __future__ import annotations

from typing import Any

import pytest
from client_helpers import WAIT_MS, Live
from page_pool import PagePool

pytestmark = pytest.mark.browser

OPTIONS = {"locale": "en-US", "service_workers": "block"}
FIRST = "try { localStorage.setItem('first', 'set by the init script') } catch (e) {}"

# Everything a page's scripts can read of what earlier documents left.
LEFT_JS = """async () => ({
  local: Object.fromEntries(Object.entries(localStorage)),
  session: Object.fromEntries(Object.entries(sessionStorage)),
  cookie: document.cookie,
  databases: (await indexedDB.databases()).map((d) => d.name),
  caches: await caches.keys(),
  history: history.length,
})"""

# What a test can leave behind in a page, by script.
DIRTY_JS = """async () => {
  localStorage.setItem('left', 'by the last test');
  sessionStorage.setItem('left', 'by the last test');
  document.cookie = 'left=by-the-last-test; max-age=3600';
  await new Promise((done) => { indexedDB.open('left').onsuccess = (e) => {
    e.target.result.close(); done(); }; });
  await (await caches.open('left')).put('/left', new Response('by the last test'));
  history.pushState(null, '', '#a'); history.pushState(null, '', '#b');
}"""


def take(pool: PagePool, errors: list[str] | None = None) -> Any:
    return pool.take(
        errors=[] if errors is None else errors,
        width=390,
        height=844,
        reduced_motion="reduce",
        context_options=OPTIONS,
        init_script=FIRST,
        keep=True,
    )


def left_in(page: Any, url: str) -> dict[str, Any]:
    page.goto(url)
    found: dict[str, Any] = page.evaluate(LEFT_JS)
    return found


@pytest.fixture
def pool(browser: Any) -> Any:
    pool = PagePool(browser, WAIT_MS)
    yield pool
    pool.close()


def test_a_page_given_back_reads_like_a_fresh_one_when_taken_again(
    live: Live, pool: PagePool
) -> None:
    url = f"{live.url}/rules/en.html"
    fresh = left_in(take(pool), url)
    page = take(pool)
    page.goto(url)
    page.evaluate(DIRTY_JS)
    page.goto(f"{live.url}/rules/de.html")
    assert page.evaluate(LEFT_JS) != fresh
    pool.give_back(page)
    again = take(pool)
    assert again is page
    assert left_in(again, url) == fresh
    assert fresh["local"] == {"first": "set by the init script"}


def test_a_page_whose_test_touched_its_context_is_closed_not_kept(
    live: Live, pool: PagePool
) -> None:
    page = take(pool)
    page.goto(f"{live.url}/rules/en.html")
    page.context.add_init_script("window.leftByTheLastTest = true")
    pool.give_back(page)
    assert page.is_closed()
    again = take(pool)
    again.goto(f"{live.url}/rules/en.html")
    assert again.evaluate("() => window.leftByTheLastTest") is None


def test_a_page_that_went_between_origins_comes_back_wiped_of_both(
    live: Live, pool: PagePool
) -> None:
    urls = [
        f"{live.url}/rules/en.html",
        live.url.replace("127.0.0.1", "localhost") + "/rules/en.html",
    ]
    first = take(pool)
    fresh = [left_in(first, url) for url in urls]
    page = take(pool)
    for url in urls:
        page.goto(url)
        page.evaluate(DIRTY_JS)
    pool.give_back(page)
    again = take(pool)
    assert again is page
    assert [left_in(again, url) for url in urls] == fresh


def test_a_kept_page_reports_its_errors_to_the_test_that_holds_it(
    live: Live, pool: PagePool
) -> None:
    first: list[str] = []
    page = take(pool, first)
    pool.give_back(page)
    second: list[str] = []
    assert take(pool, second) is page
    page.goto(f"{live.url}/rules/en.html")
    page.evaluate("() => setTimeout(() => { throw new Error('thrown later'); })")
    page.evaluate("() => new Promise((done) => setTimeout(done, 0))")
    assert first == []
    assert any("thrown later" in error for error in second), second
