"""Issue 28, card apps: call-outs with the sound setting.  "炸弹 / Bomb!" for each bomb and
"报单 / Last card!" for each seat down to one card, spoken in the page's language where the
browser can, or short sounds; nothing with the sound off.  The rules have no 报双, so there
is no two-cards call-out.

What the page would say is read by wrapping the browser's ``speechSynthesis.speak`` in an
init script (an observation of the browser API, not a stand-in for our code); the cues it
plays are ``pdk.sounds()``.  The expected call-outs come from the server's moves of the
deal: a bomb for each move it read as one, a last card for each seat its moves left with
one card."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import LANGUAGES, LOCALES, Live, strings, wait_joined

pytestmark = pytest.mark.browser

# A one-deal match played through by the stand-in (托管) with a bomb and last cards in it.
SEED = 4

RECORD_SPEECH_JS = """(() => {
  window.spoken = [];
  if (!window.speechSynthesis) return;
  const speak = window.speechSynthesis.speak.bind(window.speechSynthesis);
  window.speechSynthesis.speak = (u) => {
    window.spoken.push({ text: u.text, lang: u.lang });
    try { speak(u); } catch (e) { /* no audio device */ }
  };
})()"""

# The browser lists one voice, an English one: a German page must not read German words
# in it.
ENGLISH_VOICE_ONLY_JS = """(() => {
  if (!window.speechSynthesis) return;
  window.speechSynthesis.getVoices = () => [{ lang: 'en-US', name: 'English', default: true }];
})()"""

SPEECH_LANG = {"en": "en", "de": "de", "zh-Hans": "zh-CN", "it": "it"}


def expected_calls(moves: list[dict[str, Any]], since: int) -> list[str]:
    """The call-outs the moves from ``since`` on make, in order."""
    held = [16, 16, 16]
    calls = []
    for i, move in enumerate(moves):
        held[move["seat"]] -= len(move["cards"])
        if i < since:
            continue
        if move["kind"] == "bomb":
            calls.append("bomb")
        if move["cards"] and held[move["seat"]] == 1:
            calls.append("lastCard")
    return calls


def play_deal(
    live: Live,
    new_page: Callable[..., Any],
    lang: str,
    callouts: str | None = None,
    sound: bool = True,
    voices_js: str | None = None,
) -> tuple[Any, list[str]]:
    """A one-deal match played by the stand-in after the settings are chosen; the page and
    the call-outs its moves make."""
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=1)
    page = new_page(locale=LOCALES[lang])
    page.context.add_init_script(RECORD_SPEECH_JS)
    if voices_js:
        page.context.add_init_script(voices_js)
    page.goto(live.seat_url(seat))
    joined = wait_joined(page)
    page.click("#btn-settings")
    if callouts:
        page.select_option("#callout-select", callouts)
    if not sound:
        page.uncheck("#opt-sound")
    page.keyboard.press("Escape")
    stored = page.evaluate("JSON.parse(localStorage.getItem('pdk.settings'))")
    assert stored["callouts"] == (callouts or "voice")
    assert stored["sound"] is sound
    if not sound:
        # From a fresh page: a cue from before the switch (our turn) is not the test's.
        page.reload()
        joined = wait_joined(page)
        assert page.evaluate("pdk.sounds()") == []
    page.click("#btn-auto")
    page.wait_for_function("() => pdk.state().view.result !== null")
    moves = page.evaluate("pdk.state().view.moves")
    calls = expected_calls(moves, len(joined["view"]["moves"]))
    assert "bomb" in calls, calls
    assert "lastCard" in calls, calls
    return page, calls


@pytest.mark.parametrize("lang", LANGUAGES)
def test_bombs_and_last_cards_are_spoken_in_the_page_language(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    page, calls = play_deal(live, new_page, lang)
    words = strings(lang)
    said = page.evaluate("window.spoken")
    assert said == [{"text": words[f"callout.{c}"], "lang": SPEECH_LANG[lang]} for c in calls]


def test_short_sounds_call_out_without_speaking(live: Live, new_page: Callable[..., Any]) -> None:
    page, calls = play_deal(live, new_page, "en", callouts="sounds")
    assert page.evaluate("window.spoken") == []
    cues = page.evaluate("pdk.sounds()")
    assert cues.count("lastCard") == calls.count("lastCard")
    assert cues.count("bomb") == calls.count("bomb")


def test_a_language_no_voice_speaks_gets_the_short_sounds(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page, calls = play_deal(live, new_page, "de", voices_js=ENGLISH_VOICE_ONLY_JS)
    assert page.evaluate("window.spoken") == []
    assert page.evaluate("pdk.sounds()").count("lastCard") == calls.count("lastCard")


@pytest.mark.parametrize("callouts", ["voice", "sounds"])
def test_sound_off_calls_nothing_out(
    callouts: str, live: Live, new_page: Callable[..., Any]
) -> None:
    page, _ = play_deal(live, new_page, "en", callouts=callouts, sound=False)
    assert page.evaluate("window.spoken") == []
    assert page.evaluate("pdk.sounds()") == []
