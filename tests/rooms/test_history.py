"""History for replays: finished deals only, rebuilt from the log alone."""

from __future__ import annotations

import random

import msgspec
import pytest

from server import engine
from server.engine import NextDeal, Pass
from server.rooms.history import (
    MAX_HISTORY_PAGES,
    History,
    HistoryCache,
    PageOutOfRange,
    history,
)
from server.rooms.log import BotSpeed, LogEntry, NewMatch, TableMeta, match_seed, rebuild
from server.rooms.tables import CreateTableRequest, build_table
from tests.engine.playout import random_action


def table(deals: int) -> TableMeta:
    meta, _ = build_table(msgspec.convert({"seed": 5, "deals": deals}, CreateTableRequest))
    return meta


def played_log(meta: TableMeta, matches: int, rng: random.Random) -> list[LogEntry]:
    """Whole matches at random, with a bot-speed entry as older logs hold."""
    entries: list[LogEntry] = [BotSpeed(ms=0, seat=0)]
    for match_no in range(matches):
        if match_no:
            entries.append(NewMatch())
        state = engine.new_match(
            meta.rules, match_seed(meta.seed, match_no, meta.secret), meta.deals
        )
        while state.winners is None:
            action = random_action(state, rng)
            engine.apply(state, action)
            entries.append(action)
    return entries


def test_every_finished_deal_is_kept_with_its_hands_moves_and_result() -> None:
    meta = table(deals=5)
    entries = played_log(meta, matches=2, rng=random.Random(1))
    found = history(meta, entries)
    assert [(d.match_no, d.deal_no) for d in found.deals] == [
        (m, d) for m in range(2) for d in range(1, 6)
    ]
    for deal in found.deals:
        assert sorted(len(h) for h in deal.hands) == [16, 16, 16]
        # The moves replay from the dealt hands to exactly the recorded result.
        held = [list(h) for h in deal.hands]
        for move in deal.moves:
            for card in move.cards:
                held[move.seat].remove(card)
        assert [len(h) for h in held] == list(deal.result.cards_left)


def test_a_deal_still_being_played_is_never_in_the_history() -> None:
    meta = table(deals=5)
    entries = played_log(meta, matches=1, rng=random.Random(2))
    # Cut the log in the middle of the second deal.
    second = next(i for i, e in enumerate(entries) if isinstance(e, NextDeal))
    found = history(meta, entries[: second + 5])
    assert [(d.match_no, d.deal_no) for d in found.deals] == [(0, 1)]
    assert history(meta, entries[:second]).deals == found.deals


def test_pages_hold_the_newest_deals_first_and_reach_back_a_bounded_way() -> None:
    meta = table(deals=5)
    # 25 deals; pages of 2 reach back 2 * MAX_HISTORY_PAGES = 20 of them.
    entries = played_log(meta, matches=5, rng=random.Random(3))
    newest = history(meta, entries, page_deals=2)
    assert (newest.page, newest.pages) == (0, MAX_HISTORY_PAGES)
    assert [(d.match_no, d.deal_no) for d in newest.deals] == [(4, 4), (4, 5)]
    before = history(meta, entries, page=1, page_deals=2)
    assert [(d.match_no, d.deal_no) for d in before.deals] == [(4, 2), (4, 3)]
    oldest = history(meta, entries, page=MAX_HISTORY_PAGES - 1, page_deals=2)
    assert [(d.match_no, d.deal_no) for d in oldest.deals] == [(1, 1), (1, 2)]
    with pytest.raises(PageOutOfRange, match=r"page must be 0\.\.9"):
        history(meta, entries, page=MAX_HISTORY_PAGES, page_deals=2)
    with pytest.raises(PageOutOfRange):
        history(meta, entries, page=-1, page_deals=2)


def test_a_table_without_a_finished_deal_has_one_empty_page() -> None:
    meta = table(deals=5)
    found = history(meta, played_log(meta, matches=1, rng=random.Random(4))[:3])
    assert (found.deals, found.page, found.pages) == ([], 0, 1)


def decoded(answer: bytes) -> History:
    return msgspec.json.decode(answer, type=History)


async def test_the_cache_answers_as_a_fresh_replay_reading_only_new_entries() -> None:
    meta = table(deals=5)
    entries = played_log(meta, matches=3, rng=random.Random(5))
    cache = HistoryCache(max_deals=1000, page_deals=4)
    cuts = sorted({1, 7, len(entries) // 3, len(entries) // 2, len(entries) - 1, len(entries)})
    for cut in cuts:
        found = decoded(await cache.answer(meta, entries[:cut], page=0))
        assert found == history(meta, entries[:cut], page_deals=4)
        assert cache.versions() == {meta.id: cut}
    # An older page comes from the same replay.
    assert decoded(await cache.answer(meta, entries, page=2)) == history(
        meta, entries, page=2, page_deals=4
    )


async def test_a_table_recreated_under_the_same_id_is_replayed_afresh() -> None:
    meta = table(deals=5)
    entries = played_log(meta, matches=1, rng=random.Random(6))
    cache = HistoryCache()
    await cache.answer(meta, entries[:5], page=0)
    other = msgspec.structs.replace(meta, seed=meta.seed + 1)
    others = played_log(other, matches=1, rng=random.Random(7))
    assert decoded(await cache.answer(other, others, page=0)) == history(other, others)


async def test_the_cache_holds_a_bounded_number_of_deals_least_recent_first_out() -> None:
    cache = HistoryCache(max_deals=25, page_deals=100)
    metas = [msgspec.structs.replace(table(deals=10), id=f"t{n}") for n in range(3)]
    logs = [played_log(m, matches=1, rng=random.Random(n)) for n, m in enumerate(metas)]
    await cache.answer(metas[0], logs[0], page=0)
    await cache.answer(metas[1], logs[1], page=0)
    assert (len(cache), cache.deals) == (2, 22)
    await cache.answer(metas[0], logs[0], page=0)
    await cache.answer(metas[2], logs[2], page=0)
    # Each holds ten deals and its match: the least recently asked for (t1) went.
    assert list(cache.versions()) == ["t0", "t2"]
    assert cache.deals == 22 <= cache.max_deals
    nothing = HistoryCache(max_deals=0)
    assert decoded(await nothing.answer(metas[0], logs[0], page=0)).deals
    assert (len(nothing), nothing.deals) == (0, 0)


async def test_a_log_that_does_not_replay_is_refused_and_not_kept() -> None:
    meta = table(deals=5)
    entries = played_log(meta, matches=1, rng=random.Random(8))[:10]
    cache = HistoryCache()
    await cache.answer(meta, entries, page=0)
    turn = rebuild(meta, entries).match.deal.turn
    with pytest.raises(engine.EngineError):
        await cache.answer(meta, [*entries, Pass(seat=(turn + 1) % 3)], page=0)
    assert (len(cache), cache.deals) == (0, 0)
