"""Issue 13, defect 5: the result table fits the sheet at every size in every language,
with no heading or figure cut off ("Partie gesamt" at 390 px was)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    HELD_VERSIONS_JS,
    LANGUAGES,
    SIZES,
    Live,
    RawSeat,
    hold_frames_from_now,
    hold_incoming_frames,
    open_seat_page,
    play_to_result,
    press_across_a_state,
    screenshot,
    store_language,
    wait_joined,
)

pytestmark = pytest.mark.browser

CLIPPED_JS = """() => {
  const out = [];
  const sheet = document.querySelector('#result-sheet').getBoundingClientRect();
  const scroller = document.querySelector('#result-sheet .table-scroll');
  if (scroller.scrollWidth > scroller.clientWidth + 1) out.push('the table scrolls sideways');
  for (const cell of document.querySelectorAll('.result-table th, .result-table td')) {
    const r = cell.getBoundingClientRect();
    if (cell.scrollWidth > cell.clientWidth + 1) out.push(`"${cell.innerText}" is cut off`);
    const out_of_sheet = r.right > sheet.right + 1 || r.left < sheet.left - 1;
    if (out_of_sheet) out.push(`"${cell.innerText}" outside`);
  }
  if (sheet.right > innerWidth || sheet.bottom > innerHeight) out.push('sheet off screen');
  return out;
}"""


def test_the_result_table_fits_every_size_in_every_language(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat_page(live, new_page, seed=7, bot_speed_ms=0, deals=5)
    play_to_result(page)
    for lang in LANGUAGES:
        store_language(page, lang)
        page.reload()
        wait_joined(page)
        page.wait_for_selector("#result-sheet[open] .result-table")
        for size, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
            problems = page.evaluate(CLIPPED_JS)
            assert not problems, f"{lang} at {size}: {json.dumps(problems, ensure_ascii=False)}"
        if lang == "de":
            page.set_viewport_size({"width": 390, "height": 844})
            screenshot(page, "result-portrait-de.png")


def test_next_deal_still_counts_when_the_table_changes_under_the_finger(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """The result stays open while the table goes on changing (a friend renames, comes
    and goes), and each state draws it again: the button pressed must still be there to
    let go of, whatever else in the sheet is drawn anew."""
    host_seat, friend_seat = live.create_table(
        seed=7, humans=2, bots=["easy"], turn_seconds=0, bot_speed_ms=0, deals=5
    )
    host = new_page(record_sent=True)
    hold_incoming_frames(host)
    host.goto(live.seat_url(host_seat))
    wait_joined(host)
    friend = RawSeat(live, friend_seat)
    try:
        friend.ws.send(json.dumps({"type": "auto", "version": friend.version, "on": True}))
        play_to_result(host)
        host.wait_for_selector("#result-sheet[open] #btn-next-deal")
        version = hold_frames_from_now(host)
        # A name is the table's setting, not a move: its state keeps the version.
        rename = {"type": "rename", "version": version, "name": "Zora"}
        friend.ws.send(json.dumps(rename))
        host.wait_for_function(f"() => {HELD_VERSIONS_JS}.length > 0")
        # The friend's new name is drawn in the sheet the press began on...
        drawn = (
            "() => document.querySelector('#result-sheet .result-table').innerText.includes('Zora')"
        )
        press_across_a_state(host, "#btn-next-deal", version, landed=drawn)
        # ...and the tap went out.
        host.wait_for_function("() => window.sentFrames.some(f => f.type === 'next_deal')")
    finally:
        friend.close()
