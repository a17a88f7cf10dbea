"""Ratings, statistics and leaderboards (server.ratings.store) on a real Redis."""

from __future__ import annotations

import random

import redis.asyncio as aioredis

from server import engine
from server.players import PlayerStore
from server.ratings import MatchRecord, RatingStore, SeatLine, Track, record_of
from server.rooms.tables import CreateTableRequest, build_table
from tests.engine.playout import play_match

TTL = 3600


def ratings_of(client: aioredis.Redis, board_size: int = 100) -> RatingStore:
    return RatingStore(
        client,
        retention_seconds=TTL,
        player_ttl_seconds=TTL,
        board_size=board_size,
        table_ttl_seconds=TTL,
    )


def line(seat: int, points: int, *, human: bool = True, bombs: int = 0) -> SeatLine:
    return SeatLine(seat, human, f"hash{seat}", points, 1 if points > 0 else 0, 0, bombs)


async def seated_players(
    client: aioredis.Redis, store: RatingStore, table: str, humans: int = 3
) -> list[str]:
    players = PlayerStore(client, TTL)
    ids = []
    for seat in range(humans):
        player, _ = await players.create()
        await store.seat_player(table, seat, player.id, f"hash{seat}")
        ids.append(player.id)
    return ids


def table_id() -> str:
    return f"t{random.getrandbits(48):012x}"


async def test_a_finished_match_counts_statistics_and_ranks_the_winner_first(
    client: aioredis.Redis,
) -> None:
    store = ratings_of(client)
    table = table_id()
    a, b, c = await seated_players(client, store, table)
    record = MatchRecord(table, 0, "classic", 2, (line(0, 30, bombs=1), line(1, -10), line(2, -20)))
    await store.settle(record)
    profile = await store.profile(a)
    assert profile["stats"] == {
        "matches": 1, "deals": 2, "deals_won": 1, "shut_outs": 0, "bombs": 1,
        "average_points": 30.0,
    }  # fmt: skip
    assert [r["preset"] for r in profile["ratings"]] == ["classic"]
    assert profile["ratings"][0]["track"] == "people"
    assert profile["last"]["change"] > 0
    assert (await store.profile(c))["last"]["change"] < 0
    board = await store.leaderboard("classic", Track.PEOPLE, 10)
    assert [row.player for row in board] == [a, b, c]
    assert await store.leaderboard("classic", Track.BOTS, 10) == []


async def test_settling_the_same_match_again_counts_it_once(client: aioredis.Redis) -> None:
    store = ratings_of(client)
    table = table_id()
    a, _, _ = await seated_players(client, store, table)
    record = MatchRecord(table, 3, "classic", 1, (line(0, 10), line(1, -4), line(2, -6)))
    first = await store.settle(record)
    after_once = await store.profile(a)
    again = await store.settle(record)
    assert again == first
    assert await store.profile(a) == after_once
    assert after_once["stats"]["matches"] == 1


async def test_a_retry_after_a_partial_settle_applies_the_frozen_numbers_once_each(
    client: aioredis.Redis,
) -> None:
    store = ratings_of(client)
    table = table_id()
    a, b, _ = await seated_players(client, store, table)
    record = MatchRecord(table, 0, "classic", 1, (line(0, 10), line(1, -4), line(2, -6)))
    frozen = await store.freeze(record)
    # The first try died after the freeze and the first player's update.
    await store._apply_one(record, 0, frozen[0])
    # Meanwhile b's rating moved at another table: the retry must not recompute.
    other = table_id()
    await store.seat_player(other, 1, b, "hash1")
    await store.settle(MatchRecord(other, 0, "classic", 1, (line(0, 9), line(1, 9), line(2, 9))))
    assert await store.settle(record) == frozen
    profile = await store.profile(a)
    assert profile["stats"]["matches"] == 1
    assert profile["ratings"][0]["mu"] == round(frozen[0]["mu1"], 3)
    assert (await store.profile(b))["stats"]["matches"] == 2


async def test_a_player_on_two_seats_of_one_table_is_rated_on_neither(
    client: aioredis.Redis,
) -> None:
    store = ratings_of(client)
    table = table_id()
    a, b, _ = await seated_players(client, store, table)
    await store.seat_player(table, 1, a, "hash1")  # a holds seats 0 and 1
    record = MatchRecord(table, 0, "classic", 1, (line(0, 10), line(1, -4), line(2, -6)))
    result = await store.settle(record)
    assert sorted(result) == [2]
    assert (await store.profile(a))["stats"]["matches"] == 0
    assert (await store.profile(b))["stats"]["matches"] == 0
    assert [row.player for row in await store.leaderboard("classic", Track.PEOPLE, 10)] != [a]


async def test_a_seat_whose_token_changed_since_is_no_longer_the_players(
    client: aioredis.Redis,
) -> None:
    store = ratings_of(client)
    table = table_id()
    a, b, _ = await seated_players(client, store, table)
    moved = SeatLine(0, True, "a-new-invite", 10, 1, 0, 0)
    result = await store.settle(
        MatchRecord(table, 0, "classic", 1, (moved, line(1, 0), line(2, -10)))
    )
    assert 0 not in result
    assert (await store.profile(a))["stats"]["matches"] == 0
    assert (await store.profile(b))["stats"]["matches"] == 1


async def test_a_match_with_bots_is_rated_on_its_own_track(client: aioredis.Redis) -> None:
    store = ratings_of(client)
    table = table_id()
    (a,) = await seated_players(client, store, table, humans=1)
    bot = SeatLine(1, False, "", -5, 0, 0, 0)
    record = MatchRecord(
        table, 0, "sixteen", 1, (line(0, 20), bot, SeatLine(2, False, "", -15, 0, 0, 0))
    )
    await store.settle(record)
    assert [row.player for row in await store.leaderboard("sixteen", Track.BOTS, 10)] == [a]
    assert await store.leaderboard("sixteen", Track.PEOPLE, 10) == []


async def test_the_leaderboard_keeps_only_its_best_and_forgets_deleted_players(
    client: aioredis.Redis,
) -> None:
    store = ratings_of(client, board_size=10)
    players = PlayerStore(client, TTL)
    winners = []
    for _ in range(12):
        table = table_id()
        ids = await seated_players(client, store, table)
        winners.append(ids[0])
        await store.settle(MatchRecord(table, 0, "kawu", 1, (line(0, 9), line(1, -3), line(2, -6))))
    assert await client.zcard("pdk:{board}:kawu:people") == 10
    best = (await store.leaderboard("kawu", Track.PEOPLE, 100))[0]
    found = await players.find(best.player)
    assert found is not None
    await players.delete(found)
    assert best.player not in [r.player for r in await store.leaderboard("kawu", Track.PEOPLE, 100)]
    await store.forget(winners[-1])
    assert await client.zscore("pdk:{board}:kawu:people", winners[-1]) is None


def test_a_played_match_records_each_seats_deals_shut_outs_and_bombs() -> None:
    meta, _ = build_table(CreateTableRequest(humans=3))
    rng = random.Random(7)
    state: engine.MatchState | None = None
    for live, _ in play_match(meta.rules, 11, 5, rng):
        state = live  # one live object: after the loop, the match as it ended
    assert state is not None
    assert state.winners is not None
    record = record_of(meta, state, 0)
    assert record is not None
    assert [s.points for s in record.seats] == state.totals
    assert sum(s.deals_won for s in record.seats) == 5 == record.deals
    bombs = sum(
        1 for a in state.log if isinstance(a, engine.Play) and len(a.cards) == 4
        and len({c[0] for c in a.cards}) == 1
    )  # fmt: skip
    assert sum(s.bombs for s in record.seats) == bombs
    shut = sum(1 for r in state.results if any(r.shut_out))
    assert sum(s.shut_outs for s in record.seats) == shut
    assert record.human_only
