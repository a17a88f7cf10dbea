"""Rebuilding a table from its meta and log alone."""

from __future__ import annotations

import msgspec
import pytest

from server import engine
from server.engine import NextDeal, Pass, Play
from server.rooms.log import (
    BotSpeed,
    LogEntry,
    NewMatch,
    Replay,
    TableMeta,
    bot_seed,
    match_seed,
    rebuild,
)
from server.rooms.tables import CreateTableRequest, build_table


def seeded(seed: int, secret: str = "") -> TableMeta:
    """A table's meta with ``seed`` and ``secret`` (the rest as created)."""
    meta, _ = build_table(CreateTableRequest(seed=1))
    return msgspec.structs.replace(meta, seed=seed, secret=secret)


def play_out(state: engine.MatchState) -> list[LogEntry]:
    """Play the current deal to its end with each seat's first hint, returning the actions."""
    actions: list[LogEntry] = []
    while state.deal.result is None:
        seat = state.deal.turn
        view = engine.seat_view(state, seat)
        action: Play | Pass = (
            Play(seat=seat, cards=view.hints[0]) if view.hints else Pass(seat=seat)
        )
        engine.apply(state, action)
        actions.append(action)
    return actions


def test_rebuild_replays_the_log_to_the_same_state() -> None:
    meta, _ = build_table(CreateTableRequest(seed=11, deals=5))
    live = engine.new_match(meta.rules, meta.seed, meta.deals)
    entries = play_out(live)
    entries.append(NextDeal())
    engine.apply(live, NextDeal())
    rebuilt = rebuild(meta, entries)
    assert rebuilt.version == len(entries)
    assert rebuilt.match_no == 0
    assert rebuilt.match == live


def test_bot_speed_entries_change_speed_but_not_the_game() -> None:
    meta, _ = build_table(CreateTableRequest(seed=3, bot_speed_ms=800))
    first = engine.seat_view(engine.new_match(meta.rules, meta.seed), 0).turn
    entries: list[LogEntry] = [BotSpeed(ms=0, seat=0), BotSpeed(ms=1500, seat=0)]
    rebuilt = rebuild(meta, entries)
    assert rebuilt.bot_speed_ms == 1500
    assert rebuilt.version == 2
    assert rebuilt.match.deal.turn == first
    assert rebuild(meta, []).bot_speed_ms == 800


def test_new_match_starts_from_a_derived_seed_and_counts_matches() -> None:
    meta, _ = build_table(CreateTableRequest(seed=5))
    first = engine.new_match(meta.rules, meta.seed)
    entries = play_out(first)
    second_seed = match_seed(meta.seed, 1)
    second = engine.new_match(meta.rules, second_seed)
    more = play_out(second)[:3]
    rebuilt = rebuild(meta, [*entries, NewMatch(), *more])
    assert rebuilt.match_no == 1
    assert rebuilt.match.seed == second_seed != meta.seed
    assert rebuilt.match.log == more


def test_a_log_the_engine_refuses_does_not_rebuild() -> None:
    meta, _ = build_table(CreateTableRequest(seed=5))
    with pytest.raises(engine.EngineError):
        rebuild(meta, [NextDeal()])


def test_derived_seeds_are_stable_and_distinct() -> None:
    assert match_seed(42, 0) == 42
    assert match_seed(42, 1) == match_seed(42, 1)
    assert len({match_seed(42, k) for k in range(50)}) == 50
    table = seeded(42)
    assert bot_seed(table, 1, 10) == bot_seed(table, 1, 10)
    assert bot_seed(table, 1, 10) not in {bot_seed(table, 2, 10), bot_seed(table, 1, 11)}
    assert all(0 <= bot_seed(seeded(s), 1, 2) < 2**63 for s in range(20))


def test_a_bot_seed_comes_from_the_secret_not_the_public_seed_when_there_is_one() -> None:
    assert bot_seed(seeded(42, "sec"), 1, 10) == bot_seed(seeded(7, "sec"), 1, 10)
    assert bot_seed(seeded(42, "sec"), 1, 10) != bot_seed(seeded(42, "other"), 1, 10)


def test_derived_seeds_never_change_between_versions() -> None:
    # Stored tables replay their later matches from these: a server upgrade must
    # derive exactly the same numbers (these are what the derivation gave before).
    assert match_seed(5, 3) == 5124102383666822537
    assert match_seed(5, 2, "x") == 5699659983750272930
    assert bot_seed(seeded(5), 1, 9) == 2867719263264040393
    assert bot_seed(seeded(5, "sec"), 2, 9) == 4456515559226296815


def test_a_replay_read_after_every_entry_agrees_with_rebuilding_each_prefix() -> None:
    # The chaos bench audits a table this way, entry by entry; rebuild reads a whole log.
    meta, _ = build_table(CreateTableRequest(seed=7, deals=1, bot_speed_ms=300))
    first = engine.new_match(meta.rules, meta.seed, meta.deals)
    entries: list[LogEntry] = [BotSpeed(ms=900, seat=0), *play_out(first), NewMatch()]
    second = engine.new_match(meta.rules, match_seed(meta.seed, 1), meta.deals)
    entries += [*play_out(second)[:4], BotSpeed(ms=0, seat=1), NewMatch()]
    replay = Replay(meta)
    for version, entry in enumerate(entries, start=1):
        replay.feed(entry)
        assert replay.table() == rebuild(meta, entries[:version])
    assert (replay.match_no, replay.bot_speed_ms) == (2, 0)
    assert replay.turn_version == len(entries)


class Heard:
    """A watcher that writes down what it hears, hands copied as they were dealt."""

    def __init__(self) -> None:
        self.said: list[tuple[str, int, int, int]] = []

    def dealt(self, match_no: int, deal: engine.DealState) -> None:
        self.said.append(("dealt", match_no, deal.deal_no, sum(map(len, deal.hands))))

    def ended(self, match_no: int, deal: engine.DealState) -> None:
        self.said.append(("ended", match_no, deal.deal_no, len(deal.moves)))


def test_a_watched_replay_hears_every_deal_even_of_a_finished_match() -> None:
    meta, _ = build_table(CreateTableRequest(seed=7, deals=5))
    first = engine.new_match(meta.rules, meta.seed, meta.deals)
    entries: list[LogEntry] = [BotSpeed(ms=0, seat=0)]
    expected: list[tuple[str, int, int, int]] = []
    while True:
        expected.append(("dealt", 0, first.deal.deal_no, 48))
        moves = play_out(first)
        entries += moves
        expected.append(("ended", 0, first.deal.deal_no, len(moves)))
        if first.winners is not None:
            break
        entries.append(NextDeal())
        engine.apply(first, NextDeal())
    second = engine.new_match(meta.rules, match_seed(meta.seed, 1), meta.deals)
    entries += [NewMatch(), *play_out(second)[:5]]
    expected.append(("dealt", 1, 1, 48))
    heard = Heard()
    replay = Replay(meta, heard)
    for entry in entries:
        replay.feed(entry)
    assert heard.said == expected
    # Watching changes nothing the room reads.
    assert replay.table() == rebuild(meta, entries)
