"""Issue 28, defects 1 and 2: the status line keeps its whole instruction, readable, when the
badges ("Last card!", "Your turn") and the turn clock crowd our strip, in every language at
every size; in phone landscape the side seats' plays stay clear of the top bar and a long
play keeps readable cards.

The last-card position is reached by a line of moves worked out here with the engine on a
fixed seed (every seat is a person: the page is seat 0, the test plays seats 1 and 2)."""

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
    choose_language,
    click_card,
    find_seed,
    resize,
    screenshot,
    wait_joined,
    wait_version_above,
)
from test_piles import opening_play

from server import engine

pytestmark = pytest.mark.browser

Line = list[tuple[int, list[str] | None]]


def line_to_our_last_card(state: engine.MatchState) -> Line | None:
    """Moves (seat, cards or None for a pass) after which seat 0 holds one card and must
    play: seat 0 sheds its longest hint that keeps a card, the others their first hint
    (or pass when they may)."""
    line: Line = []
    for _ in range(80):
        deal = state.deal
        if deal.result is not None:
            return None
        seat = deal.turn
        view = engine.seat_view(state, seat)
        if seat == 0 and len(view.hand) == 1:
            return line
        if seat != 0 and view.can_pass:
            engine.apply(state, engine.Pass(seat=seat))
            line.append((seat, None))
            continue
        hints = view.hints
        if seat == 0:
            keep = [h for h in hints if len(h) < len(view.hand)]
            if not keep:
                return None
            cards = max(keep, key=len)
        else:
            cards = hints[0]
        engine.apply(state, engine.Play(seat=seat, cards=cards))
        line.append((seat, cards))
    return None


STATUS_JS = """() => {
  const s = document.querySelector('#status');
  const r = s.getBoundingClientRect();
  const line = parseFloat(getComputedStyle(s).lineHeight);
  return {width: r.width, lines: Math.round(r.height / line), text: s.textContent,
          cut: s.scrollHeight > s.clientHeight + 1 || s.scrollWidth > s.clientWidth + 1,
          right: r.right, bottom: r.bottom};
}"""


def assert_status_readable(page: Any, where: str) -> None:
    report = page.evaluate(STATUS_JS)
    width = page.viewport_size["width"]
    assert not report["cut"], f"{where}: the status is cut: {report}"
    # Room for a few words a line: at least 60 % of a phone's width, 240 px elsewhere.
    squeezed = report["lines"] > 1 and report["width"] < min(0.6 * width, 240)
    assert not squeezed, f"{where}: squeezed: {report}"
    assert report["lines"] <= 3, f"{where}: {report}"
    assert report["right"] <= width + 1, f"{where}: {report}"


def reach_our_last_card(live: Live, new_page: Callable[..., Any], locale: str) -> Any:
    seed, line = find_seed("classic", line_to_our_last_card)
    seats = live.create_table(seed=seed, humans=3, turn_seconds=60)
    page = new_page(locale=locale)
    page.goto(live.seat_url(seats[0]))
    wait_joined(page)
    others = {1: RawSeat(live, seats[1]), 2: RawSeat(live, seats[2])}
    try:
        for seat, cards in line:
            version = page.evaluate("pdk.state().version")
            if seat == 0:
                assert cards is not None
                for code in cards:
                    click_card(page, code)
                page.click("#btn-play")
            else:
                raw = others[seat]
                raw.wait_version(version - 1)
                if cards is None:
                    raw.ws.send(json.dumps({"type": "pass", "version": version}))
                else:
                    raw.ws.send(json.dumps({"type": "play", "version": version, "cards": cards}))
            wait_version_above(page, version)
    finally:
        for raw in others.values():
            raw.close()
    page.wait_for_function("() => pdk.state().view.hand.length === 1")
    return page


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_status_stays_readable_beside_the_last_card_badge_and_the_clock(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    page = reach_our_last_card(live, new_page, LOCALES[lang])
    view = page.evaluate("pdk.state().view")
    assert view["turn"] == 0
    assert view["last_card"][0]
    page.wait_for_selector("#me-info .badge.alarm")
    page.wait_for_selector("#me-info .clock:not([hidden])")
    for size, (width, height) in SIZES.items():
        resize(page, width, height)
        assert_status_readable(page, f"{lang} at {size}")
        if lang == "de":
            screenshot(page, f"last-card-status-{size}.png")


def we_lead_and_must_include(state: engine.MatchState) -> bool:
    view = engine.seat_view(state, 0)
    return state.deal.turn == 0 and view.must_include is not None


def test_the_opening_instruction_is_whole_in_phone_landscape(
    live: Live, new_page: Callable[..., Any]
) -> None:
    # One page: the languages are chosen in its settings sheet, the sizes by resizing.
    seed, _ = find_seed("classic", we_lead_and_must_include)
    (seat,) = live.create_table(seed=seed, bot_speed_ms=0)
    page = new_page(width=844, height=390)
    page.goto(live.seat_url(seat))
    view = wait_joined(page)["view"]
    assert view["must_include"]
    for lang in LANGUAGES:
        choose_language(page, lang)
        for size, (width, height) in SIZES.items():
            resize(page, width, height)
            assert_status_readable(page, f"{lang} at {size}")


# A play's cards in phone landscape: no smaller than this (the rank corner stays legible).
MIN_PILE_CARD_PX = 38

PILE_BOXES_JS = """(side) => {
  const bar = document.querySelector('.topbar').getBoundingClientRect();
  const cards = [...document.querySelectorAll(`#pile-${side} .play .card`)];
  const boxes = cards.map(c => c.getBoundingClientRect());
  const fig = document.querySelector(`#pile-${side} .play`).getBoundingClientRect();
  return {barBottom: bar.bottom, top: Math.min(fig.top, ...boxes.map(b => b.top)),
          width: Math.min(...boxes.map(b => b.width))};
}"""


@pytest.mark.parametrize(("kind", "length"), [("pair_run", 10), ("airplane", 10)])
def test_a_long_side_play_in_phone_landscape_keeps_clear_of_the_top_bar(
    kind: str, length: int, live: Live, new_page: Callable[..., Any]
) -> None:
    for side, seat in {"right": 1, "left": 2}.items():
        seed, cards = opening_play(kind, length, seat)
        seats = live.create_table(seed=seed, rules="sixteen", humans=3, bot_speed_ms=0)
        page = new_page(width=844, height=390)
        page.goto(live.seat_url(seats[0]))
        wait_joined(page)
        other = RawSeat(live, seats[seat])
        try:
            other.play(cards)
        finally:
            other.close()
        page.wait_for_function(
            f"() => document.querySelectorAll('#pile-{side} .play .card').length === {length}"
        )
        boxes = page.evaluate(PILE_BOXES_JS, side)
        assert boxes["top"] >= boxes["barBottom"], f"{kind} from the {side}: {boxes}"
        assert boxes["width"] >= MIN_PILE_CARD_PX, f"{kind} from the {side}: {boxes}"
        if side == "left" and kind == "airplane":
            screenshot(page, "long-play-phone-landscape.png")
