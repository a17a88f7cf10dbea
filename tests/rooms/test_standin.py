"""The turn clock, the stand-in and hand-back in the room actor, on an injected clock
(a real Redis, in-memory sockets; time moves only when the test says so)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from room_helpers import START, FakeClock, Socket, new_table, seed_where_leader_is

from server.engine import NextDeal, Pass, Play
from server.rooms.commands import Back, SendEmote, SetAuto
from server.rooms.registry import Registry
from server.rooms.room import Room
from server.rooms.store import TableStore


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def registry(store: TableStore, clock: FakeClock) -> AsyncIterator[Registry]:
    reg = Registry(store, idle_seconds=60, clock=clock)
    yield reg
    await reg.close()


async def open_room(registry: Registry, table_id: str) -> Room:
    room = await registry.room(table_id)
    assert room is not None
    return room


def seats(frame: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = frame["table"]["seats"]
    return result


async def two_friends(
    store: TableStore, registry: Registry, **options: Any
) -> tuple[Room, Socket, Socket, dict[str, Any]]:
    """Seats 0 and 1 human (seat 1 leads the first deal), seat 2 a bot."""
    fields: dict[str, Any] = {
        "humans": 2, "bots": ["easy"], "seed": seed_where_leader_is(1), "bot_speed_ms": 0,
        "deals": 5, "turn_seconds": 30, **options,
    }  # fmt: skip
    meta, _ = await new_table(store, **fields)
    room = await open_room(registry, meta.id)
    host, friend = Socket(0), Socket(1)
    await room.attach(host.conn)
    await room.attach(friend.conn)
    frame = await host.state_where(lambda f: all(s["connected"] for s in seats(f)))
    return room, host, friend, frame


async def test_the_clock_starts_once_both_friends_sat_down_and_shows_its_deadline(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    meta, _ = await new_table(
        store, humans=2, bots=["easy"], seed=seed_where_leader_is(1), turn_seconds=30
    )
    room = await open_room(registry, meta.id)
    host = Socket(0)
    await room.attach(host.conn)
    alone = await host.next("state")
    assert alone["table"]["clock"] is None  # the friend has not opened their link yet
    assert clock.pending() == []
    friend = Socket(1)
    await room.attach(friend.conn)
    both = await host.state_where(lambda f: f["table"]["clock"] is not None)
    assert both["table"]["clock"] == {
        "seat": 1,
        "deadline": round((START + 30) * 1000),
        "remaining_ms": 30_000,
    }
    assert clock.pending() == [START + 30]
    stored = await store.load_meta(meta.id)
    assert stored is not None
    assert stored.clock is not None
    assert stored.clock.deadline == START + 30


async def test_when_the_clock_runs_out_the_stand_in_plays_that_turn_and_the_seat_shows_auto(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    room, host, friend, _ = await two_friends(store, registry)
    clock.advance(29.9)
    assert room.version == 0  # not yet
    clock.advance(0.2)
    # The stand-in's move, and the 0 ms bot's answer with it in the same write.
    played = await host.state_where(lambda f: f["version"] >= 1)
    assert played["view"]["moves"][0]["seat"] == 1
    assert seats(played)[1]["auto"] is True
    assert seats(played)[1]["on_auto"] is False
    # The friend plays their next turn themselves: the marker goes away.
    turn = await host_plays_until_friends_turn(room, host, played)
    mine = await friend.state_where(lambda f: f["version"] == turn["version"])
    hints = mine["view"]["hints"]
    request = Play(seat=1, cards=hints[0]) if hints else Pass(seat=1)
    room.submit(friend.conn, turn["version"], request)
    after = await host.state_where(lambda f: f["version"] > turn["version"])
    assert after["events"][0]["seat"] == 1
    assert seats(after)[1]["auto"] is False


async def host_plays_until_friends_turn(
    room: Room, host: Socket, frame: dict[str, Any]
) -> dict[str, Any]:
    """From ``frame`` on, the host plays its turns (and deals on); the first state where
    seat 1 is to move."""
    while frame["view"]["turn"] != 1:
        if frame["view"]["result"] is not None:
            room.submit(host.conn, frame["version"], NextDeal())
        elif frame["view"]["turn"] == 0:
            await play_host_turn(room, host, frame)
        frame = await host.state_where(lambda f, v=frame["version"]: f["version"] > v)
    return frame


async def play_host_turn(room: Room, host: Socket, frame: dict[str, Any]) -> None:
    view = frame["view"]
    if view["hints"]:
        room.submit(host.conn, frame["version"], Play(seat=0, cards=view["hints"][0]))
    else:
        room.submit(host.conn, frame["version"], Pass(seat=0))


async def run_out_friend_turns(
    room: Room, host: Socket, clock: FakeClock, frame: dict[str, Any], times: int
) -> dict[str, Any]:
    """Let seat 1's clock run out ``times`` times in a row while the host plays on."""
    for _ in range(times):
        frame = await host_plays_until_friends_turn(room, host, frame)
        clock.advance(30.1)
        frame = await host.state_where(lambda f, v=frame["version"]: f["version"] > v)
    return frame


async def test_three_stand_in_turns_in_a_row_put_the_seat_on_auto_until_i_am_back(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    room, host, friend, frame = await two_friends(store, registry)
    frame = await run_out_friend_turns(room, host, clock, frame, 3)
    assert seats(frame)[1]["on_auto"] is True
    stored = await store.load_meta(room.id)
    assert stored is not None
    assert stored.seats[1].standins == 3
    # On auto, the seat's own play is refused and changes nothing.
    version = room.version
    room.submit(friend.conn, version, Pass(seat=1))
    refusal = await friend.next("error")
    assert refusal["code"] == "seat_on_auto"
    assert room.version == version
    # On auto no clock runs for the seat: its turns are played at once, time standing still.
    turn = await host_plays_until_friends_turn(room, host, frame)
    assert turn["table"]["clock"] is None
    played = await host.state_where(lambda f: f["version"] > turn["version"])
    assert played["events"][0]["seat"] == 1
    # "I'm back": from the next turn on the friend plays again.
    steady = played
    while steady["view"]["turn"] != 0 and steady["view"]["result"] is None:
        steady = await host.next("state")
    room.submit(friend.conn, steady["version"], Back())
    back = await host.state_where(lambda f: not seats(f)[1]["on_auto"])
    assert seats(back)[1]["auto"] is False
    stored = await store.load_meta(room.id)
    assert stored is not None
    assert stored.seats[1].standins == 0


async def test_an_absent_friend_is_stood_in_for_after_the_grace_time_and_reconnecting_hands_back(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    room, host, friend, _ = await two_friends(store, registry, turn_seconds=0)
    assert clock.pending() == []  # no clock, and the friend is here: wait for them
    room.detach(friend.conn)
    await host.state_where(lambda f: not seats(f)[1]["connected"])
    assert clock.pending() == [START + 15]
    clock.advance(15)
    stood_in = await host.state_where(lambda f: f["version"] >= 1)
    assert stood_in["view"]["moves"][0]["seat"] == 1
    assert seats(stood_in)[1]["auto"] is True
    again = Socket(1)
    await room.attach(again.conn)
    returned = await again.next("state")
    assert seats(returned)[1]["auto"] is False
    assert seats(returned)[1]["connected"] is True


async def test_a_restart_continues_the_stored_clock_instead_of_starting_a_new_one(
    store: TableStore, clock: FakeClock
) -> None:
    first = Registry(store, idle_seconds=60, clock=clock)
    room, host, _, _ = await two_friends(store, first)
    await first.close()
    clock.advance(20)  # the process was down for 20 s
    second = Registry(store, idle_seconds=60, clock=clock)
    try:
        room = await open_room(second, room.id)
        host = Socket(0)
        await room.attach(host.conn)
        resumed = await host.next("state")
        assert resumed["table"]["clock"]["deadline"] == round((START + 30) * 1000)
        assert resumed["table"]["clock"]["remaining_ms"] == 10_000
        clock.advance(10)
        played = await host.state_where(lambda f: f["version"] >= 1)
        assert played["view"]["moves"][0]["seat"] == 1
    finally:
        await second.close()


async def test_a_lone_player_against_bots_is_never_stood_in_for(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), bot_speed_ms=0)
    room = await open_room(registry, meta.id)
    sock = Socket(0)
    await room.attach(sock.conn)
    frame = await sock.next("state")
    assert frame["table"]["turn_seconds"] == 0
    room.detach(sock.conn)
    clock.advance(3600)
    assert clock.pending() == []
    assert room.version == 0


async def test_emotes_reach_every_seat_and_are_rate_limited_per_seat(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    room, host, friend, _ = await two_friends(store, registry, turn_seconds=0)
    for _ in range(3):
        room.submit(friend.conn, 0, SendEmote("wave"))
        assert await host.next("emote") == {"type": "emote", "seat": 1, "emote": "wave"}
    room.submit(friend.conn, 0, SendEmote("wave"))
    assert (await friend.next("error"))["code"] == "too_many_emotes"
    clock.advance(2)
    room.submit(friend.conn, 0, SendEmote("clap"))
    assert (await host.next("emote"))["emote"] == "clap"


async def test_auto_hands_my_connected_seat_to_the_stand_in_until_i_take_it_back(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    room, host, friend, frame = await two_friends(store, registry)
    # 托管 on, at the friend's own turn: the stand-in plays it at once, no clock needed.
    assert frame["view"]["turn"] == 1
    room.submit(friend.conn, frame["version"], SetAuto(on=True))
    played = await host.state_where(lambda f: f["version"] > frame["version"])
    assert played["view"]["moves"][0]["seat"] == 1
    assert seats(played)[1]["on_auto"] is True
    assert seats(played)[1]["connected"] is True
    stored = await store.load_meta(room.id)
    assert stored is not None
    assert stored.seats[1].standins >= 3
    # Its next turns too, while the friend's socket stays open and time stands still.
    turn = await host_plays_until_friends_turn(room, host, played)
    assert turn["table"]["clock"] is None
    again = await host.state_where(lambda f: f["version"] > turn["version"])
    assert again["events"][0]["seat"] == 1
    # Off: the seat is the friend's again, and their own play is accepted.
    steady = again
    while steady["view"]["turn"] != 0 and steady["view"]["result"] is None:
        steady = await host.next("state")
    room.submit(friend.conn, steady["version"], SetAuto(on=False))
    back = await host.state_where(lambda f: not seats(f)[1]["on_auto"])
    assert seats(back)[1]["auto"] is False
    turn = await host_plays_until_friends_turn(room, host, back)
    assert turn["table"]["clock"] is not None  # a human's turn again: the clock runs
    mine = await friend.state_where(lambda f: f["version"] == turn["version"])
    hints = mine["view"]["hints"]
    room.submit(
        friend.conn, turn["version"], Play(seat=1, cards=hints[0]) if hints else Pass(seat=1)
    )
    after = await host.state_where(lambda f: f["version"] > turn["version"])
    assert after["events"][0]["seat"] == 1
    assert seats(after)[1]["auto"] is False


async def test_auto_asked_twice_or_off_when_not_on_changes_nothing_stored(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    room, host, friend, frame = await two_friends(store, registry, seed=seed_where_leader_is(0))
    room.submit(friend.conn, frame["version"], SetAuto(on=False))
    same = await host.next("state")
    assert seats(same)[1]["on_auto"] is False
    room.submit(friend.conn, frame["version"], SetAuto(on=True))
    room.submit(friend.conn, frame["version"], SetAuto(on=True))
    on = await host.state_where(lambda f: seats(f)[1]["on_auto"])
    assert on["version"] == frame["version"]  # not the friend's turn: nothing played
    stored = await store.load_meta(room.id)
    assert stored is not None
    assert stored.seats[1].standins == 3
    assert stored.seats[0].standins == 0
