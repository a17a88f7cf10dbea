"""Reveal at deal end: once the deal is over, each opponent's remaining cards are shown
face up where their plays were, whole, at every size and in every language; never before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    HIDDEN_CARDS_JS,
    LANGUAGES,
    SIZES,
    Live,
    open_seat_page,
    play_to_result,
    screenshot,
    store_language,
    strings,
    wait_joined,
)

pytestmark = pytest.mark.browser

RANKS, SUITS = "3456789TJQKA2", "SHDC"


def test_the_cards_left_in_the_other_hands_show_once_the_deal_is_over(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat_page(live, new_page, seed=7, bot_speed_ms=0, deals=5)

    def nothing_revealed(snapshot: dict[str, Any]) -> None:
        # While the deal is played, the server reveals nothing and nothing is drawn.
        assert snapshot["view"]["revealed"] == []
        assert page.locator(".play.revealed").count() == 0

    view = play_to_result(page, each_turn=nothing_revealed)["view"]
    me = view["seat"]
    sides = {"right": (me + 1) % 3, "left": (me + 2) % 3}
    assert [len(cards) for cards in view["revealed"]] == view["result"]["cards_left"]
    assert any(view["revealed"][s] for s in sides.values())
    for lang in LANGUAGES:
        store_language(page, lang)
        page.reload()
        wait_joined(page)
        page.wait_for_selector("#result-sheet[open]")
        page.keyboard.press("Escape")
        for side, other in sides.items():
            held = view["revealed"][other]
            shown = page.eval_on_selector_all(
                f"#pile-{side} .play.revealed .card", "cs => cs.map(c => c.dataset.code)"
            )
            assert shown == sorted(held, key=lambda c: (RANKS.index(c[0]), SUITS.index(c[1])))
            if not held:
                continue
            name = page.inner_text(f"#seat-{side}-name")
            caption = page.inner_text(f"#pile-{side} .play.revealed figcaption")
            assert caption == strings(lang)["reveal.held"].format(name=name, n=len(held))
            for size, (width, height) in SIZES.items():
                page.set_viewport_size({"width": width, "height": height})
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
                hidden = page.evaluate(HIDDEN_CARDS_JS, side)
                assert not hidden, f"{lang} {size} {side}: {hidden}"
        page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "reveal-portrait.png")
