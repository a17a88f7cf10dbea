"""Auto-pass: when nothing in the hand beats the table, the client passes for the player
after a short pause and labels it; with the setting off it waits for the player."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    Live,
    screenshot,
    sent_types,
    state,
    strings,
    wait_joined,
    wait_my_turn_or_result,
    wait_version_above,
)

pytestmark = pytest.mark.browser

SEED = 7
MAX_OWN_TURNS = 60
AUTO_PASS_MS = 900  # client/js/autopass.js

# Bots at speed 0 may move on at once: record every automatic-pass label shown (in our
# pile while the trick lasts, in the status line for a few seconds).
RECORD_JS = """() => {
  window.autoSeen = [];
  new MutationObserver(() => {
    for (const el of document.querySelectorAll('.pass-bubble.auto, #status .chip.auto')) {
      const r = el.getBoundingClientRect();
      window.autoSeen.push({text: el.textContent, inside: r.left >= 0 && r.top >= 0
        && r.right <= innerWidth && r.bottom <= innerHeight, where: el.parentElement.id});
    }
  }).observe(document.querySelector('#app'), {childList: true, subtree: true});
}"""


def play_until_nothing_beats(page: Any) -> dict[str, Any]:
    """Hint + Play our turns until one comes where we can only pass."""
    for _ in range(MAX_OWN_TURNS):
        snapshot = wait_my_turn_or_result(page)
        assert snapshot["view"]["result"] is None, "the deal ended first"
        if snapshot["view"]["can_pass"]:
            return snapshot
        page.click("#btn-hint")
        page.wait_for_selector('#btn-play[aria-disabled="false"]')
        page.click("#btn-play")
        wait_version_above(page, snapshot["version"])
    raise AssertionError("never had to pass")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_client_passes_for_us_when_nothing_beats_the_table(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0)
    page = new_page(locale=LOCALES[lang], auto_pass=True)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    page.evaluate(RECORD_JS)
    snapshot = play_until_nothing_beats(page)
    if lang == "en":
        # Slow bots (a setting: the version stays) keep the label on screen for the picture.
        page.click("#btn-settings")
        page.click('label[for="seg-speed-slow"]')
        page.keyboard.press("Escape")
    # Nobody touches anything: the pass happens by itself.
    wait_version_above(page, snapshot["version"])
    me = snapshot["view"]["seat"]
    moves = state(page)["view"]["moves"]
    assert moves[len(snapshot["view"]["moves"])] == {
        "seat": me,
        "cards": [],
        "kind": "pass",
        "top": "",
        "length": 0,
    }
    table = strings(lang)
    page.wait_for_function("() => window.autoSeen.length > 0")
    seen = page.evaluate("window.autoSeen")
    assert {"text": table["move.autoPass"], "inside": True, "where": "status"} in seen
    assert all(s["text"] == table["move.autoPass"] and s["inside"] for s in seen)
    assert table["say.youAutoPass"] in page.inner_text("#announcer")
    if lang == "en":
        page.wait_for_selector("#status .chip.auto")
        screenshot(page, "auto-pass.png")


def test_with_auto_pass_off_the_turn_waits_for_the_player(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0)
    page = new_page(auto_pass=True, record_sent=True)
    # The page's timers run on a clock the test can move: the pause is run through at
    # once, not waited out.
    page.clock.install()
    page.goto(live.seat_url(seat))
    wait_joined(page)
    page.click("#btn-settings")
    assert page.is_checked("#opt-autopass")  # on by default
    page.uncheck("#opt-autopass")
    page.keyboard.press("Escape")
    snapshot = play_until_nothing_beats(page)
    sent = sent_types(page)
    # Three pauses' worth of the page's timers fire: a pass armed for this turn would be
    # in the record now.
    page.clock.run_for(3 * AUTO_PASS_MS)
    assert sent_types(page) == sent
    assert state(page)["version"] == snapshot["version"]
    page.click("#btn-pass")
    wait_version_above(page, snapshot["version"])
    assert sent_types(page) == [*sent, "pass"]
