"""Issue 28, card apps' "last trick": during play the player can look back at the trick
before the current one.  What it shows is checked against the engine's own replay of the
deal's moves (where the engine says ``trick_cleared``), never against the client's logic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    SIZES,
    Live,
    screenshot,
    strings,
    take_turn_with_hint_or_pass,
    wait_joined,
    wait_my_turn_or_result,
)

from server import engine

pytestmark = pytest.mark.browser

SEED = 11
# The panel's rows: (seat, cards) per move, [] for a pass.
ROWS_JS = """() => [...document.querySelectorAll('#last-trick .lt-move')].map(li => [
  Number(li.dataset.seat), [...li.querySelectorAll('.card')].map(c => c.dataset.code)])"""
# On screen, inside the table area and clear of our strip: the hand stays usable.
PANEL_FITS_JS = """() => {
  const p = document.querySelector('#last-trick').getBoundingClientRect();
  const me = document.querySelector('#me').getBoundingClientRect();
  const bad = [];
  if (p.left < 0 || p.top < 0 || p.right > innerWidth || p.bottom > innerHeight) bad.push('out');
  if (p.bottom > me.top + 1) bad.push(`covers our strip by ${p.bottom - me.top}px`);
  const panel = document.querySelector('#last-trick');
  if (panel.scrollWidth > panel.clientWidth + 1) bad.push('scrolls sideways');
  return bad;
}"""


def engine_last_trick(moves: list[dict[str, Any]]) -> list[tuple[int, list[str]]]:
    """The trick before the current one, by the engine: replay the moves of the deal."""
    state = engine.new_match(engine.PRESETS["classic"], SEED, 1)
    ends = [0]
    for i, move in enumerate(moves):
        seat = move["seat"]
        action = engine.Pass(seat) if move["kind"] == "pass" else engine.Play(seat, move["cards"])
        if any(isinstance(e, engine.TrickCleared) for e in engine.apply(state, action)):
            ends.append(i + 1)
    assert len(ends) >= 2, "no trick has finished"
    return [(m["seat"], list(m["cards"])) for m in moves[ends[-2] : ends[-1]]]


def play_until_a_trick_finished(page: Any) -> dict[str, Any]:
    """Take our turns until the server's view shows a finished trick; that state."""
    while True:
        snapshot = wait_my_turn_or_result(page)
        view = snapshot["view"]
        assert view["result"] is None, "the deal ended before a trick finished"
        if len(view["moves"]) > len(view["trick"]):
            return snapshot
        take_turn_with_hint_or_pass(page)


@pytest.mark.parametrize("size", SIZES)
def test_the_last_trick_shows_the_engines_finished_trick_and_fits(
    size: str, live: Live, new_page: Callable[..., Any]
) -> None:
    width, height = SIZES[size]
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=1)
    page = new_page(width=width, height=height)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    # Nothing finished yet: the switch says so and opens nothing.
    assert page.get_attribute("#btn-last-trick", "aria-disabled") == "true"
    page.click("#btn-last-trick", force=True)
    assert page.locator("#last-trick").is_hidden()
    snapshot = play_until_a_trick_finished(page)
    page.click("#btn-last-trick")
    page.wait_for_selector("#last-trick .lt-move")
    expected = engine_last_trick(snapshot["view"]["moves"])
    assert [tuple(row) for row in page.evaluate(ROWS_JS)] == expected
    assert page.evaluate(PANEL_FITS_JS) == []
    if size in ("390x844", "1280x800"):
        screenshot(page, f"last-trick-{size}.png")
    # A tap elsewhere puts it away; L brings it back, Escape closes it.
    page.mouse.click(5, height - 5)
    assert page.locator("#last-trick").is_hidden()
    page.keyboard.press("l")
    assert page.locator("#last-trick").is_visible()
    page.keyboard.press("Escape")
    assert page.locator("#last-trick").is_hidden()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_last_trick_speaks_my_language(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    words = strings(lang)
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=1)
    page = new_page(locale=LOCALES[lang], width=360, height=740)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    assert page.get_attribute("#btn-last-trick", "aria-label") == words["lastTrick.none"]
    snapshot = play_until_a_trick_finished(page)
    assert page.get_attribute("#btn-last-trick", "aria-label") == words["lastTrick.show"]
    page.click("#btn-last-trick")
    assert page.inner_text("#last-trick .lt-title") == words["lastTrick.title"]
    passes = [m for m in engine_last_trick(snapshot["view"]["moves"]) if not m[1]]
    assert page.locator("#last-trick .lt-pass").count() == len(passes)
    if passes:
        assert page.inner_text("#last-trick .lt-pass >> nth=0") == words["move.pass"]
    assert page.evaluate(PANEL_FITS_JS) == []
