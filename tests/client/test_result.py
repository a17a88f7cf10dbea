"""Issue 13, defect 5: the result table fits the sheet at every size in every language,
with no heading or figure cut off ("Partie gesamt" at 390 px was)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    SIZES,
    Live,
    shot_dir,
    state,
    take_turn_with_hint_or_pass,
    wait_joined,
    wait_my_turn_or_result,
)

pytestmark = pytest.mark.browser

MAX_OWN_TURNS = 60

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
    live: Live, new_page: Callable[..., Any], tmp_path: Path
) -> None:
    (seat,) = live.create_table(seed=7, bot_speed_ms=0, deals=5)
    page = new_page()
    page.goto(live.seat_url(seat))
    wait_joined(page)
    for _ in range(MAX_OWN_TURNS):
        if wait_my_turn_or_result(page)["view"]["result"] is not None:
            break
        take_turn_with_hint_or_pass(page)
    assert state(page)["view"]["result"] is not None
    for lang in LANGUAGES:
        page.evaluate(
            "(lang) => { const s = JSON.parse(localStorage.getItem('pdk.settings') || '{}');"
            " s.lang = lang; localStorage.setItem('pdk.settings', JSON.stringify(s)); }",
            lang,
        )
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
            page.screenshot(path=str(shot_dir(tmp_path) / "result-portrait-de.png"))
