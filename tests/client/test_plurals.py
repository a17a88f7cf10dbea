"""Issue 28, defect 3: a count agrees with its noun in every language ("1 more deals",
"Noch 1 Runden" and "Ancora 1 mani" were shown), chosen by the browser's Intl.PluralRules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    Live,
    open_seat_page,
    play_to_result,
    store_language,
    strings,
    wait_joined,
)

pytestmark = pytest.mark.browser

# Every string that puts a count next to a word that changes with it.
COUNTED = (
    "seat.cardsLeft",
    "counter.cell",
    "result.dealsLeft",
    "say.bombPaid",
    "say.youBombPaid",
    "clock.left",
    "watch.count",
    "settings.nDeals",
)

# What a player must read for a count of one, and for two, in each language.
ONE_AND_TWO = {
    "en": {
        "result.dealsLeft": ("1 more deal in this match.", "2 more deals in this match."),
        "seat.cardsLeft": ("1 card left", "2 cards left"),
        "clock.left": ("1 second left", "2 seconds left"),
        "say.youBombPaid": ("Your bomb scores 1 point.", "Your bomb scores 2 points."),
    },
    "de": {
        "result.dealsLeft": ("Noch 1 Runde in dieser Partie.", "Noch 2 Runden in dieser Partie."),
        "seat.cardsLeft": ("noch 1 Karte", "noch 2 Karten"),
        "clock.left": ("noch 1 Sekunde", "noch 2 Sekunden"),
        "watch.count": ("1 schaut zu", "2 schauen zu"),
    },
    "it": {
        "result.dealsLeft": (
            "Ancora 1 mano in questa partita.",
            "Ancora 2 mani in questa partita.",
        ),
        "seat.cardsLeft": ("1 carta rimasta", "2 carte rimaste"),
        "clock.left": ("1 secondo rimasto", "2 secondi rimasti"),
        "watch.count": ("1 spettatore", "2 spettatori"),
    },
    "zh-Hans": {
        "result.dealsLeft": ("本场还剩 1 局。", "本场还剩 2 局。"),
        "seat.cardsLeft": ("剩 1 张牌", "剩 2 张牌"),
    },
}

# The page's own i18n module (the same instance the app uses) in the given language.
WORDINGS_JS = """async ([lang, keys, counts]) => {
  const i18n = await import('./js/i18n.js');
  await i18n.setLanguage(lang);
  const out = {};
  for (const key of keys) {
    out[key] = counts.map(c => i18n.t(key, { n: c, s: c, name: 'Ann', rank: 'K' }));
  }
  return out;
}"""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_counted_string_has_the_forms_its_language_needs(lang: str) -> None:
    table = strings(lang)
    for key in COUNTED:
        assert key in table, f"{lang}: {key} is missing"
        assert f"{key}.one" in table, f"{lang}: {key} has no form for one"


def test_counts_agree_with_their_nouns_in_every_language(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat_page(live, new_page, seed=7, bot_speed_ms=0)
    for lang in LANGUAGES:
        shown = page.evaluate(WORDINGS_JS, [lang, list(COUNTED), [1, 2]])
        for key, (one, two) in ONE_AND_TWO[lang].items():
            assert shown[key] == [one, two], f"{lang}: {key}"
        # Whatever the language, a count never leaks a placeholder or a missing key.
        for key, texts in shown.items():
            assert all("{" not in text and key not in text for text in texts), f"{lang}: {key}"


def test_a_seat_with_one_card_left_says_card_not_cards(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat_page(live, new_page, seed=7, bot_speed_ms=0, deals=5)
    store_language(page, "de")
    page.reload()
    wait_joined(page)
    seen: list[str] = []

    def look(snapshot: dict[str, Any]) -> None:
        view = snapshot["view"]
        for seat, count in enumerate(view["counts"]):
            if count == 1 and seat != view["seat"]:
                seen.extend(page.eval_on_selector_all(".seat .count-n", LABELS_OF_ONE_JS))

    play_to_result(page, each_turn=look)
    assert seen, "seed 7 no longer leaves an opponent with one card on our turn"
    assert set(seen) == {"noch 1 Karte"}


LABELS_OF_ONE_JS = (
    "els => els.filter(e => e.textContent === '1').map(e => e.getAttribute('aria-label'))"
)
