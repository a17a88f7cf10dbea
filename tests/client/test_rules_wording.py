"""Issue 28, defect 4: the rules page tells the truth about the Pass button's lock (German said
it shows when you *may* pass) and names ranks by the letters the cards print (German said "D"
where the cards show "Q")."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import LANGUAGES, Live, find_seed, store_language, wait_joined

from server import engine

pytestmark = pytest.mark.browser

# The sentence about the lock, found by its word for "lock", must say "when you may NOT pass".
LOCK_WORD = {"en": "lock", "de": "Schloss", "it": "lucchetto", "zh-Hans": "锁"}
MAY_NOT_PASS = {
    "en": "can't pass",
    "de": "nicht passen",
    "it": "non puoi passare",
    "zh-Hans": "不能不要",
}
# A lone capital letter in a tip is a rank as the cards print it (J Q K A); "L'" is Italian.
LONE_LETTER = re.compile(r"(?<![\w'\u2019])([A-Z])(?![\w'\u2019])")
CARD_LETTERS = {"J", "Q", "K", "A"}

RULES_JS = """(lang) => {
  const page = document.querySelector(`#rules-page[data-lang="${lang}"]`);
  return {
    paragraphs: [...page.querySelectorAll('p')].map(p => p.textContent.replace(/\\s+/g, ' ')),
    tips: [...page.querySelectorAll('li[data-tip]')].map(li => li.textContent),
  };
}"""


def we_lead(state: engine.MatchState) -> bool:
    return state.deal.turn == 0


def test_the_lock_shows_when_you_may_not_pass_and_every_rules_page_says_so(
    live: Live, new_page: Callable[..., Any]
) -> None:
    seed, _ = find_seed("classic", we_lead)
    (seat,) = live.create_table(seed=seed, bot_speed_ms=0)
    page = new_page()
    page.goto(live.seat_url(seat))
    view = wait_joined(page)["view"]
    # The truth, from the game itself: we lead, may not pass, and the button is locked.
    assert view["turn"] == view["seat"]
    assert not view["can_pass"]
    assert "locked" in (page.get_attribute("#btn-pass", "class") or "").split()
    for lang in LANGUAGES:
        store_language(page, lang)
        page.reload()
        wait_joined(page)
        page.click("#btn-rules")
        page.wait_for_selector(f'#rules-page[data-lang="{lang}"] li[data-tip]')
        text = page.evaluate(RULES_JS, lang)
        about_lock = [p for p in text["paragraphs"] if LOCK_WORD[lang] in p]
        assert about_lock, f"{lang}: the rules no longer mention the lock"
        for paragraph in about_lock:
            assert MAY_NOT_PASS[lang] in paragraph, f"{lang}: {paragraph}"
        for tip in text["tips"]:
            letters = set(LONE_LETTER.findall(tip))
            assert letters <= CARD_LETTERS, f"{lang}: {sorted(letters - CARD_LETTERS)} in {tip}"
