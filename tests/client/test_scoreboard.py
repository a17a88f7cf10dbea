"""Issue 28, card apps' deal-by-deal scoreboard: at the match's end the result sheet lists
every deal (each seat's deal total, its bomb points, a shut-out), with the match totals,
and the history shows the same per match.  Each cell is checked against the server's deal
results (``view.results``); the deals are played by the stand-in (托管) to keep it short."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    SIZES,
    Live,
    play_match_on_auto,
    resize,
    screenshot,
    store_language,
    strings,
    wait_joined,
)

pytestmark = pytest.mark.browser

DEALS = 5
# Seed 3: over its five deals someone is shut out and a bomb is paid (checked below).
SEED = 3


def signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def play_to_scoreboard(page: Any) -> dict[str, Any]:
    """The match played to its end on auto, once its scoreboard shows; its last state."""
    final = play_match_on_auto(page, DEALS)
    page.wait_for_selector("#result-sheet[open] .scoreboard-table")
    return final


def board_cells(page: Any, root: str) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = page.eval_on_selector_all(
        f"{root} .scoreboard-table tbody td",
        """tds => tds.map(td => ({
          deal: Number(td.parentElement.dataset.deal), seat: Number(td.dataset.seat),
          total: td.querySelector('b').textContent,
          bomb: td.querySelector('[data-mark=bomb]')?.textContent ?? null,
          shut: td.querySelector('[data-mark=shut]')?.textContent ?? null }))""",
    )
    return cells


def check_board(
    cells: list[dict[str, Any]], results: list[dict[str, Any]], words: dict[str, str]
) -> None:
    assert len(cells) == 3 * len(results)
    by_deal = {r["deal_no"]: r for r in results}
    for cell in cells:
        r, s = by_deal[cell["deal"]], cell["seat"]
        assert cell["total"] == signed(r["deal_totals"][s])
        bomb = r["bomb_points"][s]
        expected = words["scoreboard.bomb"].replace("{n}", signed(bomb)) if bomb else None
        assert cell["bomb"] == expected
        assert cell["shut"] == (words["result.shutOut"] if r["shut_out"][s] else None)


def test_the_match_end_shows_every_deal_with_its_bombs_and_shut_outs(
    live: Live, new_page: Callable[..., Any]
) -> None:
    # The match is played once, in English; a load at its end shows the same sheet, so
    # the page is loaded again in each other language (a reload costs a tenth of a new
    # page and a match).
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=DEALS)
    page = new_page()
    page.goto(live.seat_url(seat))
    wait_joined(page)
    final = play_to_scoreboard(page)
    results = final["view"]["results"]
    assert [r["deal_no"] for r in results] == list(range(1, DEALS + 1))
    for lang in LANGUAGES:
        if lang != LANGUAGES[0]:  # the first is checked as the match ended, unloaded
            store_language(page, lang)
            page.reload()
            wait_joined(page)
        page.wait_for_selector(f'html[lang="{lang}"] #result-sheet[open] .scoreboard-table')
        words = strings(lang)
        check_board(board_cells(page, "#result-sheet"), results, words)
        totals = page.eval_on_selector_all(
            "#result-sheet .scoreboard-table tfoot td",
            "tds => tds.map(td => [Number(td.dataset.seat), td.textContent])",
        )
        assert {s: text for s, text in totals} == {
            s: signed(n) for s, n in enumerate(results[-1]["match_totals"])
        }, lang
        caption = page.inner_text("#result-sheet .scoreboard-table caption")
        assert caption == words["scoreboard.title"], lang
        if lang == "en":
            for size in ("390x844", "1280x800"):
                resize(page, *SIZES[size])
                page.locator("#result-sheet .scoreboard").scroll_into_view_if_needed()
                screenshot(page, f"scoreboard-{size}.png")
            resize(page, *SIZES["390x844"])
        # The history shows the same board for the match.
        page.click("#result-sheet .sheet-actions .btn")  # "View table"
        page.click("#btn-history")
        page.wait_for_selector("#history-sheet .scoreboard-table tbody td")
        check_board(board_cells(page, "#history-sheet"), results, words)


def test_the_scoreboard_fits_a_phone(live: Live, new_page: Callable[..., Any]) -> None:
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=DEALS)
    page = new_page(width=SIZES["360x740"][0], height=SIZES["360x740"][1])
    page.goto(live.seat_url(seat))
    wait_joined(page)
    play_to_scoreboard(page)
    for size in ("360x740", "844x390"):
        resize(page, *SIZES[size])
        wide = page.evaluate(
            "() => { const s = document.querySelector('#result-sheet .scoreboard');"
            " return s.scrollWidth - s.clientWidth; }"
        )
        assert wide <= 1, f"{size}: the scoreboard scrolls sideways by {wide}px"


# Two deals as the server sends them: a bomb paid in the first, seat 2 shut out in the second.
RESULTS = [
    {"deal_no": 1, "winner": 0, "cards_left": [0, 3, 5], "shut_out": [False, False, False],
     "bomb_points": [20, -10, -10], "card_points": [8, -3, -5], "deal_totals": [28, -13, -15],
     "match_totals": [28, -13, -15]},
    {"deal_no": 2, "winner": 1, "cards_left": [4, 0, 16], "shut_out": [False, False, True],
     "bomb_points": [0, 0, 0], "card_points": [-4, 36, -32], "deal_totals": [-4, 36, -32],
     "match_totals": [24, 23, -47]},
]  # fmt: skip


@pytest.mark.parametrize("lang", LANGUAGES)
def test_bombs_and_shut_outs_of_known_results_are_marked_in_their_cells(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=SEED, bot_speed_ms=0, deals=1)
    page = new_page(locale=LOCALES[lang])
    page.goto(live.seat_url(seat))
    wait_joined(page)
    page.evaluate(
        """async (results) => {
          const { scoreboard } = await import('/js/scoreboard.js');
          const box = document.createElement('div');
          box.id = 'board-probe';
          box.append(scoreboard(results, { nameOf: (s) => `S${s}`, me: 0 }));
          document.body.append(box);
        }""",
        RESULTS,
    )
    cells = board_cells(page, "#board-probe")
    check_board(cells, RESULTS, strings(lang))
    marked = {(c["deal"], c["seat"]) for c in cells if c["bomb"] or c["shut"]}
    assert marked == {(1, 0), (1, 1), (1, 2), (2, 2)}
