"""Quick-match pairing (server.lobby.queue) on a real Redis, time injected.

Several ``Matchmaker``s on their own connections stand for several processes: all
they share is Redis, as processes do.
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from queue_helpers import DROP, TTL, WAIT, member, table_id

from server.lobby.queue import Group, Matchmaker, queue_name


def matchmaker(redis: aioredis.Redis, most: int = 1000) -> Matchmaker:
    return Matchmaker(redis, wait_ms=WAIT, drop_ms=DROP, seat_ttl_ms=TTL, max_queued=most)


def test_queues_are_per_preset_and_match_length_and_refuse_others() -> None:
    assert queue_name("classic", 5) == "classic:5"
    for rules, deals in (("poker", 1), ("classic", 7), ("classic:1", 1)):
        with pytest.raises(ValueError, match="must be one of"):
            queue_name(rules, deals)


async def test_three_players_are_seated_together_the_moment_the_third_joins(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    q = queue_name("classic", 1)
    a, group, _ = await mm.join(member("a"), q, table_id(), now_ms=1000)
    assert group is None
    assert a is not None
    assert a.queue == q
    _, group, _ = await mm.join(member("b"), q, table_id(), now_ms=1001)
    assert group is None
    third = table_id()
    place, group, _ = await mm.join(member("c"), q, third, now_ms=1002)
    assert group is not None
    assert place is not None
    assert (group.table, group.rules, group.deals) == (third, "classic", 1)
    assert [m.player for m in group.members] == ["a", "b", "c"]
    assert [m.token_hash for m in group.members] == ["hash-a", "hash-b", "hash-c"]
    assert (place.table, place.seat) == (third, 2)
    polled, _ = await mm.poll("a", table_id(), now_ms=1003)
    assert polled is not None
    assert (polled.table, polled.seat) == (third, 0)
    assert await mm.group_of(third) == group


async def test_queues_of_different_presets_do_not_mix(client: aioredis.Redis) -> None:
    mm = matchmaker(client)
    for name, queue in (("a", "classic:1"), ("b", "classic:5"), ("c", "kawu:1")):
        _, group, _ = await mm.join(member(name), queue, table_id(), now_ms=0)
        assert group is None


async def test_a_player_waiting_past_the_setting_is_seated_with_bots_on_their_next_poll(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    await mm.join(member("a"), "classic:1", table_id(), now_ms=0)
    await mm.join(member("b"), "classic:1", table_id(), now_ms=5000)
    # Both keep polling (so neither is dropped); the oldest's wait decides.
    for now in (9000, 18_000):
        for who in "ab":
            await mm.poll(who, table_id(), now_ms=now)
    place, group = await mm.poll("b", table_id(), now_ms=WAIT - 1)
    assert group is None
    assert place is not None
    assert place.waited_ms == WAIT - 1 - 5000
    later = table_id()
    place, group = await mm.poll("b", later, now_ms=WAIT)
    assert group is not None
    assert [m.player for m in group.members] == ["a", "b"]
    assert place is not None
    assert (place.table, place.seat) == (later, 1)


async def test_a_player_who_stops_polling_is_dropped_and_never_seated(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    await mm.join(member("gone"), "classic:1", table_id(), now_ms=0)
    await mm.join(member("a"), "classic:1", table_id(), now_ms=DROP)
    # "gone" was last heard from at 0: the next step drops it before pairing.
    _, group, _ = await mm.join(member("b"), "classic:1", table_id(), now_ms=DROP + 1)
    assert group is None
    place, _ = await mm.poll("gone", table_id(), now_ms=DROP + 2)
    assert place is None
    _, group, _ = await mm.join(member("c"), "classic:1", table_id(), now_ms=DROP + 3)
    assert group is not None
    assert [m.player for m in group.members] == ["a", "b", "c"]


async def test_a_player_is_in_one_place_leaves_it_and_may_queue_again(
    client: aioredis.Redis,
) -> None:
    mm = matchmaker(client)
    await mm.join(member("a"), "classic:1", table_id(), now_ms=0)
    place, group, already = await mm.join(member("a"), "kawu:5", table_id(), now_ms=1)
    assert already
    assert group is None
    assert place is not None
    assert place.queue == "classic:1"
    assert await mm.leave("a") == "queue"
    assert await mm.leave("a") == "nothing"
    assert await client.zcard("pdk:{mm}:q:classic:1") == 0
    for name in "abc":
        await mm.join(member(name), "kawu:5", table_id(), now_ms=2)
    place, group, already = await mm.join(member("a"), "classic:1", table_id(), now_ms=3)
    assert already
    assert place is not None
    assert place.table is not None
    assert await mm.leave("a") == "table"
    _, _, already = await mm.join(member("a"), "classic:1", table_id(), now_ms=4)
    assert not already


async def test_the_queues_hold_at_most_the_setting(client: aioredis.Redis) -> None:
    mm = matchmaker(client, most=2)
    await mm.join(member("a"), "classic:1", table_id(), now_ms=0)
    await mm.join(member("b"), "classic:5", table_id(), now_ms=0)
    place, group, _ = await mm.join(member("c"), "kawu:1", table_id(), now_ms=0)
    assert place is None
    assert group is None


# ---------------------------------------------------------------- property

PLAYERS = [f"p{n}" for n in range(5)]
QUEUES = ["classic:1", "kawu:5"]
join = st.tuples(
    st.just("join"), st.sampled_from(PLAYERS), st.sampled_from(QUEUES), st.integers(0, 2)
)
# Joins weigh most: a player joining where they already are is what may go wrong.
step = st.one_of(
    join,
    join,
    join,
    st.tuples(st.just("poll"), st.sampled_from(PLAYERS), st.just(""), st.integers(0, 2)),
    st.tuples(st.just("leave"), st.sampled_from(PLAYERS), st.just(""), st.integers(0, 2)),
    st.tuples(st.just("drop"), st.sampled_from(PLAYERS), st.just(""), st.integers(0, 2)),
    st.tuples(st.just("time"), st.just(""), st.just(""), st.integers(1, 25_000)),
)


async def run_steps(url: str, steps: list[tuple[str, str, str, int]]) -> None:
    clients = [aioredis.Redis.from_url(url) for _ in range(3)]
    await clients[0].flushdb()
    processes = [matchmaker(c) for c in clients]
    now = 0
    seated: dict[str, str] = {}  # player -> table, until they leave it
    dropped: set[str] = set()  # players who closed their tab (they never call again)
    groups: list[Group] = []

    def record(who: str, group: Group | None) -> None:
        if group is None:
            return
        groups.append(group)
        players = [m.player for m in group.members]
        assert 1 <= len(players) <= 3
        assert len(set(players)) == len(players)
        for p in players:
            assert p not in seated, f"{p} seated at {group.table} while at {seated[p]}"
            assert p not in dropped, f"{p} dropped but seated at {group.table}"
            seated[p] = group.table

    try:
        for op, who, queue, arg in steps:
            mm = processes[arg] if op != "time" else processes[0]
            if op == "time":
                now += arg
                continue
            if who in dropped:
                continue
            if op == "join":
                place, group, _ = await mm.join(member(who), queue, table_id(), now_ms=now)
                record(who, group)
                if place is not None and place.filled:
                    # A bot's seat of a table started with bots (tests/lobby/test_fillable.py).
                    assert who not in seated
                    seated[who] = str(place.table)
            elif op == "poll":
                _, group = await mm.poll(who, table_id(), now_ms=now)
                record(who, group)
            elif op == "leave":
                if await mm.leave(who) == "table":
                    seated.pop(who)
            else:
                dropped.add(who)
            # Nobody is in two places: one queue at most, never queued and seated.
            for p in PLAYERS:
                queued = [
                    q for q in QUEUES if await clients[0].zscore(f"pdk:{{mm}}:q:{q}", p) is not None
                ]
                assert len(queued) <= 1
                assert not (queued and p in seated), f"{p} queued and seated"
        # Everyone left keeps polling past the wait and the drop: the queues drain.
        for _ in range(2):
            now += WAIT + DROP
            for p in PLAYERS:
                if p not in dropped:
                    _place, group = await processes[0].poll(p, table_id(), now_ms=now)
                    record(p, group)
        for q in QUEUES:
            assert await clients[0].zcard(f"pdk:{{mm}}:q:{q}") == 0
        assert await clients[0].zcard("pdk:{mm}:seen") == 0
    finally:
        for c in clients:
            await c.aclose()


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=5, max_size=40))
def test_over_any_joins_leaves_and_drops_nobody_is_in_two_places_and_the_queue_drains(
    redis_url: str, steps: list[tuple[str, str, str, int]]
) -> None:
    asyncio.run(run_steps(redis_url, steps))
