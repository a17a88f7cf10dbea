"""History for replays: finished deals only, rebuilt from the log alone."""

from __future__ import annotations

import random

import msgspec

from server import engine
from server.engine import NextDeal
from server.rooms.history import MAX_HISTORY_DEALS, history
from server.rooms.log import BotSpeed, LogEntry, NewMatch, TableMeta, match_seed
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


def test_the_history_holds_at_most_the_newest_deals() -> None:
    meta = table(deals=10)
    entries = played_log(meta, matches=MAX_HISTORY_DEALS // 10 + 1, rng=random.Random(3))
    found = history(meta, entries)
    assert len(found.deals) == MAX_HISTORY_DEALS
    assert (found.deals[-1].match_no, found.deals[-1].deal_no) == (MAX_HISTORY_DEALS // 10, 10)
