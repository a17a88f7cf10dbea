"""The lobby in a real Chromium: quick match puts three browsers at one table, a room
code (and its QR) seats a fourth at an open table, and the sheet fits a 360 px phone."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from client_helpers import Live, resize, screenshot, wait_joined

from server.players import COLOURS

pytestmark = pytest.mark.browser
# Its tests read what the whole server holds (quick match's queue, the lists of open
# tables, the leaderboard): a server of its own, not the one other modules share.
OWN_SERVER = True

SESSION_JS = "() => JSON.parse(localStorage.getItem('pdk.session'))"


def wait_at(page: Any, table: str) -> dict[str, Any]:
    """The state once the page plays at ``table`` (not the table it left)."""
    page.wait_for_function(
        "(t) => window.pdk && pdk.state().table?.id === t && pdk.state().view !== null", arg=table
    )
    state: dict[str, Any] = page.evaluate("pdk.state()")
    return state


def open_lobby(page: Any) -> None:
    page.click("#btn-people")
    page.wait_for_selector("#lobby-sheet[open]")
    # The player exists once its name is shown.
    page.wait_for_function("() => document.querySelector('#lobby-name').value !== ''")


def test_three_browsers_pressing_quick_match_end_up_at_one_table(
    live: Live, new_page: Callable[..., Any]
) -> None:
    pages = []
    for _ in range(3):
        page = new_page()
        page.goto(live.url)
        wait_joined(page)  # a table against bots first, as for every visitor
        open_lobby(page)
        pages.append(page)
    before = {page.evaluate(SESSION_JS)["table"] for page in pages}
    for page in pages:
        page.click("#lobby-quick")
    sessions = []
    for page in pages:
        page.wait_for_function(
            "(old) => { const s = JSON.parse(localStorage.getItem('pdk.session'));"
            " return s && !old.includes(s.table); }",
            arg=list(before),
        )
        # The page still shows its solo table until the new one's first state: wait
        # for a state of the matched table, not for any state.
        table = page.evaluate(SESSION_JS)["table"]
        page.wait_for_function(
            "(t) => { const s = pdk.state();"
            " return !!(s && s.view && s.table && s.table.id === t); }",
            arg=table,
        )
        sessions.append((table, page.evaluate("() => pdk.state().view.seat")))
    assert len({table for table, _ in sessions}) == 1
    assert sorted(seat for _, seat in sessions) == [0, 1, 2]
    # Each sees the others by the names their players chose (the server's identities).
    names = [page.input_value("#lobby-name") for page in pages]
    shown = pages[0].evaluate("() => pdk.state().table.seats.map(s => s.name)")
    assert sorted(shown) == sorted(names)


def test_a_table_opened_for_people_is_listed_live_and_its_code_seats_a_fourth(
    live: Live, new_page: Callable[..., Any]
) -> None:
    watcher = new_page()
    watcher.goto(live.url)
    wait_joined(watcher)
    open_lobby(watcher)
    host = new_page()
    host.goto(live.url)
    wait_joined(host)
    open_lobby(host)
    first_table = host.evaluate(SESSION_JS)["table"]
    host.click("#lobby-new-open")
    host.wait_for_function(
        "(old) => JSON.parse(localStorage.getItem('pdk.session')).table !== old",
        arg=first_table,
    )
    wait_at(host, host.evaluate(SESSION_JS)["table"])
    open_lobby(host)
    code = host.text_content("#lobby-table-code")
    assert code is not None
    assert len(code) == 6
    assert host.locator("#lobby-qr svg").count() == 1
    screenshot(host, "lobby-invite-390.png")
    # The watcher's list shows the new table without a reload.
    watcher.wait_for_selector(f"#lobby-open button[data-code='{code}']")
    fourth = new_page()
    fourth.goto(live.url)
    wait_joined(fourth)
    open_lobby(fourth)
    fourth.fill("#lobby-code", code.lower())
    fourth.click("#lobby-code-form button[type=submit]")
    fourth.wait_for_function(
        "(t) => JSON.parse(localStorage.getItem('pdk.session')).table === t",
        arg=host.evaluate(SESSION_JS)["table"],
    )
    assert wait_at(fourth, host.evaluate(SESSION_JS)["table"])["view"]["seat"] == 1
    # One seat is left: the table stays listed with one free seat.
    watcher.wait_for_function(
        "(c) => document.querySelector(`#lobby-open button[data-code='${c}']`)"
        " ?.parentElement.textContent.includes('1 seat free')",
        arg=code,
    )


def test_a_code_link_from_the_qr_seats_whoever_opens_it(
    live: Live, new_page: Callable[..., Any]
) -> None:
    table = live.post("/api/tables", {"humans": 2, "bots": ["easy"]})
    page = new_page()
    page.goto(f"{live.url}/#code={table['code']}")
    assert wait_at(page, table["table"])["view"]["seat"] == 1


def open_for_people(live: Live) -> dict[str, Any]:
    """A table for three people, listed in the lobby by its host (as "Open a table for
    people" does); the table's id and code."""
    made: dict[str, Any] = live.post("/api/tables", {"humans": 3, "bots": []})
    live.post("/api/lobby/open", {"code": made["code"], "token": made["seats"][0]["token"]})
    return made


# An init script: every list of open tables the page's lobby is sent, in
# ``window.lobbyLists``, whether or not the page has drawn it yet.
RECORD_LISTS_JS = """(() => {
  window.lobbyLists = [];
  const Original = window.EventSource;
  window.EventSource = function (...args) {
    const source = new Original(...args);
    source.addEventListener("message", (e) => window.lobbyLists.push(JSON.parse(e.data)));
    return source;
  };
})()"""


def test_a_join_tap_still_counts_when_the_list_changes_under_the_finger(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """The list is sent again whenever any table opens or fills, newest first: a table
    opened while a Join is pressed would slide that Join down from under the finger, so
    the list waits for the finger to lift, and is drawn then."""
    first, other = open_for_people(live), open_for_people(live)
    page = new_page()
    page.add_init_script(RECORD_LISTS_JS)
    page.goto(live.url)
    wait_joined(page)
    open_lobby(page)
    join = f"#lobby-open button[data-code='{first['code']}']"
    page.wait_for_selector(join)
    page.wait_for_selector(f"#lobby-open button[data-code='{other['code']}']")
    box = page.locator(join).bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    # A table opens (listed above the others) and someone sits at the other one.
    newest = open_for_people(live)
    live.post(f"/api/codes/{other['code']}/join")
    page.wait_for_function(
        "([c, o]) => window.lobbyLists.some(l => l.tables.some(t => t.code === c)"
        " && l.tables.some(t => t.code === o && t.free === 1))",
        arg=[newest["code"], other["code"]],
    )
    page.mouse.up()
    # The list that came meanwhile is drawn once the finger is up...
    page.wait_for_selector(f"#lobby-open button[data-code='{newest['code']}']", state="attached")
    # ...and the tap went to the table it was pressed on.
    assert wait_at(page, first["table"])["view"]["seat"] == 1


def test_the_lobby_sheet_fits_and_its_controls_are_tall_enough(
    live: Live, new_page: Callable[..., Any]
) -> None:
    # One page, the open sheet turned through the sizes (a resize, not a load, each).
    page = new_page(width=360, height=740)
    page.goto(live.url)
    wait_joined(page)
    open_lobby(page)
    for width, height in ((360, 740), (390, 844), (1280, 800)):
        resize(page, width, height)
        overflow = page.evaluate(
            "() => { const b = document.querySelector('#lobby-sheet .sheet-body');"
            " return b.scrollWidth - b.clientWidth; }"
        )
        assert overflow <= 0, f"{width}x{height}"
        small = page.evaluate(
            "() => [...document.querySelectorAll('#lobby-sheet button, #lobby-sheet input')]"
            ".filter(e => e.offsetParent !== null)"
            ".map(e => [e.id || e.textContent.trim() || e.dataset.colour,"
            " e.getBoundingClientRect().height, e.getBoundingClientRect().width])"
            ".filter(([, h, w]) => h < 44 || w < 44)"
        )
        assert small == [], f"{width}x{height}"
        if width != 360:
            screenshot(page, f"lobby-{width}.png")


def test_the_clients_colours_are_the_servers() -> None:
    source = (Path(__file__).parents[2] / "client" / "js" / "lobby.js").read_text("utf-8")
    found = re.search(r"export const COLOURS = \[([^\]]*)\]", source)
    assert found is not None
    assert tuple(re.findall(r'"(#[0-9a-f]{6})"', found[1])) == COLOURS
