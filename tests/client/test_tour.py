"""Issue 28, card apps: the first-game tour.  A few steps pointing at the hand, the Play and
Pass buttons, the status line and the settings, in the page's language; shown once (kept
over a reload), open again from the settings; keyboard only: Tab stays inside it, Escape
skips it.  Each step's highlight surrounds its element and its card stays on screen, clear
of that element, at every size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import LANGUAGES, LOCALES, SIZES, Live, screenshot, strings, wait_joined

pytestmark = pytest.mark.browser

# tour.js STEPS: the element each step points at.
STEPS = [
    ("hand", "#hand"),
    ("buttons", "#controls"),
    ("status", "#status"),
    ("settings", "#btn-settings"),
]

STEP_JS = """(target) => {
  const d = document.querySelector('#tour');
  const box = (el) => el.getBoundingClientRect();
  const t = box(document.querySelector(target));
  const ring = box(d.querySelector('.tour-ring'));
  const card = box(d.querySelector('.tour-card'));
  const meets = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  // What the ring must surround: the element, as far as it is on screen.
  const seen = { left: Math.max(0, t.left), top: Math.max(0, t.top),
                 right: Math.min(innerWidth, t.right), bottom: Math.min(innerHeight, t.bottom) };
  return {
    open: d.open, step: d.dataset.step,
    title: d.querySelector('#tour-title').textContent,
    text: d.querySelector('#tour-text').textContent,
    progress: d.querySelector('.tour-progress').textContent,
    buttons: [...d.querySelectorAll('button')].map((b) => b.textContent),
    labelled: document.getElementById(d.getAttribute('aria-labelledby'))?.textContent,
    surrounds: ring.left <= seen.left && ring.top <= seen.top
      && ring.right >= seen.right && ring.bottom >= seen.bottom,
    cardOnScreen: card.left >= 0 && card.top >= 0
      && card.right <= innerWidth && card.bottom <= innerHeight,
    cardCovers: meets(card, seen),
    focused: d.contains(document.activeElement) ? document.activeElement.id : null,
  };
}"""


def first_game(live: Live, new_page: Callable[..., Any], **page: Any) -> Any:
    (seat,) = live.create_table(seed=7, bot_speed_ms=0)
    p = new_page(tour=True, **page)
    p.goto(live.seat_url(seat))
    wait_joined(p)
    return p


def seen(page: Any) -> Any:
    return page.evaluate("JSON.parse(localStorage.getItem('pdk.settings') || '{}').tourSeen")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_first_game_shows_the_tour_once_in_the_page_language(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    page = first_game(live, new_page, locale=LOCALES[lang])
    words = strings(lang)
    # The tour opens with the first state: by the time the page has a view it is open.
    assert page.evaluate("document.querySelector('#tour').open")
    for i, (key, target) in enumerate(STEPS):
        step = page.evaluate(STEP_JS, target)
        assert step["step"] == key
        assert step["title"] == words[f"tour.{key}.title"]
        assert step["labelled"] == step["title"]
        assert step["text"] == words[f"tour.{key}.text"]
        assert step["progress"] == words["tour.progress"].format(step=i + 1, of=len(STEPS))
        last = i == len(STEPS) - 1
        expected = [words["tour.skip"], *([words["tour.back"]] if i else [])]
        expected.append(words["tour.done" if last else "tour.next"])
        assert step["buttons"] == expected
        assert step["focused"] == "tour-next"
        page.click("#tour-next")
    assert not page.evaluate("document.querySelector('#tour').open")
    assert seen(page) is True
    page.reload()
    wait_joined(page)
    assert not page.evaluate("document.querySelector('#tour').open")


@pytest.mark.parametrize("size", list(SIZES))
def test_each_step_points_at_its_element_and_stays_on_screen(
    size: str, live: Live, new_page: Callable[..., Any]
) -> None:
    width, height = SIZES[size]
    page = first_game(live, new_page, width=width, height=height)
    for key, target in STEPS:
        step = page.evaluate(STEP_JS, target)
        assert step["open"]
        assert step["step"] == key
        assert step["surrounds"], f"{key}: the ring misses {target}"
        assert step["cardOnScreen"], f"{key}: the card is off screen"
        assert not step["cardCovers"], f"{key}: the card covers {target}"
        if size in ("390x844", "1280x800") and key in ("hand", "settings"):
            screenshot(page, f"tour-{key}-{size}.png")
        page.click("#tour-next")


def test_tab_stays_in_the_tour_and_escape_skips_it(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = first_game(live, new_page)
    page.click("#tour-next")  # step 2: Skip, Back and Next
    ids = page.eval_on_selector_all("#tour button", "bs => bs.map(b => b.id)")
    assert ids == ["tour-skip", "tour-back", "tour-next"]
    assert page.evaluate("document.activeElement.id") == "tour-next"
    walked = []
    for _ in range(len(ids) + 1):
        page.keyboard.press("Tab")
        walked.append(page.evaluate("document.activeElement.id"))
    assert walked == ["tour-skip", "tour-back", "tour-next", "tour-skip"]
    walked = []
    for _ in range(len(ids) + 1):
        page.keyboard.press("Shift+Tab")
        walked.append(page.evaluate("document.activeElement.id"))
    assert walked == ["tour-next", "tour-back", "tour-skip", "tour-next"]
    # Enter on a focused button works the tour from the keyboard.
    page.keyboard.press("Enter")
    assert page.evaluate("document.querySelector('#tour').dataset.step") == "status"
    page.keyboard.press("Escape")
    assert not page.evaluate("document.querySelector('#tour').open")
    assert seen(page) is True
    # Skipped is seen: a reload does not show it again, and the table is usable.
    page.reload()
    wait_joined(page)
    assert not page.evaluate("document.querySelector('#tour').open")
    page.click("#btn-settings")
    assert page.evaluate("document.querySelector('#settings-sheet').open")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_tour_opens_again_from_the_settings(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=7, bot_speed_ms=0)
    page = new_page(locale=LOCALES[lang])  # the tour counts as seen
    page.goto(live.seat_url(seat))
    wait_joined(page)
    assert not page.evaluate("document.querySelector('#tour').open")
    page.click("#btn-settings")
    button = page.locator("#btn-tour")
    assert button.inner_text() == strings(lang)["settings.tour"]
    box = button.bounding_box()
    assert box is not None
    assert box["height"] >= 44
    button.click()
    assert page.evaluate("document.querySelector('#tour').open")
    assert not page.evaluate("document.querySelector('#settings-sheet').open")
    assert page.evaluate("document.querySelector('#tour').dataset.step") == "hand"
    page.click("#tour-skip")
    assert not page.evaluate("document.querySelector('#tour').open")
