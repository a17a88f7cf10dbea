"""The table fits phones in portrait and landscape and a desktop, and stays usable by touch.

Screenshots go to the test's tmp dir; set PDK_SCREENSHOT_DIR (e.g. docs/screenshots) to
keep them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from client_helpers import (
    Live,
    shot_dir,
    state,
    take_turn_with_hint_or_pass,
    wait_joined,
    wait_my_turn_or_result,
)

pytestmark = pytest.mark.browser

VIEWPORTS = {
    "portrait": (390, 844),
    "landscape": (1280, 800),
    "phone-landscape": (844, 390),
}
SEED = 7

# Every box that must be wholly on screen, and everything a finger must hit.
MUST_SHOW = ["#seat-left .seat-card", "#seat-right .seat-card", "#me-info", "#hand", ".controls"]
TOUCH = ["#btn-play", "#btn-pass", "#btn-hint", "#btn-clear", "#btn-settings", "#btn-rules"]

OVERFLOW_JS = """() => {
  const doc = document.scrollingElement;
  const out = {width: [doc.scrollWidth, innerWidth], height: [doc.scrollHeight, innerHeight],
               clipped: []};
  for (const el of document.querySelectorAll('#app *')) {
    if (!el.getClientRects().length || el.closest('.sr-only')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    // Hand cards overlap by design; only the page edges matter.
    if (r.left < -1 || r.top < -1 || r.right > innerWidth + 1 || r.bottom > innerHeight + 1) {
      out.clipped.push(`${el.tagName.toLowerCase()}.${el.className}`);
    }
  }
  return out;
}"""


def assert_fits(page: Any) -> None:
    report = page.evaluate(OVERFLOW_JS)
    scroll_w, inner_w = report["width"]
    scroll_h, inner_h = report["height"]
    assert scroll_w <= inner_w, f"horizontal overflow: {scroll_w} > {inner_w}"
    assert scroll_h <= inner_h, f"vertical overflow: {scroll_h} > {inner_h}"
    assert not report["clipped"], f"outside the viewport: {report['clipped'][:5]}"
    for selector in MUST_SHOW:
        assert page.locator(selector).first.is_visible(), selector


def play_into_the_deal(page: Any, own_turns: int) -> None:
    """A few of our turns, so the table shows plays, passes and a shorter hand."""
    for _ in range(own_turns):
        snapshot = wait_my_turn_or_result(page)
        if snapshot["view"]["result"] is not None:
            return
        take_turn_with_hint_or_pass(page)
    wait_my_turn_or_result(page)


@pytest.mark.parametrize("name", list(VIEWPORTS))
def test_table_fits_the_viewport_with_touch_sized_controls(
    name: str, live: Live, new_page: Callable[..., Any], tmp_path: Path
) -> None:
    width, height = VIEWPORTS[name]
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=5)
    page = new_page(width=width, height=height)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    play_into_the_deal(page, own_turns=3)
    # One selected card so the raised state is on the picture too.
    if state(page)["view"]["turn"] == state(page)["view"]["seat"]:
        page.click("#btn-hint")
        page.wait_for_selector("#hand .card.selected")
    assert_fits(page)
    for selector in TOUCH:
        box = page.locator(selector).bounding_box()
        assert box is not None, selector
        assert box["height"] >= 44, f"{selector} is {box}"
        assert box["width"] >= 44, f"{selector} is {box}"
    page.screenshot(path=str(shot_dir(tmp_path) / f"table-{name}.png"))


@pytest.mark.parametrize("name", ["portrait", "landscape"])
def test_result_panel_fits_the_viewport(
    name: str, live: Live, new_page: Callable[..., Any], tmp_path: Path
) -> None:
    width, height = VIEWPORTS[name]
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=5)
    page = new_page(width=width, height=height)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    play_into_the_deal(page, own_turns=60)
    page.wait_for_selector("#result-sheet[open]")
    box = page.locator("#result-sheet").bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["y"] >= 0
    assert box["x"] + box["width"] <= width
    assert box["y"] + box["height"] <= height
    table = page.locator(".result-table").bounding_box()
    assert table is not None
    assert table["x"] + table["width"] <= box["x"] + box["width"]
    assert page.locator("#btn-next-deal").is_visible()
    page.screenshot(path=str(shot_dir(tmp_path) / f"result-{name}.png"))


@pytest.mark.parametrize("locale", ["en-US", "de-DE", "zh-CN", "it-IT"])
@pytest.mark.parametrize("name", ["portrait", "phone-landscape"])
def test_every_language_fits_a_phone(
    name: str, locale: str, live: Live, new_page: Callable[..., Any]
) -> None:
    width, height = VIEWPORTS[name]
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0)
    page = new_page(width=width, height=height, locale=locale)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    assert_fits(page)
    for selector in TOUCH:
        box = page.locator(selector).bounding_box()
        assert box is not None, selector
        assert box["x"] + box["width"] <= width, f"{selector} sticks out: {box}"


def test_settings_and_rules_sheets_fit_a_phone(live: Live, new_page: Callable[..., Any]) -> None:
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0)
    page = new_page(width=390, height=844)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    for opener, sheet in (("#btn-settings", "#settings-sheet"), ("#btn-rules", "#rules-sheet")):
        page.click(opener)
        page.wait_for_selector(f"{sheet}[open]")
        box = page.locator(sheet).bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 390
        assert box["y"] >= 0
        assert box["y"] + box["height"] <= 844
        page.keyboard.press("Escape")
        page.wait_for_selector(f"{sheet}:not([open])", state="attached")
