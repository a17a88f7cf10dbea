"""A quick-match player taking over a bot's seat (server.rooms.seat_takeover), in a
real room on a real Redis, the claim made by the real matchmaker script."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis
from room_helpers import Socket, lease_of

from server import ratings
from server.engine import NextDeal, Pass, Play
from server.lobby.fillable import FillableTables
from server.lobby.matched import make_table
from server.lobby.queue import Matchmaker, Member
from server.ratings import MatchRecord, RatingStore, Track
from server.rooms import seat_takeover
from server.rooms.log import NewMatch
from server.rooms.registry import Registry
from server.rooms.room import Room
from server.rooms.seating import SeatError
from server.rooms.store import TableStore
from server.rooms.tokens import hash_token, new_token

WAIT = 20_000


@pytest.fixture
async def registry(store: TableStore) -> AsyncIterator[Registry]:
    reg = Registry(store, idle_seconds=60)
    yield reg
    await reg.close()


@pytest.fixture
def link(redis_client: aioredis.Redis) -> Iterator[FillableTables]:
    made = FillableTables(redis_client)
    seat_takeover.install(made)
    yield made
    seat_takeover.install(None)


def matchmaker(redis: aioredis.Redis) -> Matchmaker:
    return Matchmaker(redis, wait_ms=WAIT, drop_ms=WAIT, seat_ttl_ms=600_000, max_queued=100)


async def bot_table(
    redis: aioredis.Redis, store: TableStore, deals: int, host_token: str
) -> tuple[str, int]:
    """A quick-match table started with two bots after its one player waited, made as
    the app makes it; a later player of its queue is given seat 1 (their token's hash
    only).  Returns the table and the seat given."""
    mm = matchmaker(redis)
    queue = f"classic:{deals}"
    host = Member("host", "Hostess", "#0072b2", hash_token(host_token))
    await mm.join(host, queue, "takeover-table", now_ms=0)
    _, group = await mm.poll("host", "takeover-table", now_ms=WAIT)
    assert group is not None
    assert await make_table(store, None, group, max_tables=None)
    # Bots without a pause, so that deals end at once (the pause is no part of this).
    meta = await store.load_meta("takeover-table")
    assert meta is not None
    lease = await lease_of(store, meta.id)
    await store.save_meta(lease, 0, msgspec.structs.replace(meta, bot_speed_ms=0))
    await store.release(lease)
    return "takeover-table", 1


async def give_seat(redis: aioredis.Redis, token: str, deals: int, who: str = "late") -> int:
    mm = matchmaker(redis)
    member = Member(who, f"Late {who}", "#d55e00", hash_token(token))
    place, _, _ = await mm.join(member, f"classic:{deals}", "unused", now_ms=WAIT + 1)
    assert place is not None
    assert place.filled
    assert place.table == "takeover-table"
    return int(place.seat or 0)


def view(frame: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = frame["view"]
    return result


async def play_to_result(room: Room, sock: Socket, after: int = -1) -> dict[str, Any]:
    """Play ``sock``'s turns with its first hint (or pass) until the deal after version
    ``after`` ends."""
    while True:
        frame = await sock.next("state")
        v = view(frame)
        if frame["version"] <= after:
            continue
        if v["result"] is not None:
            return frame
        if v["turn"] == sock.conn.seat:
            move = Play(seat=v["seat"], cards=v["hints"][0]) if v["hints"] else None
            room.submit(sock.conn, frame["version"], move or Pass(seat=v["seat"]))


async def test_a_player_given_a_bot_seat_mid_deal_watches_and_takes_it_as_the_deal_ends(
    redis_client: aioredis.Redis, store: TableStore, registry: Registry, link: FillableTables
) -> None:
    host_token, late_token = new_token(), new_token()
    table, _ = await bot_table(redis_client, store, 5, host_token)
    room = await registry.room(table)
    assert room is not None
    host = Socket(0)
    await room.attach(host.conn, hash_token(host_token))
    first = await host.next("state")
    assert view(first)["result"] is None
    seat = await give_seat(redis_client, late_token, 5)
    late = Socket(seat)
    await room.attach(late.conn, hash_token(late_token))
    # Stored before anyone hears of it: a restarted owner resumes the takeover.
    stored = await store.load_meta(table)
    assert stored is not None
    assert [(t.seat, t.token_hash) for t in stored.takeovers] == [(1, hash_token(late_token))]
    assert stored.seats[1].kind == "bot"
    # Mid-deal the player watches (the public view); they cannot act for the bot.
    watched = await late.next("watch")
    assert view(watched)["result"] is None
    room.submit(late.conn, watched["version"], Pass(seat=1))
    assert (await late.next("error"))["code"] == "spectator"
    end = await play_to_result(room, host)
    # The deal's end is the boundary: the seat is theirs, whole, with the deal's result.
    mine = await late.next("state")
    assert view(mine)["seat"] == 1
    assert view(mine)["result"] is not None
    assert mine["version"] == end["version"]
    seats = mine["table"]["seats"]
    assert (seats[1]["kind"], seats[1]["name"], seats[1]["connected"]) == (
        "human",
        "Late late",
        True,
    )
    # The others see the new name (and, a frame later, the player connected).
    shown = await host.state_where(lambda f: f["table"]["seats"][1]["connected"])
    assert shown["table"]["seats"][1]["name"] == "Late late"
    meta = await store.load_meta(table)
    assert meta is not None
    assert meta.takeovers == ()
    assert (meta.seats[1].kind, meta.seats[1].token_hash) == ("human", hash_token(late_token))
    assert meta.seats[1].bot_match == 0
    assert meta.seats[2].kind == "bot"


async def test_between_deals_the_seat_is_taken_at_once(
    redis_client: aioredis.Redis, store: TableStore, registry: Registry, link: FillableTables
) -> None:
    host_token, late_token = new_token(), new_token()
    table, _ = await bot_table(redis_client, store, 5, host_token)
    room = await registry.room(table)
    assert room is not None
    host = Socket(0)
    await room.attach(host.conn, hash_token(host_token))
    await play_to_result(room, host)
    seat = await give_seat(redis_client, late_token, 5)
    late = Socket(seat)
    await room.attach(late.conn, hash_token(late_token))
    frame = await late.next()
    assert (frame["type"], view(frame)["seat"]) == ("state", 1)
    assert frame["table"]["seats"][1]["kind"] == "human"


async def test_a_token_nobody_was_given_opens_no_bot_seat(
    redis_client: aioredis.Redis, store: TableStore, registry: Registry, link: FillableTables
) -> None:
    table, _ = await bot_table(redis_client, store, 5, new_token())
    late_token = new_token()
    await give_seat(redis_client, late_token, 5)
    room = await registry.room(table)
    assert room is not None
    for seat, token in ((1, new_token()), (2, late_token)):
        with pytest.raises(SeatError):
            await room.attach(Socket(seat).conn, hash_token(token))
    meta = await store.load_meta(table)
    assert meta is not None
    assert meta.takeovers == ()


async def test_a_player_who_left_before_the_deal_ended_takes_the_seat_on_coming_back(
    redis_client: aioredis.Redis, store: TableStore, registry: Registry, link: FillableTables
) -> None:
    host_token, late_token = new_token(), new_token()
    table, _ = await bot_table(redis_client, store, 5, host_token)
    room = await registry.room(table)
    assert room is not None
    host = Socket(0)
    await room.attach(host.conn, hash_token(host_token))
    seat = await give_seat(redis_client, late_token, 5)
    late = Socket(seat)
    await room.attach(late.conn, hash_token(late_token))
    await late.next("watch")
    room.detach(late.conn)
    await play_to_result(room, host)
    meta = await store.load_meta(table)
    assert meta is not None
    assert meta.seats[1].kind == "bot"  # nobody was there to take it
    # The claim's record expired meanwhile: the table's meta alone keeps the promise.
    await redis_client.delete(f"pdk:{{mm}}:taken:{table}:1")
    back = Socket(1)
    await room.attach(back.conn, hash_token(late_token))
    frame = await back.next()
    assert (frame["type"], view(frame)["seat"]) == ("state", 1)


async def test_a_match_a_bot_played_part_of_is_rated_with_bots_and_the_next_one_with_people(
    redis_client: aioredis.Redis, store: TableStore, registry: Registry, link: FillableTables
) -> None:
    records: list[MatchRecord] = []
    ratings.install(records.append)
    try:
        host_token, tokens = new_token(), [new_token(), new_token()]
        table, _ = await bot_table(redis_client, store, 5, host_token)
        rating_store = RatingStore(
            redis_client,
            retention_seconds=3600,
            player_ttl_seconds=3600,
            board_size=10,
            table_ttl_seconds=3600,
        )
        await rating_store.seat_player(table, 0, "host", hash_token(host_token))
        room = await registry.room(table)
        assert room is not None
        host = Socket(0)
        await room.attach(host.conn, hash_token(host_token))
        lates = []
        for who, token in zip(("b", "c"), tokens, strict=True):
            seat = await give_seat(redis_client, token, 5, who)
            await rating_store.seat_player(table, seat, who, hash_token(token))
            lates.append(Socket(seat))
            await room.attach(lates[-1].conn, hash_token(token))
        # Deal 1: the bots play seats 1 and 2; both are taken over as it ends.
        end = await play_to_result(room, host)
        for late in lates:
            assert view(await late.next("state"))["result"] is not None
        # Deals 2 to 5, three people.
        for _ in range(4):
            room.submit(host.conn, end["version"], NextDeal())
            ends = await asyncio.gather(
                *(play_to_result(room, s, end["version"]) for s in (host, *lates))
            )
            end = ends[0]
        assert view(ends[0])["match_over"]
        (first,) = records
        assert [line.human for line in first.seats] == [True, False, False]
        assert not first.human_only
        result = await rating_store.freeze(first)
        # The match goes to the bots track, and only the host (who played it all) counts.
        assert list(result) == [0]
        assert result[0]["track"] == str(Track.BOTS)
        # The next match is theirs whole: rated among people.
        room.submit(host.conn, ends[0]["version"], NewMatch())
        end = ends[0]
        while True:
            ends = await asyncio.gather(
                *(play_to_result(room, s, end["version"]) for s in (host, *lates))
            )
            end = ends[0]
            if view(end)["match_over"]:
                break
            room.submit(host.conn, end["version"], NextDeal())
        second = records[1]
        assert second.human_only
        result = await rating_store.freeze(second)
        assert sorted(result) == [0, 1, 2]
        assert {line["track"] for line in result.values()} == {str(Track.PEOPLE)}
    finally:
        ratings.install(None)
