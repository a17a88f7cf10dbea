"""Issue 28, card apps' 托管: the seat's own switch hands its turns to the server's
stand-in until tapped again, and everyone at the table sees the seat as "Auto"."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    SIZES,
    Live,
    RawSeat,
    hold_frames_from_now,
    hold_incoming_frames,
    press_across_a_state,
    screenshot,
    sent_types,
    strings,
    wait_held_version_above,
    wait_joined,
)

pytestmark = pytest.mark.browser

ON_AUTO_JS = "() => { const s = pdk.state(); return s.table.seats[s.view.seat].on_auto; }"
OFF_AUTO_JS = "() => { const s = pdk.state(); return !s.table.seats[s.view.seat].on_auto; }"
# Every element of the top bar: the switch must be on screen, full size and covered by none.
SWITCH_FITS_JS = """() => {
  const b = document.querySelector('#btn-auto').getBoundingClientRect();
  const bad = [];
  const out = b.left < 0 || b.top < 0 || b.right > innerWidth || b.bottom > innerHeight;
  if (out) bad.push('outside');
  if (b.width < 44 || b.height < 44) bad.push(`small ${b.width}x${b.height}`);
  const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
  if (!hit || !hit.closest('#btn-auto')) bad.push('covered');
  const bar = document.querySelectorAll('.topbar > *:not(.top-actions), .top-actions > *');
  for (const other of bar) {
    if (other.id === 'btn-auto' || other.hidden || other.offsetParent === null) continue;
    const o = other.getBoundingClientRect();
    if (o.left < b.right && b.left < o.right && o.top < b.bottom && b.top < o.bottom)
      bad.push(`overlaps ${other.id || other.className}`);
  }
  return bad;
}"""


@pytest.mark.parametrize("size", SIZES)
def test_the_switch_hands_my_turns_to_the_stand_in_until_i_tap_it_again(
    size: str, live: Live, new_page: Callable[..., Any]
) -> None:
    width, height = SIZES[size]
    # At the table's pace the deal is still on when we look; a finished one is handled too.
    (seat,) = live.create_table(seed=11, bot_speed_ms=800, deals=5)
    page = new_page(width=width, height=height, record_sent=True)
    page.goto(live.seat_url(seat))
    first = wait_joined(page)
    assert page.evaluate(SWITCH_FITS_JS) == []
    assert page.get_attribute("#btn-auto", "aria-pressed") == "false"
    dealt = first["view"]["counts"][first["view"]["seat"]]
    page.click("#btn-auto")
    page.wait_for_function(ON_AUTO_JS)
    assert page.get_attribute("#btn-auto", "aria-pressed") == "true"
    assert page.locator("#auto-banner").is_visible()
    assert "Auto" in page.inner_text("#me-info")
    # The stand-in plays our cards while we touch nothing; our own moves stay locked.
    page.wait_for_function(
        "(dealt) => { const v = pdk.state().view;"
        " return v.result !== null || v.counts[v.seat] < dealt; }",
        arg=dealt,
    )
    assert page.get_attribute("#btn-play", "aria-disabled") == "true"
    assert page.get_attribute("#btn-pass", "aria-disabled") == "true"
    page.wait_for_function(
        "() => pdk.state().view.result === null || document.querySelector('#result-sheet').open"
    )
    if page.evaluate("() => document.querySelector('#result-sheet').open"):
        page.keyboard.press("Escape")
    if size in ("390x844", "1280x800"):
        screenshot(page, f"autoplay-on-{size}.png")
    # Tapped again: the seat is ours, and nothing but the two switches went out.
    page.click("#btn-auto")
    page.wait_for_function(OFF_AUTO_JS)
    assert page.get_attribute("#btn-auto", "aria-pressed") == "false"
    assert page.locator("#auto-banner").is_hidden()
    frames = page.evaluate("() => window.sentFrames.filter(f => f.type === 'auto')")
    assert [f["on"] for f in frames][:2] == [True, False]
    assert "play" not in sent_types(page)
    assert "pass" not in sent_types(page)


def test_i_am_back_still_counts_when_a_stand_in_move_lands_under_the_finger(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """While a seat is on auto the table moves every few hundred milliseconds, and each
    state draws the banner again: the button pressed must still be there to let go of."""
    (seat,) = live.create_table(seed=11, bot_speed_ms=800, deals=5)
    page = new_page()
    hold_incoming_frames(page)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    page.click("#btn-auto")
    page.wait_for_function(ON_AUTO_JS)
    page.wait_for_selector("#btn-back")
    version = hold_frames_from_now(page)
    wait_held_version_above(page, version)
    press_across_a_state(page, "#btn-back", version)
    page.wait_for_function(OFF_AUTO_JS)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_friend_on_auto_is_shown_as_auto_and_the_switch_speaks_my_language(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    host_seat, friend_seat = live.create_table(
        seed=5, humans=2, bots=["easy"], turn_seconds=0, bot_speed_ms=0
    )
    words = strings(lang)
    host = new_page(locale=LOCALES[lang])
    host.goto(live.seat_url(host_seat))
    wait_joined(host)
    assert host.get_attribute("#btn-auto", "aria-label") == words["autoplay.start"]
    friend = RawSeat(live, friend_seat)
    host.wait_for_function("() => pdk.state().table.seats[1].connected")
    assert host.locator("#seat-right .badge.auto").count() == 0
    friend.ws.send(json.dumps({"type": "auto", "version": friend.version, "on": True}))
    host.wait_for_function("() => pdk.state().table.seats[1].on_auto")
    # Seat 1 sits on the host's right, still connected, marked for everyone.
    assert host.inner_text("#seat-right .badge.auto") == words["badge.auto"]
    assert host.evaluate("() => pdk.state().table.seats[1].connected")
    host.click("#btn-auto")
    host.wait_for_function(ON_AUTO_JS)
    assert host.get_attribute("#btn-auto", "aria-label") == words["autoplay.stop"]
    friend.close()
