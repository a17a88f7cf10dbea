"""The browser's part of provably fair shuffles (client/js/entropy.js): once a deal is over
it answers the server's commitment to the next deal with its own random seed, which the
next deal then mixes; and a table it opens has its first deal shuffled with the seed it
sends right after its join (a real server and Redis, a real Chromium)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
import redis
from client_helpers import (
    Live,
    open_seat_page,
    play_to_result,
    state,
    wait_joined,
)

pytestmark = pytest.mark.browser


def test_the_browser_answers_each_upcoming_commitment_with_a_seed_the_next_deal_mixes(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = open_seat_page(live, new_page, seed=7, bot_speed_ms=0, deals=5)
    end = play_to_result(page)
    seat = end["view"]["seat"]
    page.wait_for_function(
        f"() => {{ const n = pdk.state().table.fairness.next; return n && n.received[{seat}]; }}"
    )
    assert state(page)["table"]["fairness"]["next"]["deal_no"] == 2
    page.wait_for_selector("#result-sheet[open]")
    page.click("#btn-next-deal")
    page.wait_for_function("() => pdk.state().view.deal_no === 2")
    # The shared server's own Redis database (tests/conftest.py), not the test's.
    assert live.process.redis_url is not None
    client = redis.Redis.from_url(live.process.redis_url)
    try:
        table = state(page)["table"]["id"]
        log = [json.loads(x) for x in client.lrange(f"pdk:{{{table}}}:log", 0, -1)]
    finally:
        client.close()
    (dealt,) = [e for e in log if e["type"] == "next_deal"]
    assert re.fullmatch("[0-9a-f]{32}", dealt["entropy"][seat]), dealt
    assert [s for i, s in enumerate(dealt["entropy"]) if i != seat] == ["", ""]


def test_a_table_the_browser_opens_is_first_dealt_with_the_seed_it_sends_after_joining(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = new_page(record_sent=True)
    page.goto(live.url + "/")
    joined = wait_joined(page)
    sent = page.evaluate("() => window.sentFrames.filter(f => f.type !== 'ping')")
    # The seed went right after the join, answering the first deal's commitment.
    assert [f["type"] for f in sent[:2]] == ["join", "entropy"], sent
    assert sent[1]["commitment"] == joined["table"]["fairness"]["commitments"][0]
    assert live.process.redis_url is not None
    client = redis.Redis.from_url(live.process.redis_url)
    try:
        raw = client.get(f"pdk:{{{joined['table']['id']}}}:meta")
    finally:
        client.close()
    assert isinstance(raw, bytes)
    meta = json.loads(raw)
    seat = joined["view"]["seat"]
    assert meta["first_entropy"][seat] == sent[1]["seed"]
    assert re.fullmatch("[0-9a-f]{32}", sent[1]["seed"])
