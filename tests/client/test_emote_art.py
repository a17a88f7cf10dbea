"""Issue 28, defect 9: the reactions are drawn by the client (inline SVG), not with a system
emoji font that many systems lack, and the opened picker covers no seat's panel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import SIZES, Live, screenshot, wait_joined

from server.rooms.emotes import EMOTES

pytestmark = pytest.mark.browser

ART_JS = """() => [...document.querySelectorAll('#emote-picker .emote-btn')].map(b => {
  const svg = b.querySelector('svg.emote-art');
  const r = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return {name: b.dataset.emote, text: b.textContent.trim(), width: r.width, height: r.height,
          shapes: svg ? svg.querySelectorAll('path, circle, ellipse, rect').length : 0};
})"""

OVERLAPS_JS = """() => {
  const picker = document.querySelector('#emote-picker').getBoundingClientRect();
  const meet = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const out = [];
  for (const sel of ['#seat-left .seat-card', '#seat-right .seat-card', '#me-info', '.topbar']) {
    if (meet(picker, document.querySelector(sel).getBoundingClientRect())) out.push(sel);
  }
  if (picker.left < 0 || picker.top < 0 || picker.right > innerWidth
      || picker.bottom > innerHeight) out.push('off screen');
  return out;
}"""


def test_the_reactions_are_drawn_by_the_client_and_the_picker_covers_no_seat(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (host_seat, _friend) = live.create_table(humans=2, bots=["easy"], bot_speed_ms=0)
    page = new_page()
    page.goto(live.seat_url(host_seat))
    wait_joined(page)
    page.click("#btn-emote")
    page.wait_for_selector("#emote-picker:not([hidden])")
    art = page.evaluate(ART_JS)
    assert [a["name"] for a in art] == list(EMOTES)
    for a in art:
        # No character for a font to draw (or to leave as an empty box): a picture.
        assert a["text"] == "", a
        assert a["width"] >= 24, a
        assert a["height"] >= 24, a
        assert a["shapes"] >= 2, a
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        page.click("#btn-emote")  # closed
        page.click("#btn-emote")  # opened again at this size
        page.wait_for_selector("#emote-picker:not([hidden])")
        assert page.evaluate(OVERLAPS_JS) == [], size
        if size in ("390x844", "1280x800"):
            screenshot(page, f"emotes-{size}.png")
    page.click('#emote-picker [data-emote="clap"]')
    bubble = page.wait_for_selector(".emote-bubble svg.emote-art")
    assert bubble is not None
