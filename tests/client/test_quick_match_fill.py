"""Quick match fills a table started with bots, in a real Chromium: one browser waits
alone and is seated with two bots; a second presses quick match, watches that deal
from the bot's seat ("your seat from the next deal") and sits there once it ends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import Live, play_to_result, screenshot, screenshots_kept, strings, wait_joined

pytestmark = pytest.mark.browser

SESSION_JS = "() => JSON.parse(localStorage.getItem('pdk.session') || 'null')"


@pytest.fixture(scope="module")
def fill_live(module_server_process: Callable[..., Any]) -> Live:
    # The shortest wait the setting takes; budgets out of the way for one address.
    process = module_server_process(
        args=["--match-wait", "1s", "--tables-per-minute", "100000",
              "--queue-joins-per-minute", "100000", "--player-writes-per-minute", "100000"]
    )  # fmt: skip
    return Live(url=process.url, process=process)


def quick_match(page: Any, url: str) -> str:
    """Open the page, press quick match and wait until it plays at the table it got
    (not the solo table it opened with): that table's id."""
    page.goto(url)
    wait_joined(page)
    solo = page.evaluate(SESSION_JS)["table"]
    page.click("#btn-people")
    page.wait_for_selector("#lobby-sheet[open]")
    page.wait_for_function("() => document.querySelector('#lobby-name').value !== ''")
    page.click("#lobby-quick")
    page.wait_for_function(
        "(old) => { const s = JSON.parse(localStorage.getItem('pdk.session') || 'null');"
        " return s && s.table !== old && pdk.state().table?.id === s.table; }",
        arg=solo,
    )
    table: str = page.evaluate(SESSION_JS)["table"]
    return table


def snap(page: Any, name: str) -> None:
    """Screenshots at the phone and desktop sizes docs/client.md shows."""
    if not screenshots_kept():
        return
    for width, height in ((390, 844), (1280, 800)):
        page.set_viewport_size({"width": width, "height": height})
        screenshot(page, f"{name}-{width}x{height}.png")
    page.set_viewport_size({"width": 390, "height": 844})


@pytest.mark.waits
def test_a_second_browser_takes_a_bot_seat_of_a_waiting_players_table_after_the_deal(
    fill_live: Live, new_page: Callable[..., Any]
) -> None:
    first = new_page()
    table = quick_match(first, fill_live.url)
    seats = first.evaluate("() => pdk.state().table.seats.map(s => s.kind)")
    assert seats == ["human", "bot", "bot"]
    # Mid-deal: the bots play until it is the first player's turn, and wait for them.
    first.wait_for_function(
        "() => { const v = pdk.state().view; return v.result === null && v.turn === v.seat; }"
    )
    second = new_page()
    assert quick_match(second, fill_live.url) == table
    # The second watches the deal from the bot's seat it was given, and is told so.
    second.wait_for_function("() => pdk.state().view.joining === true")
    joining = second.evaluate("() => pdk.state().view")
    assert joining["watching"]
    assert joining["seat"] == 1
    badge = second.locator(".badge.watching")
    assert badge.inner_text() == strings("en")["watch.joining"]
    snap(second, "quick-match-joining")
    # The first plays the deal out; as it ends the seat is the second's.
    play_to_result(first)
    second.wait_for_function(
        "() => { const s = pdk.state(); return s.view && !s.view.watching && s.view.seat === 1; }"
    )
    name = second.input_value("#lobby-name")
    mine = second.evaluate("() => pdk.state()")
    assert mine["table"]["seats"][1]["kind"] == "human"
    assert mine["table"]["seats"][1]["name"] == name
    assert mine["view"]["result"] is not None
    # The first sees the newcomer at the former bot's seat, with a notice.
    first.wait_for_function(
        "(n) => pdk.state().table.seats[1].name === n && pdk.state().table.seats[1].connected",
        arg=name,
    )
    notice = strings("en")["seat.tookOver"].replace("{name}", name)
    first.wait_for_function(
        "(text) => document.querySelector('#toast')?.textContent.includes(text)", arg=notice
    )
    snap(second, "quick-match-took-over")
