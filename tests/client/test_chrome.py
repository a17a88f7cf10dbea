"""Issue 13, defects 2, 4 and 7: the top bar stays usable while offline, toasts never cover
what the player reads to decide (status line, badges, card counter, hand, buttons), and the
card counter says what it counts.  At every size, in every language: a page per language,
turned through the sizes (a page load costs twenty times the CPU of a resize)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from client_helpers import LOCALES, Live, resize, screenshot, sizes_from, strings, wait_joined

pytestmark = pytest.mark.browser

SEED = 7  # seat 0 leads the match, so Pass is refused with a toast

# Where ``selector`` is drawn, and whether its text is cut off (ellipsis or clipping).
BOX_JS = """(selector) => {
  const el = document.querySelector(selector);
  if (!el || !el.getClientRects().length) return null;
  const r = el.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
          cut: el.scrollWidth > el.clientWidth + 1};
}"""

# Everything the toast must leave uncovered, as boxes.
READ_JS = """() => {
  const out = [];
  const sel = ['#status', '#me-info', '.badge', '#counter', '#controls', '#hand .card',
               '.seat-card', '.top-actions .icon-btn'];
  for (const el of document.querySelectorAll(sel.join(','))) {
    if (!el.getClientRects().length) continue;
    const r = el.getBoundingClientRect();
    out.push({what: el.id || el.className, left: r.left, top: r.top, right: r.right,
              bottom: r.bottom});
  }
  return out;
}"""


def open_pages(live: Live, new_page: Callable[..., Any]) -> dict[str, Any]:
    """A page per language, each joined to a table of its own; the ``i``-th language's
    page loads at the ``i``-th size, so every language and every size is loaded once
    and the tests turn each page through the other sizes (``sizes_from``)."""
    pages = {}
    for index, (lang, locale) in enumerate(LOCALES.items()):
        (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=5)
        _, (width, height) = sizes_from(index)[0]
        page = new_page(width=width, height=height, locale=locale)
        page.goto(live.seat_url(seat))
        wait_joined(page)
        pages[lang] = page
    return pages


def each_size(pages: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(language, size, page) for every pair, the page resized to the size."""
    for index, (lang, page) in enumerate(pages.items()):
        for size, (width, height) in sizes_from(index):
            resize(page, width, height)
            yield lang, size, page


def box(page: Any, selector: str) -> dict[str, Any]:
    found: dict[str, Any] | None = page.evaluate(BOX_JS, selector)
    assert found is not None, f"{selector} is not shown"
    return found


def inside(page: Any, b: dict[str, Any]) -> bool:
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    return bool(b["left"] >= 0 and b["top"] >= 0 and b["right"] <= width and b["bottom"] <= height)


def overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(
        a["left"] < b["right"] - 1
        and b["left"] < a["right"] - 1
        and a["top"] < b["bottom"] - 1
        and b["top"] < a["bottom"] - 1
    )


def test_the_offline_notice_leaves_the_top_bar_whole(
    own_live: Live, new_page: Callable[..., Any]
) -> None:
    pages = open_pages(own_live, new_page)
    own_live.process.kill()
    for page in pages.values():
        page.wait_for_selector("#net:not([hidden])")
        page.wait_for_function("() => pdk.state().net === 'offline'")
    for lang, size, page in each_size(pages):
        for selector in ("#btn-settings", "#btn-rules", "#net", "#deal-info"):
            b = box(page, selector)
            assert inside(page, b), f"{lang} {size}: {selector} is off screen: {b}"
            assert not b["cut"], f"{lang} {size}: {selector} is cut off"
        pill = box(page, "#deal-info")
        assert pill["right"] - pill["left"] > 60, f"{lang} {size}: preset pill squeezed"
        if lang == "de" and size == "360x740":
            screenshot(page, "offline-360-de.png")


# The toast, once it shows ``text``, and everything it must leave uncovered, read in the
# same turn of the page's loop: the toast hides itself after a few seconds, so a box read
# in a later call could find it gone on a loaded machine.
TOAST_JS = f"""(text) => {{
  const el = document.querySelector('#toast');
  if (el.hidden || el.textContent !== text || !el.getClientRects().length) return null;
  const r = el.getBoundingClientRect();
  return {{toast: {{left: r.left, top: r.top, right: r.right, bottom: r.bottom}},
          read: ({READ_JS})()}};
}}"""


def test_toasts_never_cover_the_status_badges_counter_or_controls(
    live: Live, new_page: Callable[..., Any]
) -> None:
    for lang, size, page in each_size(open_pages(live, new_page)):
        table = strings(lang)
        # Two toasts: a short refusal and the longest hint a newcomer sees.
        for button, key in (
            ("#btn-pass", "reason.leader_may_not_pass"),
            ("#btn-play", "toast.selectFirst"),
        ):
            page.click(button, force=True)
            shown = page.wait_for_function(TOAST_JS, arg=table[key]).json_value()
            toast = shown["toast"]
            assert inside(page, toast), f"{lang} {size}: toast off screen {toast}"
            covered = [r["what"] for r in shown["read"] if overlaps(toast, r)]
            assert not covered, f"{lang} {size}: the {key} toast covers {covered}"


def test_the_card_counter_has_a_visible_label(live: Live, new_page: Callable[..., Any]) -> None:
    for lang, size, page in each_size(open_pages(live, new_page)):
        label = page.locator("#counter .counter-label")
        assert label.inner_text().strip() == strings(lang)["counter.label"], f"{lang} {size}"
        b = box(page, "#counter .counter-label")
        assert inside(page, b), f"{lang} {size}: counter label off screen"
        assert not b["cut"], f"{lang} {size}: counter label cut off"
