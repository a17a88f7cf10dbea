"""Players' entropy in the room (a real Redis, in-memory sockets, an injected clock): a deal
waits for the connected humans' client seeds, at most ENTROPY_WAIT_SECONDS, mixes them and
logs them; and any log with client seeds replays to exactly the match that was played."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from room_helpers import START, Socket, log_of, new_table
from test_standin import FakeClock

from server import engine
from server.engine import NextDeal, Pass, Play
from server.rooms.entropy import (
    ENTROPY_WAIT_SECONDS,
    GiveEntropy,
    first_commitment,
)
from server.rooms.log import LogEntry, NewMatch, TableMeta, match_seed, rebuild
from server.rooms.registry import Registry
from server.rooms.room import Room
from server.rooms.store import TableStore
from server.rooms.tables import CreateTableRequest, build_table

SEED_A = "a" * 32
SEED_B = "b" * 32


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def registry(store: TableStore, clock: FakeClock) -> AsyncIterator[Registry]:
    reg = Registry(store, idle_seconds=60, clock=clock)
    yield reg
    await reg.close()


def view(frame: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = frame["view"]
    return value


def fairness(frame: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = frame["table"]["fairness"]  # type: ignore[index]
    return value


async def to_result(
    room: Room, sock: Socket, frame: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Play ``sock``'s turns (first hint, or pass) from ``frame`` (else the next state)
    until the deal is over; that frame."""
    while True:
        if frame is None:
            frame = await sock.next("state")
        v = view(frame)
        if v["result"] is not None:
            return frame
        if v["turn"] == sock.conn.seat:
            move = Play(v["seat"], v["hints"][0]) if v["hints"] else Pass(v["seat"])
            room.submit(sock.conn, frame["version"], move)
        frame = None


async def first_deal_over(
    store: TableStore, registry: Registry, **fields: Any
) -> tuple[TableMeta, Room, Socket, dict[str, Any]]:
    meta, _ = await new_table(store, bot_speed_ms=0, deals=5, **fields)
    room = await registry.room(meta.id)
    assert room is not None
    sock = Socket(0)
    await room.attach(sock.conn)
    return meta, room, sock, await to_result(room, sock)


async def second_deal_over_as_a_sender(
    store: TableStore, registry: Registry, **fields: Any
) -> tuple[TableMeta, Room, Socket, dict[str, Any]]:
    """The first deal over, the seat's seed given before it asks for the second (so
    its client is one that sends seeds), and the second deal over."""
    meta, room, sock, end = await first_deal_over(store, registry, **fields)
    room.submit(sock.conn, end["version"], GiveEntropy(fairness(end)["next"]["commitment"], SEED_B))
    room.submit(sock.conn, end["version"], NextDeal())
    second = await sock.state_where(lambda f: view(f)["deal_no"] == 2)
    return meta, room, sock, await to_result(room, sock, second)


async def test_a_client_that_never_sent_a_seed_is_not_waited_for(
    store: TableStore, registry: Registry
) -> None:
    meta, room, sock, end = await first_deal_over(store, registry, seed=10)
    room.submit(sock.conn, end["version"], NextDeal())
    await sock.state_where(lambda f: view(f)["deal_no"] == 2)
    assert (await log_of(store, meta.id))[end["version"]] == NextDeal()


async def test_the_next_deal_waits_for_the_seat_s_seed_and_mixes_it_into_the_log(
    store: TableStore, registry: Registry
) -> None:
    meta, room, sock, end = await second_deal_over_as_a_sender(store, registry, seed=11)
    upcoming = fairness(end)["next"]
    assert (upcoming["match_no"], upcoming["deal_no"]) == (0, 3)
    assert upcoming["received"] == [False, False, False]
    room.submit(sock.conn, end["version"], NextDeal())
    room.submit(sock.conn, end["version"], GiveEntropy(upcoming["commitment"], SEED_A))
    dealt = await sock.state_where(lambda f: view(f)["deal_no"] == 3)
    # The seeds mixed are shown with the match's seed only, once the match is over.
    assert fairness(dealt)["entropy"] == []
    assert fairness(dealt)["next"] is None
    entries = await log_of(store, meta.id)
    assert entries[end["version"]] == NextDeal(entropy=(SEED_A, "", ""))
    expected = engine.cards.deal_hands("AS", match_seed(11, 0), 3, (SEED_A, "", ""))
    assert sorted(view(dealt)["hand"]) == sorted(engine.card_code(c) for c in expected[0])


async def test_a_seed_for_another_commitment_or_a_second_seed_is_refused_with_a_reason(
    store: TableStore, registry: Registry
) -> None:
    _, room, sock, end = await first_deal_over(store, registry, seed=12)
    room.submit(sock.conn, end["version"], GiveEntropy("0" * 64, SEED_A))
    assert (await sock.next("error"))["code"] == "entropy_closed"
    commitment = fairness(end)["next"]["commitment"]
    room.submit(sock.conn, end["version"], GiveEntropy(commitment, SEED_A))
    acked = await sock.state_where(lambda f: fairness(f)["next"]["received"][0])
    assert acked["version"] == end["version"]
    room.submit(sock.conn, end["version"], GiveEntropy(commitment, SEED_B))
    assert (await sock.next("error"))["code"] == "entropy_given"


async def test_a_sending_seat_that_sends_no_seed_is_waited_for_then_dealt_without(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    meta, room, sock, end = await second_deal_over_as_a_sender(store, registry, seed=13)
    room.submit(sock.conn, end["version"], NextDeal())
    # The deal is held: a refused seed, answered after it, shows the room has handled it.
    room.submit(sock.conn, end["version"], GiveEntropy("0" * 64, SEED_A))
    assert (await sock.next("error"))["code"] == "entropy_closed"
    assert (await log_of(store, meta.id))[end["version"] :] == []
    clock.advance(ENTROPY_WAIT_SECONDS)
    await sock.state_where(lambda f: view(f)["deal_no"] == 3)
    assert (await log_of(store, meta.id))[end["version"]] == NextDeal()


async def creator_joins(
    store: TableStore, registry: Registry, **fields: Any
) -> tuple[TableMeta, Room, Socket]:
    """A table whose creator's client declared that it sends seeds; its creator's socket
    seated (no frame comes yet: the first deal waits)."""
    meta, _ = await new_table(store, bot_speed_ms=0, sends_seeds=True, **fields)
    room = await registry.room(meta.id)
    assert room is not None
    sock = Socket(0)
    await room.attach(sock.conn)
    return meta, room, sock


async def test_the_first_deal_mixes_the_seed_the_creator_sends_right_after_its_join(
    store: TableStore, registry: Registry
) -> None:
    meta, room, sock = await creator_joins(store, registry, seed=21)
    room.submit(sock.conn, 0, GiveEntropy(first_commitment(meta), SEED_A))
    first = await sock.next()
    assert (first["type"], first["version"]) == ("state", 0)
    expected = engine.cards.deal_hands("AS", match_seed(21, 0), 1, (SEED_A, "", ""))
    assert sorted(view(first)["hand"]) == sorted(engine.card_code(c) for c in expected[0])
    assert fairness(first)["commitments"] == [first_commitment(meta)]
    # The first deal has no log entry: the meta keeps its seeds, and a reload deals the same.
    loaded = await store.load(meta.id)
    assert loaded is not None
    assert (loaded[0].first_deal_waits, loaded[0].first_entropy) == (False, (SEED_A, "", ""))
    assert loaded[1] == []
    assert rebuild(loaded[0], []).match.deal.hands == room.state.deal.hands


async def test_a_seed_that_comes_before_the_join_deals_the_first_deal_at_the_join(
    store: TableStore, registry: Registry
) -> None:
    # A forwarded socket's seed may reach the owner before its join does.
    meta, _ = await new_table(store, bot_speed_ms=0, sends_seeds=True, seed=22)
    room = await registry.room(meta.id)
    assert room is not None
    sock = Socket(0)
    room.submit(sock.conn, 0, GiveEntropy(first_commitment(meta), SEED_A))
    await room.attach(sock.conn)
    assert (await sock.next())["type"] == "state"
    assert room.meta.first_entropy == (SEED_A, "", "")


async def test_a_creator_that_declared_seeds_and_sends_none_is_dealt_after_the_wait(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    meta, room, sock = await creator_joins(store, registry, humans=2, bots=["normal"])
    # A friend comes and goes: nothing is shown of a deal not dealt yet.
    friend = Socket(1)
    await room.attach(friend.conn)
    room.detach(friend.conn)
    # Nothing is dealt yet: acting is refused, and that refusal is the first frame.
    room.submit(sock.conn, 0, Pass(0))
    refused = await sock.next()
    assert (refused["type"], refused["code"]) == ("error", "not_dealt")
    assert room.meta.first_deal_waits
    clock.advance(ENTROPY_WAIT_SECONDS)
    first = await sock.next()
    assert first["type"] == "state"
    expected = engine.cards.deal_hands("AS", match_seed(meta.seed, 0, meta.secret), 1)
    assert sorted(view(first)["hand"]) == sorted(engine.card_code(c) for c in expected[0])
    assert (room.meta.first_deal_waits, room.meta.first_entropy) == (False, ())


async def test_a_script_that_never_declared_seeds_is_dealt_at_once(
    store: TableStore, registry: Registry, clock: FakeClock
) -> None:
    # The injected clock never moves here: a table that waited would never deal.
    meta, *_ = await first_deal_over(store, registry, seed=24)
    assert not meta.first_deal_waits
    assert clock.t == START


async def test_hostile_first_deal_seeds_are_refused_with_reasons(
    store: TableStore, registry: Registry
) -> None:
    meta, room, sock = await creator_joins(store, registry, seed=25, humans=2, bots=["normal"])
    friend = Socket(1)
    await room.attach(friend.conn)
    room.submit(friend.conn, 0, GiveEntropy("0" * 64, SEED_A))
    assert (await friend.next("error"))["code"] == "entropy_closed"
    # The friend's seed is taken (the deal still waits for the creator's), not replaced.
    room.submit(friend.conn, 0, GiveEntropy(first_commitment(meta), SEED_A))
    room.submit(friend.conn, 0, GiveEntropy(first_commitment(meta), SEED_B))
    assert (await friend.next("error"))["code"] == "entropy_given"
    room.submit(friend.conn, 0, Pass(1))
    assert (await friend.next("error"))["code"] == "not_dealt"
    room.submit(sock.conn, 0, GiveEntropy(first_commitment(meta), SEED_B))
    assert (await sock.next())["type"] == "state"
    assert room.meta.first_entropy == (SEED_B, SEED_A, "")
    # Once dealt, a late seed for it is refused: no deal awaits one.
    room.submit(sock.conn, 0, GiveEntropy(first_commitment(meta), SEED_B))
    assert (await sock.next("error"))["code"] == "entropy_closed"


def _meta(seed: int, deals: int) -> TableMeta:
    request = msgspec.convert(
        {"seed": seed, "deals": deals, "humans": 3, "bots": []}, CreateTableRequest
    )
    return build_table(request)[0]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**63 - 1),
    deals=st.sampled_from(engine.MATCH_LENGTHS),
    rng_seed=st.integers(0, 2**32 - 1),
)
def test_any_log_with_client_seeds_replays_to_the_match_that_was_played(
    seed: int, deals: int, rng_seed: int
) -> None:
    meta = _meta(seed, deals)
    rng = random.Random(rng_seed)

    def seeds() -> tuple[str, ...]:
        # Each seat gave a seed, or none (a bot, a silent client): every mix occurs.
        return tuple(f"{rng.getrandbits(128):032x}" if rng.random() < 0.7 else "" for _ in range(3))

    entries: list[LogEntry] = []
    live = engine.new_match(meta.rules, match_seed(seed, 0, meta.secret), deals)
    for match_no in range(2):
        if match_no:
            first = seeds()
            entries.append(NewMatch(entropy=first))
            live = engine.new_match(meta.rules, match_seed(seed, 1, meta.secret), deals, first)
        while live.winners is None:
            deal = live.deal
            action: engine.Action
            if deal.result is not None:
                action = NextDeal(entropy=seeds())
            else:
                v = engine.seat_view(live, deal.turn)
                if v.can_pass:
                    action = Pass(deal.turn)
                else:
                    action = Play(
                        deal.turn, engine.pick_cards(v.hand, rng.choice(v.legal), v.must_include)
                    )
            engine.apply(live, action)
            entries.append(action)
            if isinstance(action, NextDeal):
                mixed = engine.cards.deal_hands(
                    meta.rules.removed_ace, live.seed, live.deal.deal_no, action.entropy
                )
                assert live.deal.hands == mixed
        rebuilt = rebuild(meta, entries).match
        assert msgspec.to_builtins(rebuilt) == msgspec.to_builtins(live)
        # One seat's seed alone changes the deal: no seat's seed is ignored.
        for mixed in live.entropy:
            if any(mixed):
                seat = next(s for s in range(3) if mixed[s])
                other = tuple("0" * 32 if s == seat else x for s, x in enumerate(mixed))
                assert engine.cards.deal_key(live.seed, 1, mixed) != engine.cards.deal_key(
                    live.seed, 1, other
                )
