"""The room actor against a real Redis, with in-memory socket ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis
from room_helpers import (
    GUARD_SECONDS,
    Socket,
    lease_of,
    log_of,
    new_table,
    seed_where_leader_is,
    take_over,
)

from server import engine
from server.engine import NextDeal, Pass, Play
from server.protocol import CloseCode
from server.rooms.commands import AskHint, BotMove, Command, InviteSeat
from server.rooms.log import BotSpeed, NewMatch, TableMeta, rebuild
from server.rooms.registry import Registry, TableBusy
from server.rooms.room import Room
from server.rooms.store import TableStore


@pytest.fixture
async def registry(store: TableStore) -> AsyncIterator[Registry]:
    reg = Registry(store, idle_seconds=60)
    yield reg
    await reg.close()


async def open_room(registry: Registry, table_id: str) -> Room:
    room = await registry.room(table_id)
    assert room is not None
    return room


async def seated(room: Room, seat: int) -> Socket:
    sock = Socket(seat)
    await room.attach(sock.conn)
    return sock


async def seat_all(room: Room, seats: list[int]) -> list[tuple[Socket, dict[str, Any]]]:
    """Attach one socket per entry of ``seats``, each with the state that shows them all.

    Every seat whose connection flag flips is announced to all sockets, so a
    socket may see several states before the one listing everybody.
    """
    socks = [await seated(room, seat) for seat in seats]
    expected = [seat in seats for seat in range(3)]

    def everyone(frame: dict[str, Any]) -> bool:
        flags = [s["connected"] or s["kind"] == "bot" for s in frame["table"]["seats"]]
        humans = [s["kind"] == "human" for s in frame["table"]["seats"]]
        return [f and h for f, h in zip(flags, humans, strict=True)] == [
            e and h for e, h in zip(expected, humans, strict=True)
        ]

    return [(sock, await sock.state_where(everyone)) for sock in socks]


def moves_in(frame: dict[str, Any]) -> list[int]:
    """The seats whose plays and passes a state frame tells of, in order."""
    return [e["seat"] for e in frame["events"] if e["type"] in ("played", "passed")]


def view(frame: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = frame["view"]
    return result


async def test_bots_play_until_a_human_turn_and_redis_has_each_move_before_the_seat_hears(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(1), bot_speed_ms=0)
    room = await open_room(registry, meta.id)
    heard: list[tuple[int, int]] = []
    sock = Socket(0)
    send = sock.conn._send

    async def checking_send(frame: str) -> None:
        version = msgspec.json.decode(frame)["version"]
        heard.append((version, len(await log_of(store, meta.id))))
        await send(frame)

    sock.conn._send = checking_send
    await room.attach(sock.conn)
    frame = await sock.state_where(lambda f: view(f)["turn"] == 0)
    entries = await log_of(store, meta.id)
    assert frame["version"] == len(entries) >= 1
    assert all(isinstance(e, Play | Pass) and e.seat in (1, 2) for e in entries)
    assert entries[0].seat == 1  # type: ignore[union-attr]
    assert all(stored >= version for version, stored in heard)


async def test_a_room_loaded_from_redis_resumes_with_the_bot_whose_turn_it_is(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), bot_speed_ms=0)
    state = rebuild(meta, []).match
    first = Play(seat=0, cards=["3S"])
    elsewhere = await lease_of(store, meta.id, "a-process-that-stopped")
    await store.append(elsewhere, 0, [first])
    await store.release(elsewhere)
    assert rebuild(meta, [first]).match.deal.turn == 1 != state.deal.turn
    # Loading the room is enough for the bot to move on; the socket only watches.
    room = await open_room(registry, meta.id)
    watcher = await seated(room, 0)
    await watcher.state_where(lambda f: f["version"] >= 2)
    entries = await log_of(store, meta.id)
    assert entries[0] == first
    assert isinstance(entries[1], Play | Pass)
    assert entries[1].seat == 1


async def test_every_socket_of_a_seat_gets_every_state_and_they_share_one_hint_cycle(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    room = await open_room(registry, meta.id)
    (tab_a, shown), (tab_b, _), (other, _) = await seat_all(room, [0, 0, 1])
    hints = view(shown)["hints"]
    assert len(hints) >= 2
    answers = []
    for i in range(len(hints) + 1):
        tab = tab_a if i % 2 == 0 else tab_b
        room.submit(tab.conn, 0, AskHint())
        answers.append(await tab.next("hint"))
    assert [a["index"] for a in answers] == [*range(len(hints)), 0]
    assert [a["cards"] for a in answers] == [*hints, hints[0]]
    assert {a["count"] for a in answers} == {len(hints)}

    room.submit(tab_a.conn, 0, Play(seat=0, cards=hints[0]))
    for sock in (tab_a, tab_b, other):
        frame = await sock.next("state")
        assert frame["version"] == 1
        assert frame["events"][0] == {
            "type": "played",
            "seat": 0,
            "cards": hints[0],
            "kind": frame["events"][0]["kind"],
            "top": frame["events"][0]["top"],
        }
    # A new version restarts the cycle.
    room.submit(other.conn, 1, AskHint())
    assert (await other.next("hint"))["index"] == 0


async def test_stale_and_refused_actions_answer_only_the_sender_and_write_nothing(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    room = await open_room(registry, meta.id)
    (leader, shown), (waiting, _) = await seat_all(room, [0, 1])
    hand = view(shown)["hand"]
    not_held = next(c for c in ("3H", "3D", "3C", "4S", "4H") if c not in hand)
    cases = [
        (waiting, 0, Play(seat=1, cards=["5S"]), "not_your_turn"),
        (leader, 0, Play(seat=0, cards=[not_held]), "cards_not_in_hand"),
        (leader, 0, Play(seat=0, cards=["ZZ"]), "invalid_card"),
        (leader, 0, Pass(seat=0), "leader_may_not_pass"),
        (leader, 3, Play(seat=0, cards=["3S"]), "stale_version"),
        (leader, 0, NextDeal(), "deal_in_progress"),
        (leader, 0, NewMatch(), "match_not_over"),
    ]
    for sock, version, request, code in cases:
        room.submit(sock.conn, version, request)
        error = await sock.next()
        assert (error["type"], error["code"], error["version"]) == ("error", code, 0)
    assert len(await log_of(store, meta.id)) == 0
    assert room.version == 0
    assert waiting.frames.empty()
    assert leader.frames.empty()


async def after_the_first_play(
    store: TableStore, registry: Registry
) -> tuple[TableMeta, Room, Socket, Socket, dict[str, Any]]:
    """Seats 0 and 1 at a table of three humans, seat 0 has led: seat 1's state at version 1."""
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    room = await open_room(registry, meta.id)
    (leader, shown), (follower, _) = await seat_all(room, [0, 1])
    room.submit(leader.conn, 0, Play(seat=0, cards=view(shown)["hints"][0]))
    await leader.next("state")
    now = await follower.next("state")
    assert now["version"] == 1
    return meta, room, leader, follower, now


async def test_an_action_made_one_version_ago_is_refused_as_stale_and_changes_nothing(
    store: TableStore, registry: Registry
) -> None:
    meta, room, leader, follower, now = await after_the_first_play(store, registry)
    # Seat 1's move is legal at version 1 (its turn), but it was made against version 0.
    answer = view(now)["hints"][0]
    room.submit(follower.conn, 0, Play(seat=1, cards=answer))
    error = await follower.next()
    assert (error["type"], error["code"], error["version"]) == ("error", "stale_version", 1)
    assert len(await log_of(store, meta.id)) == 1
    assert room.version == 1
    assert leader.frames.empty()
    # The same move against the current version is taken.
    room.submit(follower.conn, 1, Play(seat=1, cards=answer))
    assert (await follower.next("state"))["version"] == 2


async def test_bot_speed_changed_mid_turn_by_the_host_is_stored_and_shown_to_all(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(
        store, seed=seed_where_leader_is(2), humans=2, bots=["normal"], bot_speed_ms=5000
    )
    room = await open_room(registry, meta.id)
    (first, shown_first), (second, shown_second) = await seat_all(room, [0, 1])
    for frame in (shown_first, shown_second):
        assert (view(frame)["turn"], frame["table"]["bot_speed_ms"]) == (2, 5000)
    room.submit(first.conn, 0, BotSpeed(ms=0, seat=0))
    for sock in (first, second):
        frame = await sock.next("state")
        # A table setting: shown to all at once, and the version (the log) does not move.
        assert (frame["version"], frame["table"]["bot_speed_ms"]) == (0, 0)
    # The waiting bot picks up the new speed and plays.
    played = await first.state_where(lambda f: f["version"] == 1)
    assert view(played)["moves"][0]["seat"] == 2
    entries = await log_of(store, meta.id)
    assert not any(isinstance(e, BotSpeed) for e in entries)
    stored = await store.load_meta(meta.id)
    assert stored is not None
    assert rebuild(stored, entries).bot_speed_ms == 0


async def test_bot_speed_changes_never_grow_the_log(store: TableStore, registry: Registry) -> None:
    meta, _ = await new_table(store, humans=2, bots=["normal"], bot_speed_ms=5000)
    room = await open_room(registry, meta.id)
    ((sock, _),) = await seat_all(room, [0])
    # More than the socket's queue holds; it is enough that none of them is logged.
    for i in range(200):
        room.submit(sock.conn, room.version, BotSpeed(ms=4000 + i % 2, seat=0))
    room.submit(sock.conn, room.version, BotSpeed(ms=3333, seat=0))
    await sock.state_where(lambda f: f["table"]["bot_speed_ms"] == 3333)
    assert await log_of(store, meta.id) == []
    stored = await store.load_meta(meta.id)
    assert stored is not None
    assert stored.bot_speed_ms == 3333


async def test_a_bot_speed_entry_from_an_older_server_is_overridden_by_the_setting(
    store: TableStore,
) -> None:
    meta, _ = await new_table(store, seed=3, bot_speed_ms=800)
    legacy = [BotSpeed(ms=0, seat=0)]
    assert rebuild(meta, legacy).bot_speed_ms == 0
    later = msgspec.structs.replace(meta, bot_speed_ms=1500, bot_speed_from=1)
    assert rebuild(later, legacy).bot_speed_ms == 1500


async def play_to_result(room: Room, sock: Socket) -> dict[str, Any]:
    """Play seat ``sock``'s turns with its first hint (or pass) until the deal ends."""
    while True:
        frame = await sock.next("state")
        v = view(frame)
        if v["result"] is not None:
            return frame
        if v["turn"] == sock.conn.seat:
            version = frame["version"]
            if v["hints"]:
                room.submit(sock.conn, version, Play(seat=v["seat"], cards=v["hints"][0]))
            else:
                room.submit(sock.conn, version, Pass(seat=v["seat"]))


async def test_next_deal_then_new_match_once_the_match_is_over(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=21, deals=5, bot_speed_ms=0)
    room = await open_room(registry, meta.id)
    sock = await seated(room, 0)
    end = await play_to_result(room, sock)
    assert view(end)["deal_no"] == 1
    assert not view(end)["match_over"]
    room.submit(sock.conn, end["version"], NewMatch())
    assert (await sock.next("error"))["code"] == "match_not_over"
    room.submit(sock.conn, end["version"], NextDeal())
    frame = await sock.next("state")
    assert view(frame)["deal_no"] == 2
    assert frame["events"][0]["type"] == "deal_started"
    assert view(frame)["result"] is None


async def test_new_match_after_a_one_deal_match_deals_fresh_cards(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=8, deals=1, bot_speed_ms=0)
    room = await open_room(registry, meta.id)
    sock = await seated(room, 0)
    end = await play_to_result(room, sock)
    assert view(end)["match_over"]
    room.submit(sock.conn, end["version"], NextDeal())
    assert (await sock.next("error"))["code"] == "match_over"
    room.submit(sock.conn, end["version"], NewMatch())
    frame = await sock.next("state")
    assert frame["table"]["match_no"] == 1
    assert view(frame)["deal_no"] == 1
    assert view(frame)["totals"] == [0, 0, 0]
    assert len(view(frame)["hand"]) == 16
    entries = await log_of(store, meta.id)
    assert entries[end["version"]] == NewMatch()
    rebuilt = rebuild(meta, entries[: frame["version"]])
    assert rebuilt.match_no == 1
    # The room dealt the new match exactly as a reload from the log does.
    assert view(frame)["hand"] == engine.seat_view(rebuilt.match, 0).hand
    first = engine.seat_view(rebuild(meta, []).match, 0).hand
    assert view(frame)["hand"] != first


async def test_a_second_process_cannot_run_a_table_another_one_owns(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    first, second = Registry(store), Registry(store)
    try:
        await open_room(first, meta.id)
        with pytest.raises(TableBusy):
            await second.room(meta.id)
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize(
    "seats",
    [{"humans": 3, "bots": []}, {"bots": ["normal", "normal"], "bot_speed_ms": 0}],
    ids=["three people", "two bots that answer at once"],
)
async def test_an_owner_whose_lease_was_taken_over_writes_nothing_and_closes(
    store: TableStore, registry: Registry, redis_client: aioredis.Redis, seats: dict[str, Any]
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), **seats)
    room = await open_room(registry, meta.id)
    sock = await seated(room, 0)
    hints = view(await sock.next("state"))["hints"]
    # As if this process had stalled past its lease: it expires, another one takes over.
    successor = await take_over(redis_client, meta.id)
    assert successor.fence == room.lease.fence + 1
    room.submit(sock.conn, 0, Play(seat=0, cards=hints[0]))
    await asyncio.wait_for(room.wait_closed(), GUARD_SECONDS)
    assert sock.conn.close_code == CloseCode.TABLE_UNAVAILABLE
    assert sock.frames.empty()
    assert await log_of(store, meta.id) == []
    # The successor's writes go through.
    assert await store.append(successor, 0, [Play(seat=0, cards=hints[0])]) == 1


@pytest.mark.parametrize(
    ("bot_speed_ms", "told"),
    [(0, [[0, 1, 2]]), (1, [[0], [1], [2]])],
    ids=["bots that answer at once: one frame", "bots that pause first: a frame each"],
)
async def test_a_move_and_the_bots_answers_share_a_frame_only_when_the_bots_answer_at_once(
    store: TableStore, registry: Registry, bot_speed_ms: int, told: list[list[int]]
) -> None:
    meta, _ = await new_table(
        store, seed=seed_where_leader_is(0), bots=["normal", "normal"], bot_speed_ms=bot_speed_ms
    )
    room = await open_room(registry, meta.id)
    sock = await seated(room, 0)
    first = await sock.next("state")
    room.submit(sock.conn, 0, Play(seat=0, cards=view(first)["hints"][0]))
    heard = [await sock.next("state") for _ in told]
    assert [moves_in(frame) for frame in heard] == told
    # Redis holds all three.  (That nothing is told before the write is the fenced-out
    # owner's test, with such bots too.)
    entries = await log_of(store, meta.id)
    assert heard[-1]["version"] == len(entries) == 3
    assert [e.seat for e in entries if isinstance(e, Play | Pass)] == [0, 1, 2]
    assert view(heard[-1])["turn"] == 0


async def test_an_idle_room_is_dropped_and_the_next_socket_reloads_it(store: TableStore) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    registry = Registry(store, idle_seconds=0)
    try:
        room = await open_room(registry, meta.id)
        sock = await seated(room, 0)
        hints = view(await sock.next("state"))["hints"]
        room.submit(sock.conn, 0, Play(seat=0, cards=hints[0]))
        await sock.next("state")
        room.detach(sock.conn)
        await asyncio.wait_for(room.wait_closed(), GUARD_SECONDS)
        assert registry.live(meta.id) is None
        again = await open_room(registry, meta.id)
        assert again is not room
        assert again.version == 1
        assert again.state.deal.hands == room.state.deal.hands
    finally:
        await registry.close()


async def test_shutdown_closes_every_socket_with_going_away(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, humans=2, bots=["easy"], bot_speed_ms=5000)
    room = await open_room(registry, meta.id)
    socks = [await seated(room, 0), await seated(room, 1)]
    await registry.close()
    assert room.closed
    assert [s.conn.close_code for s in socks] == [1001, 1001]
    # A socket that reaches a room closed meanwhile is sent to reconnect.
    late = Socket(0)
    room.submit(late.conn, 0, AskHint())
    assert late.conn.close_code == CloseCode.TABLE_UNAVAILABLE


async def test_a_new_version_restarts_every_hint_cycle_and_recomputes_the_hints(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    room = await open_room(registry, meta.id)
    (leader, shown), (follower, _) = await seat_all(room, [0, 1])
    room.submit(follower.conn, 0, AskHint())
    assert (await follower.next("hint"))["count"] == 0  # not its turn yet
    for expected in (0, 1):
        room.submit(leader.conn, 0, AskHint())
        assert (await leader.next("hint"))["index"] == expected
    # A bot speed change is a setting, not a new version: the cycle goes on.
    room.submit(leader.conn, 0, BotSpeed(ms=100, seat=0))
    await follower.next("state")
    assert (await leader.next("state"))["version"] == 0
    room.submit(leader.conn, 0, AskHint())
    assert (await leader.next("hint"))["index"] == 2 % len(view(shown)["hints"])
    room.submit(leader.conn, 0, Play(seat=0, cards=view(shown)["hints"][0]))
    await leader.next("state")
    now = await follower.next("state")
    assert view(now)["hints"]
    room.submit(follower.conn, 1, AskHint())
    hint = await follower.next("hint")
    assert (hint["index"], hint["cards"]) == (0, view(now)["hints"][0])


async def test_a_seat_whose_last_socket_leaves_is_shown_disconnected_to_the_others(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    room = await open_room(registry, meta.id)
    (staying, _), (leaving, _) = await seat_all(room, [0, 1])
    room.detach(leaving.conn)
    frame = await staying.next("state")
    assert [s["connected"] for s in frame["table"]["seats"]] == [True, False, False]
    assert (frame["version"], frame["events"]) == (0, [])
    # Coming back (the seat has joined before, so nothing else changes) is announced too.
    await seated(room, 1)
    frame = await staying.next("state")
    assert [s["connected"] for s in frame["table"]["seats"]] == [True, True, False]


async def test_a_fifth_socket_on_a_seat_ends_its_oldest_with_close_4409(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    room = await open_room(registry, meta.id)
    socks = [await seated(room, 0) for _ in range(5)]
    frame = await socks[-1].next("state")
    assert frame["table"]["seats"][0]["connected"] is True
    assert socks[0].conn.close_code == CloseCode.REPLACED
    assert [s.conn.close_code for s in socks[1:]] == [None] * 4
    # The four left hear the table move on; the replaced one hears nothing more.
    room.submit(socks[-1].conn, 0, Play(seat=0, cards=view(frame)["hints"][0]))
    for sock in socks[1:]:
        assert (await sock.state_where(lambda f: f["version"] == 1))["version"] == 1
    while not socks[0].frames.empty():
        assert socks[0].frames.get_nowait()["version"] == 0


async def test_an_invite_is_handed_out_only_once_its_seat_change_is_stored(
    store: TableStore, registry: Registry, redis_client: aioredis.Redis
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=2, bots=["easy"])
    room = await open_room(registry, meta.id)
    host = await seated(room, 0)
    await host.next("state")
    before = await store.load_meta(meta.id)
    # The meta write will be refused (another process took the table): a token handed
    # out before it would open nothing anywhere.
    await take_over(redis_client, meta.id)
    room.submit(host.conn, 0, InviteSeat(seat=1))
    await asyncio.wait_for(room.wait_closed(), GUARD_SECONDS)
    assert host.conn.close_code == CloseCode.TABLE_UNAVAILABLE
    assert [f["type"] for f in drain(host)] == []
    assert await store.load_meta(meta.id) == before


def drain(sock: Socket) -> list[dict[str, Any]]:
    """The frames ``sock`` has been sent and not yet read."""
    frames = []
    while not sock.frames.empty():
        frames.append(sock.frames.get_nowait())
    return frames


def inject(room: Room, command: Command) -> None:
    """Put ``command`` in the room's inbox as a bot task would (bots cannot be told to err)."""
    room._inbox.put_nowait(command)


async def test_a_bot_decision_made_against_an_older_version_is_dropped(
    store: TableStore, registry: Registry
) -> None:
    meta, room, _, follower, now = await after_the_first_play(store, registry)
    # Legal for seat 1 now, but decided at version 0: the table has moved on since.
    inject(room, BotMove(seat=1, version=0, action=Play(seat=1, cards=view(now)["hints"][0])))
    room.submit(follower.conn, 1, AskHint())
    assert (await follower.next())["type"] == "hint"
    assert room.version == 1
    assert len(await log_of(store, meta.id)) == 1


async def test_a_bot_cannot_play_for_another_seat(store: TableStore, registry: Registry) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), bot_speed_ms=5000)
    room = await open_room(registry, meta.id)
    sock = await seated(room, 0)
    hints = view(await sock.next("state"))["hints"]
    inject(room, BotMove(seat=1, version=0, action=Play(seat=0, cards=hints[0])))
    room.submit(sock.conn, 0, AskHint())
    assert (await sock.next())["type"] == "hint"
    assert await log_of(store, meta.id) == []


async def test_a_refused_bot_move_is_replaced_by_a_legal_one_so_the_table_goes_on(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(1), bot_speed_ms=5000)
    room = await open_room(registry, meta.id)
    sock = await seated(room, 0)
    hand = view(await sock.next("state"))["hand"]
    inject(room, BotMove(seat=1, version=0, action=Play(seat=1, cards=[hand[0]])))
    room.submit(sock.conn, 0, AskHint())
    # The replacement is played at once, before the next command (the bot's own
    # timer would take 5 s), so the hint request finds the table moved on.
    frame = await sock.next()
    assert (frame["type"], frame["version"]) == ("state", 1)
    assert (await sock.next())["code"] == "stale_version"
    assert view(frame)["moves"][0]["seat"] == 1
    assert (await log_of(store, meta.id))[0].seat == 1  # type: ignore[union-attr]


async def test_a_seats_hint_cycle_starts_over_when_its_turn_comes_round_again(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(store, seed=seed_where_leader_is(0), humans=3, bots=[])
    room = await open_room(registry, meta.id)
    seated_all = await seat_all(room, [0, 1, 2])
    socks = [sock for sock, _ in seated_all]
    states = [state for _, state in seated_all]
    for expected in (0, 1):
        room.submit(socks[0].conn, 0, AskHint())
        assert (await socks[0].next("hint"))["index"] == expected
    version = 0
    while version == 0 or view(states[0])["turn"] != 0:
        turn = view(states[0])["turn"]
        mine = view(states[turn])
        request = Play(seat=turn, cards=mine["hints"][0]) if mine["hints"] else Pass(seat=turn)
        room.submit(socks[turn].conn, version, request)
        version += 1
        states = [await s.state_where(lambda f, v=version: f["version"] == v) for s in socks]
        assert version < 10
    assert len(view(states[0])["hints"]) > 2
    room.submit(socks[0].conn, version, AskHint())
    assert (await socks[0].next("hint"))["index"] == 0
