"""Issue 28, card apps: card size (normal / large) and high contrast, in the settings,
applied at once and kept over a reload.  Large cards still fit a full hand at every size
(no horizontal scroll, nothing off screen, every card a 44 px target clear of the status
line and buttons); high contrast gives card faces, suits, buttons and the status line
WCAG AA contrast (4.5:1), measured from the computed colours."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    SIZES,
    TWO_FRAMES_JS,
    Live,
    choose_language,
    resize,
    screenshot,
    strings,
    wait_joined,
)

pytestmark = pytest.mark.browser

SEED = 7  # a full hand of 16 with every suit in it
TAP = 44

HAND_JS = """(tap) => {
  const cards = [...document.querySelectorAll('#hand .card')];
  const box = (s) => document.querySelector(s).getBoundingClientRect();
  const meets = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const bad = [];
  for (const card of cards) {
    const r = card.getBoundingClientRect();
    if (r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight) {
      bad.push(`${card.dataset.code} off screen`);
    }
    for (const s of ['#controls', '#status', '#me-info']) {
      if (meets(r, box(s))) bad.push(`${card.dataset.code} over ${s}`);
    }
    // Its own 44 x 44 corner is not under another card.
    for (const x of [r.left + 4, r.left + tap / 2, r.left + tap - 1]) {
      for (const y of [r.top + 4, r.top + tap / 2, r.top + tap - 1]) {
        const hit = document.elementFromPoint(x, y);
        if (!hit || hit.closest(".card") !== card) {
          const by = hit && (hit.closest(".card")?.dataset.code || hit.id || hit.className);
          const at = `${Math.round(x - r.left)},${Math.round(y - r.top)}`;
          bad.push(`${card.dataset.code} covered at ${at} by ${by}`);
        }
      }
    }
  }
  const doc = document.scrollingElement;
  return {
    bad: [...new Set(bad)],
    count: cards.length,
    width: cards[0].getBoundingClientRect().width,
    rank: parseFloat(getComputedStyle(cards[0].querySelector('.rank')).fontSize),
    scrollX: doc.scrollWidth - innerWidth,
    scrollY: doc.scrollHeight - innerHeight,
  };
}"""

# WCAG 2 contrast of each element's text (or an SVG's fill) against what lies under it.
# Under it means the nearest backgrounds up the tree, see-through ones laid over the
# first solid one; a background image (a gradient) cannot be measured and is reported.
CONTRAST_JS = """(selectors) => {
  const parse = (c) => {
    const p = c.match(/[\\d.]+/g).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const over = (top, under) => top.map((v, i) => i < 3 ? v * top[3] + under[i] * (1 - top[3]) : 1);
  const under = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.backgroundImage !== 'none') return `background image on ${e.id || e.className}`;
      const c = parse(cs.backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    if (!layers.length || layers[layers.length - 1][3] < 1) return 'no solid background';
    let bg = layers.pop();
    while (layers.length) bg = over(layers.pop(), bg);
    return bg;
  };
  const faded = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const out = [];
  for (const sel of selectors) {
    for (const el of document.querySelectorAll(sel)) {
      if (!el.getClientRects().length) continue;
      const cs = getComputedStyle(el);
      const ink = parse(el instanceof SVGElement ? cs.fill : cs.color);
      const bg = under(el);
      const what = el.closest('[data-code]')?.dataset.code || el.id;
      const name = `${sel} ${what || el.textContent.trim().slice(0, 12)}`;
      if (typeof bg === 'string') { out.push({ sel, name, error: bg }); continue; }
      if (faded(el) < 1) { out.push({ sel, name, error: `opacity ${faded(el)}` }); continue; }
      const fg = over(ink, bg);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      out.push({ sel, name, ratio: (a + 0.05) / (b + 0.05) });
    }
  }
  return out;
}"""

# Card faces (rank and suit, every suit the hand holds, the court cards' letters), the
# buttons in both states, the top bar's buttons and the status line.
CONTRAST_SELECTORS = [
    "#hand .card .rank",
    "#hand .card .pip",
    "#hand .card .big-pip",
    "#hand .card .court-letter",
    "#controls .btn > span",
    "#btn-pass small",
    ".top-actions .icon-btn:not([hidden]) svg",
    "#status",
]


def open_table(live: Live, new_page: Callable[..., Any], **page: Any) -> Any:
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0)
    p = new_page(**page)
    p.goto(live.seat_url(seat))
    wait_joined(p)
    return p


def choose(page: Any, *, size: str | None = None, contrast: bool | None = None) -> None:
    page.click("#btn-settings")
    if size is not None:
        page.select_option("#card-size-select", size)
    if contrast is not None:
        page.set_checked("#opt-contrast", contrast)
    page.keyboard.press("Escape")


def test_large_cards_still_fit_a_full_hand(live: Live, new_page: Callable[..., Any]) -> None:
    # One page turned through the sizes; at each the cards go back to normal, are
    # measured, and are made large again.
    page = open_table(live, new_page)
    large: dict[str, Any] = {}
    for size, (width, height) in SIZES.items():
        if large:
            choose(page, size="normal")
            page.wait_for_function("() => !document.body.classList.contains('cards-large')")
        resize(page, width, height)
        normal = page.evaluate(HAND_JS, TAP)
        assert normal["count"] == 16, size
        choose(page, size="large")
        # At once, without a reload.
        page.wait_for_function(
            "(w) => document.querySelector('#hand .card').offsetWidth !== w ||"
            " document.body.classList.contains('cards-large')",
            arg=normal["width"],
        )
        page.evaluate(TWO_FRAMES_JS)
        large = page.evaluate(HAND_JS, TAP)
        assert large["count"] == 16, size
        assert large["bad"] == [], f"{size}: {large['bad'][:6]}"
        assert large["scrollX"] <= 0, f"{size}: scrolls sideways by {large['scrollX']} px"
        assert large["scrollY"] <= 0, f"{size}: scrolls down by {large['scrollY']} px"
        # Larger: the cards where the width allows, the corner indices everywhere.
        assert large["rank"] > normal["rank"], size
        if size != "360x740":
            assert large["width"] > normal["width"], size
        if size in ("390x844", "1280x800"):
            screenshot(page, f"cards-large-{size}.png")
    # Kept over a reload.
    page.reload()
    wait_joined(page)
    assert page.evaluate("document.body.classList.contains('cards-large')")
    assert page.evaluate(HAND_JS, TAP)["width"] == large["width"]


@pytest.mark.parametrize("four_colour", [False, True])
def test_high_contrast_gives_cards_and_buttons_aa_contrast(
    four_colour: bool, live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_table(live, new_page)
    if four_colour:
        page.click("#btn-settings")
        page.check("#opt-four")
        page.keyboard.press("Escape")
    choose(page, contrast=True)
    assert page.evaluate("document.body.classList.contains('high-contrast')")
    # Play lit (a hint selected) and Clear usable, Pass locked: both looks are measured.
    page.wait_for_function("() => { const v = pdk.state().view; return v.turn === v.seat; }")
    page.click("#btn-hint")
    page.wait_for_selector('#btn-play[aria-disabled="false"]')
    results = page.evaluate(CONTRAST_JS, CONTRAST_SELECTORS)
    assert {r["sel"] for r in results} == set(CONTRAST_SELECTORS)
    suits = page.eval_on_selector_all("#hand .card", "cs => cs.map(c => c.dataset.code[1])")
    assert set(suits) == {"S", "H", "D", "C"}
    failing = [r for r in results if "error" in r or r["ratio"] < 4.5]
    assert failing == [], failing[:8]
    if not four_colour:
        screenshot(page, "high-contrast-390x844.png")
        page.set_viewport_size({"width": 1280, "height": 800})
        page.wait_for_function("() => innerWidth === 1280")
        assert page.evaluate(CONTRAST_JS, ["#hand .card .rank", "#controls .btn > span"])
        screenshot(page, "high-contrast-1280x800.png")
    page.reload()
    wait_joined(page)
    assert page.evaluate("document.body.classList.contains('high-contrast')")


def test_without_high_contrast_the_faces_are_not_what_it_measures(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """The measure tells the two apart: the normal cards' gradient faces are reported."""
    page = open_table(live, new_page)
    results = page.evaluate(CONTRAST_JS, ["#hand .card .rank"])
    assert all("error" in r for r in results)


def test_the_display_options_read_in_every_language(
    live: Live, new_page: Callable[..., Any]
) -> None:
    # One page; each language is chosen in the same settings sheet that is then read.
    page = open_table(live, new_page)
    for lang in [*LANGUAGES[1:], LANGUAGES[0]]:
        choose_language(page, lang)
        words = strings(lang)
        page.click("#btn-settings")
        label = "#settings-sheet label:has(#{}) > span"
        assert page.inner_text(label.format("card-size-select")) == words["settings.cardSize"]
        assert page.inner_text(label.format("opt-contrast")) == words["settings.highContrast"]
        options = page.eval_on_selector_all(
            "#card-size-select option", "os => os.map(o => o.textContent)"
        )
        assert options == [words["settings.cardNormal"], words["settings.cardLarge"]], lang
        for selector in ("#card-size-select", "#opt-contrast"):
            box = page.locator(f"#settings-sheet label:has({selector})").bounding_box()
            assert box is not None
            assert box["height"] >= TAP, lang
        wide = page.evaluate(
            "() => { const b = document.querySelector('#settings-sheet .sheet-body');"
            " return b.scrollWidth - b.clientWidth; }"
        )
        assert wide <= 0, lang
        if lang == "en":
            for size in ("390x844", "1280x800"):
                resize(page, *SIZES[size])
                page.locator("#btn-tour").scroll_into_view_if_needed()
                screenshot(page, f"settings-display-{size}.png")
        page.keyboard.press("Escape")
        page.wait_for_selector("#settings-sheet:not([open])", state="attached")
