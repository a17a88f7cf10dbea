"""Issue 28, defect 11: the host's seat panel is a drawer, not a modal; while it is open the
host still sees their own turn and running clock and can reach the hand and the buttons."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from client_helpers import (
    SIZES,
    Live,
    RawSeat,
    find_seed,
    hold_frames_from_now,
    hold_incoming_frames,
    press_across_a_state,
    screenshot,
    wait_held_version_above,
    wait_joined,
)

from server import engine

pytestmark = pytest.mark.browser

# Whether the middle of each element is what a finger there would touch.
UNCOVERED_JS = """(selectors) => selectors.map(sel => {
  const el = document.querySelector(sel);
  if (!el || !el.getClientRects().length) return `${sel}: not shown`;
  const r = el.getBoundingClientRect();
  const x = r.left + Math.min(r.width / 2, 12), y = r.top + r.height / 2;
  if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return `${sel}: off screen`;
  const hit = document.elementFromPoint(x, y);
  if (hit && (hit === el || el.contains(hit))) return null;
  return `${sel}: covered by ${hit && hit.outerHTML.slice(0, 60)}`;
}).filter(Boolean)"""
MUST_SEE = ["#me-info .badge.turn", "#me-info .clock", "#hand .card", "#btn-play", "#btn-pass"]


def host_leads(state: engine.MatchState) -> bool:
    return bool(state.deal.turn == 0)


@contextmanager
def host_and_friend(
    live: Live, new_page: Callable[..., Any], *, hold_frames: bool = False, **page: Any
) -> Iterator[Any]:
    """The host's page, joined, at a table the host leads with a 60 s turn clock, a
    friend's socket at seat 1 (which never moves) and a bot at seat 2.  ``hold_frames``:
    the page can hold back what it receives (``hold_incoming_frames``)."""
    seed, _ = find_seed("classic", host_leads)
    host_seat, friend_seat = live.create_table(
        seed=seed, humans=2, bots=["easy"], turn_seconds=60, bot_speed_ms=0
    )
    host = new_page(**page)
    if hold_frames:
        hold_incoming_frames(host)
    host.goto(live.seat_url(host_seat))
    wait_joined(host)
    friend = RawSeat(live, friend_seat)
    try:
        yield host
    finally:
        friend.close()


def test_the_host_panel_leaves_the_hosts_turn_clock_and_hand_in_view(
    live: Live, new_page: Callable[..., Any]
) -> None:
    with host_and_friend(live, new_page) as host:
        host.wait_for_selector("#me-info .clock:not([hidden])")
        host.click("#btn-invite")
        host.wait_for_selector("#invite-sheet[open]")
        assert not host.evaluate("() => document.querySelector('#invite-sheet').matches(':modal')")
        for size, (width, height) in SIZES.items():
            host.set_viewport_size({"width": width, "height": height})
            host.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
            assert host.evaluate(UNCOVERED_JS, MUST_SEE) == [], size
            # The panel itself is usable: its first action scrolls into view, on top.
            host.locator('.host-seat [data-action="invite"]').scroll_into_view_if_needed()
            assert host.evaluate(UNCOVERED_JS, ['.host-seat [data-action="invite"]']) == [], size
            if size in ("390x844", "1280x800"):
                screenshot(host, f"host-drawer-{size}.png")
        # The table is playable with the panel open; Escape closes it.
        host.click("#btn-hint")
        host.wait_for_selector('#btn-play[aria-disabled="false"]')
        host.keyboard.press("Escape")
        host.wait_for_selector("#invite-sheet:not([open])", state="attached")


def test_a_host_action_still_counts_when_a_move_lands_under_the_finger(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """The panel stays open while the table plays on, and each state draws it again: the
    button pressed must still be there to let go of."""
    with host_and_friend(live, new_page, hold_frames=True, record_sent=True) as host:
        host.click("#btn-invite")
        host.wait_for_selector("#invite-sheet[open]")
        host.click("#btn-hint")
        host.wait_for_selector('#btn-play[aria-disabled="false"]')
        version = hold_frames_from_now(host)
        host.click("#btn-play")
        wait_held_version_above(host, version)
        press_across_a_state(host, '.host-seat[data-seat="1"] [data-action="invite"]', version)
        host.wait_for_function("() => window.sentFrames.some(f => f.type === 'invite')")
