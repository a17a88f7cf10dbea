"""Issue 28, "Verify this match": the browser checks the shuffle commitments with the frames
it received, as ``python -m server.verify`` does with a saved record.

- The page's shuffle (client/js/shuffle.js, a port of CPython's ``random`` as the engine
  uses it) deals the same hands as ``server.engine.deal_hands`` for many seeds, deal
  numbers, client seeds and both decks.
- A whole match played in the page (on a table with a secret, so its revealed seed is a
  63-bit integer no JavaScript number holds) shows "verified" for every deal in the
  result sheet and in the history, in every language, and fits at the four sizes.
- A frame rewritten on its way into the page (an init script wraps the socket's message
  listeners: the server and our code are untouched) makes the page name the check that
  failed: a changed salt fails the commitment alone, a changed seed the commitment and
  the cards.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    SIZES,
    Live,
    play_match_on_auto,
    resize,
    screenshot,
    store_language,
    strings,
    wait_joined,
)

from server.engine.cards import card_code, deal_hands

pytestmark = pytest.mark.browser

DEALS = 5


def python_hands(ace: str, seed: int, deal_no: int, entropy: list[str]) -> list[list[str]]:
    return [sorted(card_code(c) for c in hand) for hand in deal_hands(ace, seed, deal_no, entropy)]


def test_the_page_deals_the_same_hands_as_the_engine_for_many_seeds(
    live: Live, new_page: Callable[..., Any]
) -> None:
    rng = random.Random(28)
    cases: list[tuple[str, int, int, list[str]]] = []
    for i in range(300):
        seed = rng.choice([rng.randrange(2**16), rng.randrange(2**63), 2**63 - 1 - i, i])
        entropy: list[str] = []
        if i % 3:
            entropy = [rng.choice(["", f"{rng.getrandbits(128):032x}"]) for _ in range(3)]
        if i % 7 == 0:
            entropy = ["", "", f"s:{rng.getrandbits(128):032x}"]
        cases.append((rng.choice(["AS", "AC"]), seed, 1 + i % 10, entropy))
    page = new_page()
    page.goto(f"{live.url}/rules/en.html")
    got = page.evaluate(
        """async (cases) => {
          const m = await import('/js/shuffle.js');
          const out = [];
          for (const [ace, seed, dealNo, mixed] of cases) {
            out.push(await m.dealHands(ace, seed, dealNo, mixed));
          }
          return out;
        }""",
        [[ace, str(seed), deal_no, entropy] for ace, seed, deal_no, entropy in cases],
    )
    expected = [python_hands(*case) for case in cases]
    wrong = [case for case, a, b in zip(cases, got, expected, strict=True) if a != b]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, first {wrong[0]}"


def verify_rows(page: Any, root: str) -> list[dict[str, Any]]:
    page.wait_for_selector(f"{root} .verify-row")
    rows: list[dict[str, Any]] = page.eval_on_selector_all(
        f"{root} .verify-row",
        """rows => rows.map(r => ({ deal: Number(r.dataset.deal),
            failed: r.dataset.failed ? r.dataset.failed.split(' ') : [], text: r.textContent }))""",
    )
    return rows


def test_a_whole_match_is_verified_deal_by_deal_in_the_result_and_the_history(
    live: Live, new_page: Callable[..., Any]
) -> None:
    # No chosen seed: the match's seed comes from the table's secret, a 63-bit integer.
    # The match is played once, in English; a load at its end shows the same result sheet,
    # so the page is loaded again in each other language (a reload costs a tenth of a new
    # page and a match).
    (seat,) = live.create_table(bot_speed_ms=0, deals=DEALS)
    page = new_page()
    page.goto(live.seat_url(seat))
    wait_joined(page)
    play_match_on_auto(page, DEALS)
    for lang in LANGUAGES:
        if lang != LANGUAGES[0]:  # the first is checked as the match ended, unloaded
            store_language(page, lang)
            page.reload()
            wait_joined(page)
        page.wait_for_selector(f'html[lang="{lang}"] #result-sheet[open]')
        rows = verify_rows(page, "#result-sheet")
        words = strings(lang)
        assert [r["deal"] for r in rows] == list(range(1, DEALS + 1)), lang
        for row in rows:
            assert row["failed"] == [], row
            assert words["verify.ok"] in row["text"], lang
        seed = page.evaluate("pdk.state().table.fairness.seed")
        assert seed > 2**53, "the revealed seed must be one a JavaScript number cannot hold"
        summary = page.text_content("#result-sheet .verify-summary")
        assert summary == words["verify.summaryOk"], lang
        # Our browser's seed for deal 2 was mixed, and the check knew it had sent it.
        sent = page.evaluate(
            "(t) => JSON.parse(localStorage.getItem('pdk.fairness')).find(r => r.table === t)"
            ".deals[2].sent",
            seat.table,
        )
        assert re.fullmatch(r"[0-9a-f]{32}", sent or "")
        if lang == "en":
            for name, (width, height) in SIZES.items():
                resize(page, width, height)
                page.locator("#result-sheet .verify").scroll_into_view_if_needed()
                # Every line inside the viewport, wrapped rather than cut or scrolled sideways.
                outside = page.eval_on_selector_all(
                    "#result-sheet .verify, #result-sheet .verify-row",
                    "els => els.filter(e => { const b = e.getBoundingClientRect();"
                    " return b.left < 0 || b.right > innerWidth"
                    " || e.scrollWidth > e.clientWidth + 1; }).map(e => e.className)",
                )
                assert outside == [], name
                if name in ("390x844", "1280x800"):
                    screenshot(page, f"verify-match-{name}.png")
            resize(page, *SIZES["390x844"])
        # The history shows the same check under the match's scoreboard.
        page.keyboard.press("Escape")
        page.click("#btn-history")
        history = verify_rows(page, "#history-sheet .history-board")
        assert [(r["deal"], r["failed"]) for r in history] == [(r["deal"], []) for r in rows]


# Rewrites each frame the server sends before the page's own listeners see it: the
# browser's WebSocket, observed and altered from outside our code.
TAMPER_JS = """((rules) => {
  const add = WebSocket.prototype.addEventListener;
  WebSocket.prototype.addEventListener = function (type, listener, options) {
    if (type !== 'message') return add.call(this, type, listener, options);
    return add.call(this, type, (ev) => {
      let data = ev.data;
      for (const [pattern, how] of rules) data = data.replace(new RegExp(pattern, 'g'), (...m) => {
        if (how === 'salt') return m[1] + '"' + (m[2][0] === 'a' ? 'b' : 'a') + m[2].slice(1) + '"';
        // seed: one more, in decimal digits (the last digit is never 9 twice in a row here)
        const d = m[2]; const last = Number(d.at(-1));
        return m[1] + d.slice(0, -1) + String((last + 1) % 10);
      });
      listener.call(this, new MessageEvent('message', { data }));
    }, options);
  };
})"""

TAMPERS = {
    # The salt the match reveals: every commitment then names another seed, the cards stay.
    "salt": (r'("salt":|"fairness/salt",)"([0-9a-f]{32})"', ["commitment_mismatch"]),
    # The revealed seed itself: neither the commitments nor the cards are its.
    "seed": (r'("seed":|"fairness/seed",)(\d{12,})', ["commitment_mismatch", "hand_mismatch"]),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_a_rewritten_frame_makes_the_page_name_the_failed_check(
    tamper: str, live: Live, new_page: Callable[..., Any]
) -> None:
    pattern, failed = TAMPERS[tamper]
    (seat,) = live.create_table(bot_speed_ms=0, deals=DEALS)
    page = new_page()
    page.context.add_init_script(f"({TAMPER_JS})({json.dumps([[pattern, tamper]])})")
    page.goto(live.seat_url(seat))
    wait_joined(page)
    play_match_on_auto(page, DEALS)
    page.wait_for_selector("#result-sheet[open]")
    rows = verify_rows(page, "#result-sheet")
    assert [(r["deal"], r["failed"]) for r in rows] == [(d, failed) for d in range(1, DEALS + 1)]
    words = strings("en")
    assert page.text_content("#result-sheet .verify-summary") == words["verify.summaryBad"]
    assert words[f"verify.{failed[0]}"] in rows[0]["text"]
