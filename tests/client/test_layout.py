"""The table fits phones in portrait and landscape and a desktop, and stays usable by touch.

Each test loads one page and turns it through the sizes (a resize costs a small part of a
page load's CPU; the layout is the same CSS).  Screenshots are taken only when
PDK_SCREENSHOT_DIR (e.g. docs/screenshots) says where to keep them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    Live,
    resize,
    screenshot,
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


def assert_fits(page: Any, where: str = "") -> None:
    report = page.evaluate(OVERFLOW_JS)
    scroll_w, inner_w = report["width"]
    scroll_h, inner_h = report["height"]
    assert scroll_w <= inner_w, f"{where}: horizontal overflow: {scroll_w} > {inner_w}"
    assert scroll_h <= inner_h, f"{where}: vertical overflow: {scroll_h} > {inner_h}"
    assert not report["clipped"], f"{where}: outside the viewport: {report['clipped'][:5]}"
    for selector in MUST_SHOW:
        assert page.locator(selector).first.is_visible(), f"{where}: {selector}"


def play_into_the_deal(page: Any, own_turns: int) -> None:
    """A few of our turns, so the table shows plays, passes and a shorter hand."""
    for _ in range(own_turns):
        snapshot = wait_my_turn_or_result(page)
        if snapshot["view"]["result"] is not None:
            return
        take_turn_with_hint_or_pass(page)
    wait_my_turn_or_result(page)


def test_table_fits_the_viewport_with_touch_sized_controls(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=5)
    page = new_page(width=VIEWPORTS["portrait"][0], height=VIEWPORTS["portrait"][1])
    page.goto(live.seat_url(seat))
    wait_joined(page)
    play_into_the_deal(page, own_turns=3)
    # One selected card so the raised state is on the picture too.
    if state(page)["view"]["turn"] == state(page)["view"]["seat"]:
        page.click("#btn-hint")
        page.wait_for_selector("#hand .card.selected")
    for name, (width, height) in VIEWPORTS.items():
        resize(page, width, height)
        assert_fits(page, name)
        for selector in TOUCH:
            box = page.locator(selector).bounding_box()
            assert box is not None, f"{name}: {selector}"
            assert box["height"] >= 44, f"{name}: {selector} is {box}"
            assert box["width"] >= 44, f"{name}: {selector} is {box}"
        screenshot(page, f"table-{name}.png")


def test_result_panel_fits_the_viewport(live: Live, new_page: Callable[..., Any]) -> None:
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=5)
    page = new_page(width=VIEWPORTS["portrait"][0], height=VIEWPORTS["portrait"][1])
    page.goto(live.seat_url(seat))
    wait_joined(page)
    play_into_the_deal(page, own_turns=60)
    page.wait_for_selector("#result-sheet[open]")
    for name in ("portrait", "landscape"):
        width, height = VIEWPORTS[name]
        resize(page, width, height)
        box = page.locator("#result-sheet").bounding_box()
        assert box is not None
        assert box["x"] >= 0, name
        assert box["y"] >= 0, name
        assert box["x"] + box["width"] <= width, name
        assert box["y"] + box["height"] <= height, name
        table = page.locator(".result-table").bounding_box()
        assert table is not None
        assert table["x"] + table["width"] <= box["x"] + box["width"], name
        assert page.locator("#btn-next-deal").is_visible(), name
        screenshot(page, f"result-{name}.png")


PHONES = ["portrait", "phone-landscape"]


@pytest.mark.parametrize("locale", ["en-US", "de-DE", "zh-CN", "it-IT"])
def test_every_language_fits_a_phone(locale: str, live: Live, new_page: Callable[..., Any]) -> None:
    # Half the languages load in portrait and half in landscape; each is then turned.
    first = ["en-US", "de-DE", "zh-CN", "it-IT"].index(locale) % len(PHONES)
    names = PHONES[first:] + PHONES[:first]
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0)
    page = new_page(width=VIEWPORTS[names[0]][0], height=VIEWPORTS[names[0]][1], locale=locale)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    for name in names:
        width, height = VIEWPORTS[name]
        resize(page, width, height)
        assert_fits(page, name)
        for selector in TOUCH:
            box = page.locator(selector).bounding_box()
            assert box is not None, f"{name}: {selector}"
            assert box["x"] + box["width"] <= width, f"{name}: {selector} sticks out: {box}"


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
