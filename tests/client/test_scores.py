"""Issue 13, defects 8 and 9: the seat scores include bomb points paid during the deal, the
bomb is announced in good grammar in every language, and Play stays dimmed for a first play
without the 3 of spades when the rules ask for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    Live,
    choose_language,
    click_card,
    find_seed,
    hand_codes,
    play_to_result,
    strings,
    wait_joined,
    wait_version_above,
)

from server import engine

pytestmark = pytest.mark.browser


def we_lead_with_four_threes(state: engine.MatchState) -> bool:
    hand = engine.seat_view(state, 0).hand
    return state.deal.turn == 0 and sum(code[0] == "3" for code in hand) == 4


def we_lead_with_two_threes(state: engine.MatchState) -> bool:
    hand = engine.seat_view(state, 0).hand
    return state.deal.turn == 0 and sum(code[0] == "3" for code in hand) >= 2


def open_seat(live: Live, new_page: Callable[..., Any], seed: int, preset: str, lang: str) -> Any:
    (seat,) = live.create_table(seed=seed, rules=preset, bot_speed_ms=2000)
    page = new_page(locale=LOCALES[lang])
    page.goto(live.seat_url(seat))
    wait_joined(page)
    return page


@pytest.mark.parametrize("preset", ["classic", "kawu"])
def test_a_bomb_paid_at_once_shows_in_the_seat_scores_and_is_announced(
    preset: str, live: Live, new_page: Callable[..., Any]
) -> None:
    # One page for the four languages: each is chosen in the settings sheet, then the
    # page follows the link of a new table (the same deal) without a load.
    seed, _ = find_seed(preset, we_lead_with_four_threes)
    page = open_seat(live, new_page, seed, preset, LANGUAGES[0])
    for lang in LANGUAGES:
        if lang != LANGUAGES[0]:
            choose_language(page, lang)
            (seat,) = live.create_table(seed=seed, rules=preset, bot_speed_ms=2000)
            page.goto(live.seat_url(seat))
            page.wait_for_function(
                "(id) => { const s = pdk.state(); return s.table && s.table.id === id"
                " && s.view && s.view.hand.length === 16; }",
                arg=seat.table,
            )
        table = strings(lang)
        for code in ("3S", "3H", "3D", "3C"):
            click_card(page, code)
        page.wait_for_selector('#btn-play[aria-disabled="false"]')
        version = page.evaluate("pdk.state().version")
        page.click("#btn-play")
        wait_version_above(page, version)
        view = page.evaluate("pdk.state().view")
        assert view["result"] is None, lang
        assert view["bomb_points"] == [20, -10, -10], lang
        # The deal is still on: the live totals are the match totals plus the bombs paid.
        assert page.inner_text("#me-info .score") == "+20", lang
        assert page.inner_text("#seat-left .score") == "-10", lang
        assert page.inner_text("#seat-right .score") == "-10", lang
        said = page.inner_text("#announcer")
        assert table["say.youBombPaid"].format(n=20) in said, lang
        assert table["seat.you"] + "'s" not in said, lang


def test_play_is_dimmed_for_a_first_play_without_the_three_of_spades(
    live: Live, new_page: Callable[..., Any]
) -> None:
    seed, _ = find_seed("classic", we_lead_with_two_threes)
    page = open_seat(live, new_page, seed, "classic", "en")
    threes = [c for c in hand_codes(page) if c[0] == "3" and c != "3S"]
    # Another 3 alone is a legal single by rank, but not without the 3 of spades.
    click_card(page, threes[0])
    assert page.get_attribute("#btn-play", "aria-disabled") == "true"
    click_card(page, threes[0])
    click_card(page, "3S")
    assert page.get_attribute("#btn-play", "aria-disabled") == "false"
    # A pair of 3s must hold the 3 of spades too.
    click_card(page, threes[0])
    assert page.get_attribute("#btn-play", "aria-disabled") == "false"
    if len(threes) > 1:
        click_card(page, "3S")
        click_card(page, threes[1])
        assert page.get_attribute("#btn-play", "aria-disabled") == "true"


def signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def assert_scores_are_the_match_totals(page: Any) -> None:
    """Once a deal is over, each seat's score is its match total: a bomb paid during the
    deal is in it exactly once (it is in the deal total, not added again)."""
    view = page.evaluate("pdk.state().view")
    totals = view["result"]["match_totals"]
    assert totals == view["totals"]
    assert page.inner_text("#me-info .score") == signed(totals[0])
    assert page.inner_text("#seat-right .score") == signed(totals[1])
    assert page.inner_text("#seat-left .score") == signed(totals[2])
    page.wait_for_selector("#result-sheet[open]")
    shown = page.eval_on_selector_all(
        '#result-sheet td[data-col="matchTotal"]', "cells => cells.map(c => c.textContent)"
    )
    assert shown == [signed(totals[s]) for s in (0, 1, 2)]


@pytest.mark.parametrize("deals", [1, 5])
def test_a_bomb_counts_once_in_the_scores_at_deal_end_and_at_match_end(
    deals: int, live: Live, new_page: Callable[..., Any]
) -> None:
    """Issue 28, defect 13: the scores are pinned after the deal and after the match (a
    one-deal match ends with its deal; in a longer one the next deal adds to them)."""
    seed, _ = find_seed("classic", we_lead_with_four_threes)
    (seat,) = live.create_table(seed=seed, rules="classic", bot_speed_ms=0, deals=deals)
    page = new_page()
    page.goto(live.seat_url(seat))
    wait_joined(page)
    for code in ("3S", "3H", "3D", "3C"):
        click_card(page, code)
    version = page.evaluate("pdk.state().version")
    page.click("#btn-play")
    wait_version_above(page, version)
    assert page.evaluate("pdk.state().view.bomb_points[0]") == 20
    end = play_to_result(page)
    result = end["view"]["result"]
    assert result["bomb_points"][0] == 20
    assert result["deal_totals"][0] == 20 + result["card_points"][0]
    assert end["view"]["match_over"] == (deals == 1)
    assert_scores_are_the_match_totals(page)
    if deals == 1:
        return

    version = page.evaluate("pdk.state().version")
    page.click("#btn-next-deal")
    wait_version_above(page, version)
    page.wait_for_selector("#result-sheet:not([open])", state="attached")
    second = play_to_result(page)["view"]["result"]
    assert second["match_totals"] == [
        a + b for a, b in zip(result["deal_totals"], second["deal_totals"], strict=True)
    ]
    assert_scores_are_the_match_totals(page)
