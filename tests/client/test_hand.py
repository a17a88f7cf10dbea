"""Issue 13, defect 6: every card of a full hand is big enough to tap (44 x 44 px of it
uncovered) at every size, measured by asking the page what lies under a finger."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import SIZES, Live, click_card, hand_codes, screenshot, wait_joined

pytestmark = pytest.mark.browser

TAP = 44

# For each card: the 44 x 44 square at its top-left corner must be on screen and all of it
# must hit this card (corners and middle; the first probe clears the rounded corner), or
# the card is too small a target.
TOO_SMALL_JS = """(tap) => {
  const bad = [];
  for (const card of document.querySelectorAll('#hand .card')) {
    const r = card.getBoundingClientRect();
    const xs = [r.left + 4, r.left + tap / 2, r.left + tap - 1];
    const ys = [r.top + 4, r.top + tap / 2, r.top + tap - 1];
    for (const x of xs) for (const y of ys) {
      const hit = x < innerWidth && y < innerHeight && document.elementFromPoint(x, y);
      if (!hit || hit.closest('.card') !== card) {
        const at = `${Math.round(x - r.left)},${Math.round(y - r.top)}`;
        bad.push(`${card.dataset.code} at ${at} under ${hit && hit.className}`);
        return bad;
      }
    }
  }
  return bad;
}"""


@pytest.mark.parametrize("size", list(SIZES))
def test_every_card_of_a_full_hand_is_a_44_px_target(
    size: str, live: Live, new_page: Callable[..., Any]
) -> None:
    width, height = SIZES[size]
    (seat,) = live.create_table(seed=7, bot_speed_ms=0)
    page = new_page(width=width, height=height)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    codes = hand_codes(page)
    assert len(codes) == 16
    assert page.evaluate(TOO_SMALL_JS, TAP) == []
    # A raised (selected) card in a lower row must not take the target of the card above.
    click_card(page, codes[-1])
    click_card(page, codes[len(codes) // 2])
    assert page.locator("#hand .card.selected").count() == 2
    assert page.evaluate(TOO_SMALL_JS, TAP) == []
    screenshot(page, f"hand-{size}.png")
