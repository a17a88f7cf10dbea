"""Switching language from the settings sheet relabels the whole table, and the rules page
comes in the same language with its combinations drawn as cards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import CLIENT_DIR, LANGUAGES, Live, choose_language, strings, wait_joined

pytestmark = pytest.mark.browser

LABELS = {
    "#btn-play > span": "controls.play",
    "#btn-pass > span": "controls.pass",
    "#btn-hint > span": "controls.hint",
    "#btn-clear > span": "controls.clear",
    "#me-label": "seat.you",
}


def first_rules_heading(lang: str) -> str:
    html = (CLIENT_DIR / "rules" / f"{lang}.html").read_text("utf-8")
    start = html.index("<h3>") + len("<h3>")
    return html[start : html.index("</h3>", start)]


def test_switching_language_translates_labels_and_rules(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=11, bot_speed_ms=0)
    page = new_page()
    page.goto(live.seat_url(seat))
    wait_joined(page)
    assert page.evaluate("document.documentElement.lang") == "en"
    # One page through every language, English last: each switch is from another
    # language, so every label has to change.
    for lang in [*LANGUAGES[1:], LANGUAGES[0]]:
        choose_language(page, lang)
        table = strings(lang)
        for selector, key in LABELS.items():
            assert page.inner_text(selector).strip() == table[key], f"{lang}: {selector}"
        assert page.get_attribute("#btn-settings", "aria-label") == table["settings.button"]
        # The choice is remembered across a reload.
        page.reload()
        wait_joined(page)
        assert page.evaluate("document.documentElement.lang") == lang
        assert page.inner_text("#btn-play > span").strip() == table["controls.play"], lang

        page.click("#btn-rules")
        page.wait_for_selector(f'#rules-page[data-lang="{lang}"] h3')
        assert page.inner_text("#rules-page h3 >> nth=0") == first_rules_heading(lang), lang
        assert page.locator("#rules-page .card").count() >= 30, lang
        assert page.inner_text("#rules-title") == table["rules.title"], lang
        page.keyboard.press("Escape")
        page.wait_for_selector("#rules-sheet:not([open])", state="attached")


@pytest.mark.parametrize(
    ("locale", "lang"), [("de-DE", "de"), ("zh-CN", "zh-Hans"), ("it-IT", "it"), ("fr-FR", "en")]
)
def test_first_visit_follows_the_browser_language(
    locale: str, lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=11, bot_speed_ms=0)
    page = new_page(locale=locale)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    assert page.evaluate("document.documentElement.lang") == lang
    assert page.inner_text("#btn-hint > span").strip() == strings(lang)["controls.hint"]
