"""Issue 28, defect 8: every control a finger taps is at least 44 px tall (rules FAQ summaries
were 28 px, the replay slider 32 px, the settings name box and drop-downs 38 px), and the name
box's placeholder is not cut off, in every language on a phone and a desktop.  One page a
size, the languages chosen in the settings sheet: a reload a language cost ten times as
much CPU."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    Live,
    choose_language,
    open_seat_page,
    play_to_result,
    resize,
    screenshot,
)

pytestmark = pytest.mark.browser

TAP_PX = 44
PHONE = (390, 844)
DESKTOP = (1280, 800)

# Heights of the visible elements matching `selector` that are shorter than a finger.
SHORT_JS = """([selector, least]) => [...document.querySelectorAll(selector)]
  .filter(el => el.getClientRects().length > 0)
  .map(el => ({ what: el.id || el.className || el.tagName,
                text: (el.innerText || el.placeholder || '').slice(0, 40),
                height: Math.round(el.getBoundingClientRect().height * 10) / 10 }))
  .filter(box => box.height < least)"""

# The placeholder's width in the input's own font against the room inside its padding.
PLACEHOLDER_JS = """() => {
  const input = document.querySelector('#name-input');
  const style = getComputedStyle(input);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = style.font;
  const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return { text: input.placeholder, needs: ctx.measureText(input.placeholder).width, room };
}"""


def short_targets(page: Any, selector: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.evaluate(SHORT_JS, [selector, TAP_PX])
    return found


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390x844", "1280x800"])
def test_settings_and_rules_controls_are_tall_enough_and_the_placeholder_fits(
    live: Live, new_page: Callable[..., Any], size: tuple[int, int]
) -> None:
    page = open_seat_page(live, new_page, seed=7, bot_speed_ms=0)
    resize(page, *size)
    for lang in LANGUAGES:
        choose_language(page, lang)
        page.click("#btn-settings")
        page.wait_for_selector("#settings-sheet[open] #name-input")
        short = short_targets(page, "#settings-sheet input[type=text], #settings-sheet select")
        assert not short, f"{lang}: {json.dumps(short, ensure_ascii=False)}"
        fit = page.evaluate(PLACEHOLDER_JS)
        assert fit["needs"] <= fit["room"], f"{lang}: placeholder cut off: {fit}"
        if lang == "de":
            screenshot(page, f"tap-settings-de-{size[0]}.png")
        page.keyboard.press("Escape")
        page.click("#btn-rules")
        page.wait_for_selector(f'#rules-page[data-lang="{lang}"] details summary')
        short = short_targets(page, "#rules-page summary")
        assert not short, f"{lang}: {json.dumps(short, ensure_ascii=False)}"
        if lang == "de":
            page.evaluate("document.querySelector('#why-48').open = true")
            page.locator("#why-48").scroll_into_view_if_needed()
            screenshot(page, f"tap-rules-de-{size[0]}.png")
        page.keyboard.press("Escape")
        page.wait_for_selector("#rules-sheet:not([open])", state="attached")


def test_the_replay_slider_is_tall_enough(live: Live, new_page: Callable[..., Any]) -> None:
    page = open_seat_page(live, new_page, seed=7, bot_speed_ms=0, deals=5)
    play_to_result(page)
    page.wait_for_selector("#result-sheet[open]")
    page.keyboard.press("Escape")
    page.click("#btn-history")
    page.click("#history-sheet .btn-replay")
    page.wait_for_selector(".replay-slider")
    for size in (PHONE, DESKTOP):
        resize(page, *size)
        short = short_targets(page, ".replay-slider, .replay-controls button")
        assert not short, f"{size}: {short}"
        screenshot(page, f"tap-replay-{size[0]}.png")
