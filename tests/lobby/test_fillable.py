"""Fillable quick-match tables (server.lobby.queue, server.lobby.fillable) on a real
Redis, time injected: a table started with bots gives its bot seats to later players
of its queue, each seat to exactly one player, across several "processes" (several
``Matchmaker``s on their own connections)."""

from __future__ import annotations

import asyncio
import random

import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from queue_helpers import DROP, TTL, WAIT, member, table_id

from server.lobby.fillable import FillableTables
from server.lobby.queue import Matchmaker, Place, given_key

# How long a given bot seat waits for its player's socket.
CLAIM = 60_000


def matchmaker(redis: aioredis.Redis, fill_max: int = 200, most: int = 10_000) -> Matchmaker:
    return Matchmaker(
        redis,
        wait_ms=WAIT,
        drop_ms=DROP,
        seat_ttl_ms=TTL,
        max_queued=most,
        fill_max=fill_max,
        fill_claim_ms=CLAIM,
    )


async def bot_table(
    redis: aioredis.Redis, mm: Matchmaker, who: str, queue: str = "classic:5", now: int = 0
) -> str:
    """``who`` waits alone past the wait and is seated with two bots: the table's id.
    Joined with filling off (else a lone player takes the bot seat of a table listed
    before), then paired by ``mm``, which lists the table."""
    await matchmaker(redis, fill_max=0).join(member(who), queue, table_id(), now_ms=now)
    made = table_id()
    place, group = await mm.poll(who, made, now_ms=now + WAIT)
    assert group is not None
    assert place is not None
    assert (place.table, place.seat) == (made, 0)
    return made


async def test_a_later_player_takes_the_bot_seats_of_a_table_started_with_bots(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    table = await bot_table(client, mm, "first")
    place, group, already = await mm.join(member("b"), "classic:5", table_id(), now_ms=WAIT + 1)
    assert (group, already) == (None, False)
    assert place == Place(None, table, 1, filled=True)
    place, _, _ = await mm.join(member("c"), "classic:5", table_id(), now_ms=WAIT + 2)
    assert place == Place(None, table, 2, filled=True)
    # No bot seat is left, and the next player queues.
    place, _, _ = await mm.join(member("d"), "classic:5", table_id(), now_ms=WAIT + 3)
    assert place is not None
    assert place.queue == "classic:5"
    # Each taker is where the script put them, and their seat's claim is theirs.
    polled, _ = await mm.poll("b", table_id(), now_ms=WAIT + 4)
    assert polled is not None
    assert (polled.table, polled.seat) == (table, 1)
    link = FillableTables(client)
    assert await link.claimed(table, 1, "hash-b") == "name b"
    assert await link.claimed(table, 1, "hash-c") is None
    assert await link.claimed(table, 2, "hash-c") == "name c"
    # Both seats claimed by their sockets: the next join finds the table has nothing
    # left to give or wait for, and it leaves the set.
    await mm.join(member("e"), "classic:5", table_id(), now_ms=WAIT + 5)
    assert await client.zcard("pdk:{mm}:fills") == 0
    assert await client.zcard("pdk:{mm}:fill:classic:5") == 0
    # A join repeated after a lost answer finds the claim's token.
    assert await mm.token_hash_of("c", Place(None, table, 2)) == "hash-c"
    assert await mm.token_hash_of("b", Place(None, table, 2)) is None


async def test_a_bot_seat_whose_player_never_came_is_offered_again_after_the_claim_time(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    table = await bot_table(client, mm, "first")
    given_at = WAIT + 1
    assert (await mm.join(member("b"), "classic:5", table_id(), now_ms=given_at))[0] == Place(
        None, table, 1, filled=True
    )
    assert (await mm.join(member("c"), "classic:5", table_id(), now_ms=given_at + 1))[0] == Place(
        None, table, 2, filled=True
    )
    # Within the claim time nobody else is given b's seat: d queues.
    place, _, _ = await mm.join(member("d"), "classic:5", table_id(), now_ms=given_at + CLAIM - 1)
    assert place is not None
    assert place.queue == "classic:5"
    await mm.leave("d")
    # b's socket never came: at the claim time the seat is offered again (c's, given a
    # millisecond later, still waits), and b is told they are nowhere.
    place, _, _ = await mm.join(member("e"), "classic:5", table_id(), now_ms=given_at + CLAIM)
    assert place == Place(None, table, 1, filled=True)
    assert (await mm.poll("b", table_id(), now_ms=given_at + CLAIM))[0] is None
    link = FillableTables(client)
    assert await link.claimed(table, 1, "hash-b") is None
    assert await link.claimed(table, 1, "hash-e") == "name e"
    assert await link.claimed(table, 2, "hash-c") == "name c"


async def test_a_claimed_bot_seat_is_never_offered_again(client: aioredis.Redis) -> None:
    mm = matchmaker(client)
    table = await bot_table(client, mm, "first")
    await mm.join(member("b"), "classic:5", table_id(), now_ms=WAIT + 1)
    assert await FillableTables(client).claimed(table, 1, "hash-b") == "name b"
    late = WAIT + 10 * CLAIM
    place, _, _ = await mm.join(member("c"), "classic:5", table_id(), now_ms=late)
    assert place == Place(None, table, 2, filled=True)
    place, _, _ = await mm.join(member("d"), "classic:5", table_id(), now_ms=late + 1)
    assert place is not None
    assert place.queue == "classic:5"
    assert (await mm.poll("b", table_id(), now_ms=late + 2))[0] == Place(None, table, 1)


async def test_a_player_is_never_given_a_bot_seat_at_a_table_they_sit_at(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    table = await bot_table(client, mm, "first")
    # The table's own player leaves quick match and presses it again: they queue.
    assert await mm.leave("first") == "table"
    place, _, _ = await mm.join(member("first"), "classic:5", table_id(), now_ms=WAIT + 1)
    assert place is not None
    assert place.queue == "classic:5"
    # So does a player given a bot seat there who comes back for another.
    place, _, _ = await mm.join(member("b"), "classic:5", table_id(), now_ms=WAIT + 2)
    assert place == Place(None, table, 1, filled=True)
    assert await mm.leave("b") == "table"
    place, _, _ = await mm.join(member("b"), "classic:5", table_id(), now_ms=WAIT + 3)
    assert place is not None
    assert place.queue == "classic:5"
    # Someone else still gets the last bot seat.
    place, _, _ = await mm.join(member("c"), "classic:5", table_id(), now_ms=WAIT + 4)
    assert place == Place(None, table, 2, filled=True)


async def test_only_players_of_the_same_preset_and_length_fill_a_table(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    await bot_table(client, mm, "first", "classic:5")
    for who, queue in (("x", "classic:1"), ("y", "kawu:5")):
        place, _, _ = await mm.join(member(who), queue, table_id(), now_ms=WAIT + 1)
        assert place is not None
        assert place.queue == queue


async def test_a_table_whose_match_ended_or_that_closed_takes_nobody(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    table = await bot_table(client, mm, "first")
    await FillableTables(client).unlist(table)
    assert await client.exists(f"pdk:{{mm}}:bots:{table}") == 0
    place, _, _ = await mm.join(member("b"), "classic:5", table_id(), now_ms=WAIT + 1)
    assert place is not None
    assert place.queue == "classic:5"
    assert await client.hlen("pdk:{mm}:fillq") == 0


async def test_an_expired_entry_is_skipped_and_forgotten(client: aioredis.Redis) -> None:
    mm = matchmaker(client)
    old = await bot_table(client, mm, "first")
    new = await bot_table(client, mm, "second", now=1)
    # The older table's bot seats expired (its key is what expiry removes).
    await client.delete(f"pdk:{{mm}}:bots:{old}")
    place, _, _ = await mm.join(member("b"), "classic:5", table_id(), now_ms=WAIT + 5)
    assert place == Place(None, new, 1, filled=True)
    assert await client.zrange("pdk:{mm}:fills", 0, -1) == [new.encode()]


async def test_the_fillable_set_holds_at_most_the_setting(client: aioredis.Redis) -> None:
    mm = matchmaker(client, fill_max=1)
    first = await bot_table(client, mm, "first")
    await bot_table(client, mm, "second", now=1)
    assert await client.zrange("pdk:{mm}:fills", 0, -1) == [first.encode()]
    # Once the listed one left, the next table started with bots is listed again.
    await FillableTables(client).unlist(first)
    third = await bot_table(client, mm, "third", now=2)
    assert await client.zrange("pdk:{mm}:fills", 0, -1) == [third.encode()]
    # 0 lists none.
    await client.delete("pdk:{mm}:fills")
    await bot_table(client, matchmaker(client, fill_max=0), "fourth", now=3)
    assert await client.zcard("pdk:{mm}:fills") == 0


# ------------------------------------------------------------ concurrency


async def crowd(url: str, seed: int, tables: int, players: int) -> None:
    """``tables`` bot tables, then ``players`` joins at once through three
    connections: every bot seat goes to one player, nobody is given two places."""
    clients = [aioredis.Redis.from_url(url) for _ in range(3)]
    await clients[0].flushdb()
    processes = [matchmaker(c) for c in clients]
    rng = random.Random(seed)
    try:
        made = [
            await bot_table(clients[n % 3], processes[n % 3], f"host{n}", "classic:5", now=n)
            for n in range(tables)
        ]
        names = [f"p{n}" for n in range(players)]
        joins = [
            processes[rng.randrange(3)].join(member(who), "classic:5", table_id(), now_ms=WAIT + 9)
            for who in names
        ]
        # A few join twice at once (a double click on two tabs): still one place.
        twice = rng.sample(names, min(5, players))
        joins += [
            processes[rng.randrange(3)].join(member(who), "classic:5", table_id(), now_ms=WAIT + 9)
            for who in twice
        ]
        answers = await asyncio.gather(*joins)
        seats: dict[tuple[str, int], str] = {}
        placed: dict[str, Place] = {}
        for who, (place, _, already) in zip(names + twice, answers, strict=True):
            assert place is not None
            if already:
                continue
            assert who not in placed, f"{who} was placed twice"
            placed[who] = place
            if place.filled:
                key = (str(place.table), int(place.seat or 0))
                assert key not in seats, f"seat {key} given to {seats.get(key)} and {who}"
                assert place.table in made
                assert place.seat in (1, 2)
                seats[key] = who
        assert len(seats) == min(players, 2 * tables)
        # Those not given a bot seat queued, and were seated three at a time.
        grouped = {
            m.player: f"t:{group.table}:{i}"
            for _, group, _ in answers
            if group is not None
            for i, m in enumerate(group.members)
        }
        assert not grouped.keys() & seats.values()
        # Every player is where Redis says, once.
        for who, place in placed.items():
            where = await clients[0].get(f"pdk:{{mm}}:where:{who}")
            expected = f"t:{place.table}:{place.seat}" if place.filled else f"q:{place.queue}"
            assert where == grouped.get(who, expected).encode()
        queued = await clients[0].zcard("pdk:{mm}:q:classic:5")
        assert queued == sum(1 for p in placed.values() if not p.filled) - len(grouped)
        # Every table stays listed: it offers bot seats or waits for given ones' sockets.
        assert await clients[0].zcard("pdk:{mm}:fills") == tables
        given = [await clients[0].zcard(given_key(t)) for t in made]
        assert sum(given) == len(seats)
        link = FillableTables(clients[0])
        for (table, seat), who in seats.items():
            assert await link.claimed(table, seat, f"hash-{who}") == f"name {who}"
        assert [await clients[0].zcard(given_key(t)) for t in made] == [0] * tables
    finally:
        for c in clients:
            await c.aclose()


def test_many_players_at_once_from_three_processes_each_get_one_seat_and_no_seat_twice(
    redis_url: str,
) -> None:
    asyncio.run(crowd(redis_url, seed=7, tables=40, players=120))


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(1, 8), st.integers(1, 24), st.integers(0, 2**16))
def test_over_any_crowd_no_seat_is_given_twice(
    redis_url: str, tables: int, players: int, seed: int
) -> None:
    asyncio.run(crowd(redis_url, seed, tables, players))
