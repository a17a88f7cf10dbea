"""Motion and sound: a play travels from its seat, a bomb shakes the table with its sound;
reduced motion stops every movement, and the sound setting every cue; the audio rests
between cues."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    Live,
    click_card,
    find_seed,
    take_turn_with_hint_or_pass,
    wait_joined,
    wait_my_turn_or_result,
    wait_version_above,
)
from test_host_drawer import host_and_friend
from test_scores import we_lead_with_four_threes

pytestmark = pytest.mark.browser

# Every animation the page has started (finished ones included) is recorded by id.
RECORD_JS = """() => {
  window.motionSeen = [];
  const original = Element.prototype.animate;
  Element.prototype.animate = function (keyframes, options) {
    window.motionSeen.push(options && options.id);
    return original.call(this, keyframes, options);
  };
}"""


def play_the_bomb(live: Live, new_page: Callable[..., Any], motion: str, sound: bool) -> Any:
    seed, _ = find_seed("classic", we_lead_with_four_threes)
    (seat,) = live.create_table(seed=seed, bot_speed_ms=3000)
    page = new_page(reduced_motion=motion)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    if not sound:
        page.click("#btn-settings")
        page.uncheck("#opt-sound")
        page.keyboard.press("Escape")
        page.reload()  # from a fresh page: no cue may come from before the switch
        wait_joined(page)
        page.click("#btn-settings")
        assert not page.is_checked("#opt-sound")
        page.keyboard.press("Escape")
    page.evaluate(RECORD_JS)
    for code in ("3S", "3H", "3D", "3C"):
        click_card(page, code)
    version = page.evaluate("pdk.state().version")
    page.click("#btn-play")
    wait_version_above(page, version)
    page.wait_for_selector("#pile-me .play.bomb")
    return page


def test_a_bomb_travels_to_the_table_shakes_it_and_sounds(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = play_the_bomb(live, new_page, motion="no-preference", sound=True)
    page.wait_for_function("() => window.motionSeen.includes('pdk-bomb')")
    assert {"pdk-travel", "pdk-bomb", "pdk-bomb-flare"} <= set(page.evaluate("window.motionSeen"))
    assert "bomb" in page.evaluate("pdk.sounds()")


def test_reduced_motion_moves_nothing_and_sound_off_plays_nothing(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = play_the_bomb(live, new_page, motion="reduce", sound=False)
    # Effects and cues start while a state is drawn.  Wait for the state after the bomb
    # (a bot's answer): by then the bomb's, and that move's, would have been recorded.
    wait_version_above(page, page.evaluate("pdk.state().version"))
    assert page.evaluate("window.motionSeen") == []
    assert page.evaluate("pdk.sounds()") == []
    # CSS motion is off too: nothing in the page is running an animation longer than 1 ms.
    durations = page.evaluate(
        "() => document.getAnimations().map(a => a.effect.getComputedTiming().duration)"
    )
    assert all(d <= 1 for d in durations), durations


def test_the_audio_rests_once_the_cues_have_rung_out_and_wakes_for_the_next(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """A running audio context keeps the audio thread busy in silence (a phone's battery):
    it is suspended between cues.  Its clock runs only while it does, so a clock moved on
    between two rests proves the next cue woke it."""
    (seat,) = live.create_table(seed=3, bot_speed_ms=0)
    page = new_page()
    page.goto(live.seat_url(seat))
    wait_my_turn_or_result(page)
    take_turn_with_hint_or_pass(page)  # a tap: from now on cues may sound
    wait_my_turn_or_result(page)
    page.wait_for_function("() => pdk.sounds().length > 0 && pdk.audio().state === 'suspended'")
    cues, rested_at = page.evaluate("[pdk.sounds().length, pdk.audio().time]")
    take_turn_with_hint_or_pass(page)
    page.wait_for_function("(n) => pdk.sounds().length > n", arg=cues)
    page.wait_for_function(
        "(t) => pdk.audio().state === 'suspended' && pdk.audio().time > t", arg=rested_at
    )


# Every animation on the page that would run for ever, by name and element.
ENDLESS_JS = """() => document.getAnimations()
  .filter(a => a.effect.getComputedTiming().endTime === Infinity)
  .map(a => `${a.animationName || a.id} on ${a.effect.target.className}`)"""


def test_a_table_waiting_on_a_move_animates_nothing_for_ever(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """A turn can last a minute; an animation running all that time keeps a phone's CPU
    (and in the headless shell a third of a core) busy.  The glow on the seat to move,
    the thinking dots and the last-card badge beat a few times and stop."""
    with host_and_friend(live, new_page, reduced_motion="no-preference") as page:
        wait_my_turn_or_result(page)
        assert page.locator(".me.is-turn").count() == 1
        assert page.evaluate(ENDLESS_JS) == []
        take_turn_with_hint_or_pass(page)
        page.wait_for_selector(".seat-card.is-turn")
        page.wait_for_selector(".thinking i")
        assert page.evaluate(ENDLESS_JS) == []
