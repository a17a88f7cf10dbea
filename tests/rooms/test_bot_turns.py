"""The bots' turns and pauses in the room actor, on an injected clock: the bot speed is
the host's setting, and changing it never restarts a pause under way."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from room_helpers import START, FakeClock, Socket, log_of, new_table, seed_where_leader_is

from server.rooms.log import BotSpeed
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


async def bot_to_move(
    store: TableStore, registry: Registry, humans: int
) -> tuple[Room, list[Socket], dict[str, Any]]:
    """A table whose seat 2 (a normal bot, 5 s pause) leads; every human seated."""
    meta, _ = await new_table(
        store,
        seed=seed_where_leader_is(2),
        humans=humans,
        bots=["normal"] * (3 - humans),
        bot_speed_ms=5000,
    )
    room = await registry.room(meta.id)
    assert room is not None
    socks = [Socket(seat) for seat in range(humans)]
    for sock in socks:
        await room.attach(sock.conn)
    frame = await socks[0].state_where(
        lambda f: all(s["connected"] for s in f["table"]["seats"] if s["kind"] == "human")
    )
    assert frame["view"]["turn"] == 2
    return room, socks, frame


async def test_only_the_host_sets_the_bot_speed_and_another_seat_is_told_why_not(
    store: TableStore, registry: Registry
) -> None:
    room, (host, friend), _ = await bot_to_move(store, registry, humans=2)
    room.submit(friend.conn, 0, BotSpeed(ms=0, seat=1))
    assert (await friend.next("error"))["code"] == "not_host"
    stored = await store.load_meta(room.id)
    assert stored is not None
    assert stored.bot_speed_ms == 5000
    # The host may; both hear it.
    room.submit(host.conn, 0, BotSpeed(ms=1000, seat=0))
    for sock in (host, friend):
        assert (await sock.next("state"))["table"]["bot_speed_ms"] == 1000


async def test_changing_the_speed_every_second_never_restarts_the_pause_under_way(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    room, (host,), _ = await bot_to_move(store, registry, humans=1)
    # The pause began when the turn did (START); each second the host changes the speed,
    # as an attacker changing it once a second would have held the bot back for ever.
    for second, ms in enumerate([4900, 5000, 4900, 5000], start=1):
        clock.advance(1)
        room.submit(host.conn, 0, BotSpeed(ms=ms, seat=0))
        frame = await host.next("state")
        assert (frame["version"], frame["table"]["bot_speed_ms"]) == (0, ms)
        assert clock.now() == START + second
    # The pause ends at its start plus the speed as it stands: 5 s after START.
    assert clock.pending() == [START + 5]
    clock.advance(1.01)
    played = await host.state_where(lambda f: f["version"] >= 1)
    assert played["view"]["moves"][0]["seat"] == 2
    assert len(await log_of(store, room.id)) == played["version"]


async def test_a_shorter_speed_ends_a_pause_that_has_already_lasted_that_long_at_once(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    room, (host,), _ = await bot_to_move(store, registry, humans=1)
    clock.advance(3)
    room.submit(host.conn, 0, BotSpeed(ms=2000, seat=0))
    assert (await host.next("state"))["table"]["bot_speed_ms"] == 2000
    # Three seconds have passed, more than the new pause: the bot plays without more time.
    played = await host.state_where(lambda f: f["version"] >= 1)
    assert played["view"]["moves"][0]["seat"] == 2
    assert clock.now() == START + 3
