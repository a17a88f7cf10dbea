"""Match history and replays: rebuilt by the server from the stored log, shown only to the
table's seats, step by step with every hand, and still there after a server restart."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    SIZES,
    Live,
    play_to_result,
    screenshot,
    store_language,
    strings,
    wait_joined,
)

pytestmark = pytest.mark.browser

FITS_JS = """() => {
  const sheet = document.querySelector('#history-sheet').getBoundingClientRect();
  const body = document.querySelector('#history-sheet .sheet-body');
  return sheet.left >= 0 && sheet.top >= 0 && sheet.right <= innerWidth
    && sheet.bottom <= innerHeight && body.scrollWidth <= body.clientWidth + 1;
}"""


def get_history(live: Live, table: str, token: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    request = urllib.request.Request(f"{live.url}/api/tables/{table}/history", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_history_answers_only_a_seat_of_the_table(live: Live) -> None:
    (seat,) = live.create_table(seed=7, bot_speed_ms=5000)
    status, body = get_history(live, seat.table, seat.token)
    assert status == 200
    assert body["deals"] == []  # the deal in progress is never in it
    assert get_history(live, seat.table, None)[0] == 401
    assert get_history(live, seat.table, "not-a-token")[0] == 401
    (other,) = live.create_table(seed=8)
    assert get_history(live, seat.table, other.token)[0] == 401
    assert get_history(live, "tNoSuchTable00", seat.token)[0] == 404


def test_a_finished_deal_replays_move_by_move_and_its_link_works_after_a_restart(
    own_live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = own_live.create_table(seed=7, bot_speed_ms=0, deals=5)
    page = new_page()
    page.goto(own_live.seat_url(seat))
    dealt = sorted(wait_joined(page)["view"]["hand"])
    moves = len(play_to_result(page)["view"]["moves"])
    page.wait_for_selector("#result-sheet[open]")
    page.keyboard.press("Escape")

    page.click("#btn-history")
    page.wait_for_selector("#history-sheet .history-row")
    assert page.locator("#history-sheet .history-row").count() == 1
    page.click("#history-sheet .btn-replay")
    page.wait_for_selector(".replay-seat")
    en = strings("en")
    assert page.inner_text(".replay-step").startswith(en["history.step"].format(n=0, of=moves))
    # Every hand is shown as dealt: ours is the one we were given.
    assert page.locator(".replay-hand .card").count() == 48
    ours = page.eval_on_selector_all(
        '.replay-seat[data-seat="0"] .card', "cs => cs.map(c => c.dataset.code)"
    )
    assert sorted(ours) == dealt
    page.click("#btn-replay-next")
    assert page.inner_text(".replay-step").startswith(en["history.step"].format(n=1, of=moves))
    page.click("#btn-replay-end")
    assert page.locator(".replay-result").is_visible()
    screenshot(page, "replay-portrait.png")
    page.click("#btn-replay-link")
    link = page.input_value(".replay-link")
    assert "#replay=" in link

    own_live.process.kill()
    own_live.process.start()
    page.goto(link)
    wait_joined(page)
    page.wait_for_selector(".replay-step")
    assert page.inner_text(".replay-step").startswith(en["history.step"].format(n=0, of=moves))
    assert "#replay" not in page.url

    # Someone who does not sit at the table is told so, and sees no hand.
    stranger = new_page()
    stranger.goto(link)
    wait_joined(stranger)
    stranger.wait_for_selector(f"#toast:text-is('{en['history.notSeated']}')")
    assert stranger.locator(".replay-hand .card").count() == 0

    for lang in LANGUAGES:
        store_language(page, lang)
        page.goto("about:blank")  # a fresh load, not just a hash change
        page.goto(link)
        wait_joined(page)
        page.wait_for_selector(".replay-step")
        table = strings(lang)
        assert page.inner_text("#history-title") == table["history.deal"].format(m=1, n=1)
        for size, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            assert page.evaluate(FITS_JS), f"{lang} {size}: the replay does not fit"
        page.click("#history-sheet .btn-back")
        assert page.inner_text("#history-sheet .btn-replay") == table["history.replay"]
        for size, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            assert page.evaluate(FITS_JS), f"{lang} {size}: the history list does not fit"
        page.set_viewport_size({"width": 390, "height": 844})
