"""The browser's deltas (client/js/deltas.js) against the server's: the same pictures,
the same canonical JSON and digests, and a real page that plays on deltas alone."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    RECORD_SENT_JS,
    Live,
    state,
    take_turn_with_hint_or_pass,
    wait_joined,
    wait_my_turn_or_result,
)

from server import bots, engine, presenter
from server.deltas import canonical, digest, wire
from server.engine.cards import RANKS
from server.fairness import Reveal
from server.rooms.log import SeatMeta, TableMeta
from server.rooms.updates import StateUpdate, TableSnapshot, WatchUpdate

pytestmark = pytest.mark.browser

# Names a person could choose (any text the name rules let through), and then some.
AWKWARD = ["Zoë", "跑得快", "😀 x", 'q"uote\\back/slash', "tab\there", "\u2028", "\x7f", "<&>"]


def frames_of_a_match(preset: str, seed: int) -> list[tuple[list[str], list[dict[str, Any]]]]:
    """For each seat and a spectator (taking deltas), what the server sends over a whole
    match, and the whole frame each one stands for."""
    seats = [SeatMeta(seat=s, kind="human", name=AWKWARD[s], token_hash="x" * 64) for s in range(3)]
    meta = TableMeta(
        id="Table0001",
        rules=engine.PRESETS[preset],
        seed=seed,
        deals=5,
        seats=seats,
        bot_speed_ms=0,
        created_at=0.0,
    )
    feeds: dict[int | str, presenter.Feed] = {
        s: presenter.Feed(deltas=True) for s in (0, 1, 2, "watch")
    }
    sent: dict[int | str, list[str]] = {s: [] for s in feeds}
    whole: dict[int | str, list[dict[str, Any]]] = {s: [] for s in feeds}
    state = engine.new_match(engine.PRESETS[preset], seed, 5)
    events: list[Any] = []
    version = 0
    while True:
        over = state.winners is not None
        snapshot = TableSnapshot(
            meta=meta,
            connected=(True, version % 2 == 0, True),
            bot_speed_ms=0,
            match_no=0,
            reveal=Reveal(seed=2**63 - 25, salt="ab") if over else None,
            now=float(version),
        )
        for seat, feed in feeds.items():
            update: StateUpdate | WatchUpdate
            if isinstance(seat, str):
                update = WatchUpdate(version, snapshot, engine.public_view(state), events)
            else:
                update = StateUpdate(version, snapshot, engine.seat_view(state, seat), events)
            text = presenter.frame(update, feed)
            if text is not None:
                sent[seat].append(text)
                whole[seat].append(json.loads(presenter.full_frame(update)))
        if over:
            break
        if state.deal.result is not None:
            events = engine.apply(state, engine.NextDeal())
        else:
            view = engine.seat_view(state, state.deal.turn, hints=engine.BOT_HINTS)
            events = engine.apply(state, bots.decide_now("normal", version, view))
        version += 1
    return [(sent[s], whole[s]) for s in feeds]


REBUILD_JS = """async ([streams]) => {
  const { Mirror } = await import("/js/deltas.js");
  return streams.map((texts) => {
    const mirror = new Mirror();
    return texts.map((text) => mirror.take(JSON.parse(text)));
  });
}"""


@pytest.mark.parametrize("preset", sorted(engine.PRESETS))
def test_the_browser_rebuilds_every_frame_of_a_match_from_the_servers_deltas(
    live: Live, new_page: Callable[..., Any], preset: str
) -> None:
    page = new_page()
    page.goto(live.url + "/healthz")
    streams = frames_of_a_match(preset, seed=11)
    rebuilt = page.evaluate(REBUILD_JS, [[texts for texts, _ in streams]])
    for (texts, wholes), mine in zip(streams, rebuilt, strict=True):
        assert sum('"type":"d"' in t for t in texts) > 40
        # A JavaScript number cannot hold the revealed seed: the page reads it as the
        # nearest one it can, from a delta as from a whole frame.
        seeds = [f["table"]["fairness"].pop("seed") for f in [*mine, *wholes]]
        assert {float(s) for s in seeds if s is not None} == {float(2**63 - 25)}
        assert mine == wholes


def test_the_browser_reads_the_wire_form_by_the_servers_own_tables(
    live: Live, new_page: Callable[..., Any]
) -> None:
    page = new_page()
    page.goto(live.url + "/healthz")
    tables = page.evaluate('async () => (await import("/js/deltas.js")).WIRE')
    assert tables == {
        "PUBLIC_FIELDS": list(wire.PUBLIC_FIELDS),
        "RULES_FIELDS": list(wire.RULES_FIELDS),
        "RESULT_FIELDS": list(wire.RESULT_FIELDS),
        "EVENT_FIELDS": {tag: list(names) for tag, names in wire.EVENT_FIELDS.items()},
        "PASS_CODES": list(wire.PASS_CODES),
        "RANKS": RANKS,
    }


CANONICAL_JS = """async ([values]) => {
  const { canonical, digest } = await import("/js/deltas.js");
  return values.map((text) => { const v = JSON.parse(text); return [canonical(v), digest(v)]; });
}"""


def test_canonical_json_and_its_digest_are_the_same_in_the_browser_as_on_the_server(
    live: Live, new_page: Callable[..., Any]
) -> None:
    values: list[Any] = [
        {"b": 1, "a": [True, False, None], "": "", "~/": {"x": -0}},
        {"names": AWKWARD, "ctrl": "".join(chr(i) for i in range(32))},
        {"seed": 2**63 - 1, "small": 2**53 - 1, "neg": -(2**53) + 1, "big": -(2**60)},
        {"é": 1, "e": 2, "z": 3, "Z": 4, "😀": 5, "\uffff": 6},
        [],
        "just a string",
    ]
    page = new_page()
    page.goto(live.url + "/healthz")
    texts = [json.dumps(v, ensure_ascii=False) for v in values]
    answers = page.evaluate(CANONICAL_JS, [texts])
    for value, (text, crc) in zip(values, answers, strict=True):
        assert text.encode() == canonical(value)
        assert crc == digest(value)


def test_a_page_plays_a_whole_deal_on_deltas_and_never_needs_a_resync(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat, *_) = live.create_table(seed=20240607, bot_speed_ms=0)
    page = new_page()
    page.add_init_script(RECORD_SENT_JS)
    received: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda text: received.append(text)))
    page.goto(live.seat_url(seat))
    wait_joined(page)
    while wait_my_turn_or_result(page)["view"]["result"] is None:
        take_turn_with_hint_or_pass(page)
    sent = page.evaluate("window.sentFrames")
    assert sent[0]["type"] == "join"
    assert sent[0]["deltas"] is True
    assert [f for f in sent if f.get("type") == "resync"] == []
    kinds = [json.loads(f)["type"] for f in received if f.startswith("{")]
    # One whole picture (the join's), then deltas: a new deal's delta is short enough.
    assert kinds.count("p") == 1
    assert "state" not in kinds
    assert kinds.count("d") > 10
    assert state(page)["view"]["result"] is not None
