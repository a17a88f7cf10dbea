"""Clocks per turn and what each committed move does to the seats (pure, time passed in)."""

from __future__ import annotations

import msgspec
from room_helpers import seed_where_leader_is

from server import engine
from server.engine import NextDeal, Pass, Play
from server.rooms.clock import AUTO_AFTER, TurnClock
from server.rooms.log import TableMeta
from server.rooms.seating import mark_joined, on_auto, open_seat
from server.rooms.tables import CreateTableRequest, build_table
from server.rooms.turns import clock_for, meta_after, seats_settled

NOW = 1_800_000_000.0


def two_humans(leader: int = 1, turn_seconds: int = 30) -> tuple[TableMeta, engine.MatchState]:
    seed = seed_where_leader_is(leader)
    meta, _ = build_table(
        CreateTableRequest(humans=2, bots=["easy"], seed=seed, turn_seconds=turn_seconds)
    )
    meta = mark_joined(mark_joined(meta, 0), 1)
    return meta, engine.new_match(meta.rules, seed)


def test_no_clock_runs_until_every_human_seat_was_taken_once() -> None:
    meta, state = two_humans()
    unsettled = msgspec.structs.replace(
        meta, seats=[msgspec.structs.replace(s, joined=False) for s in meta.seats]
    )
    assert not seats_settled(unsettled)
    assert clock_for(unsettled, state, 0, NOW) is None
    assert seats_settled(meta)
    assert clock_for(meta, state, 0, NOW) == TurnClock(seat=1, version=0, deadline=NOW + 30)


def test_the_stored_clock_of_this_turn_continues_and_a_new_turn_gets_a_new_one() -> None:
    meta, state = two_humans()
    stored = TurnClock(seat=1, version=0, deadline=NOW - 5)
    meta = msgspec.structs.replace(meta, clock=stored)
    assert clock_for(meta, state, 0, NOW + 100) is stored
    assert clock_for(meta, state, 3, NOW) == TurnClock(seat=1, version=3, deadline=NOW + 30)


def test_bots_tables_without_a_clock_and_seats_on_auto_run_no_clock() -> None:
    meta, state = two_humans(leader=2)
    assert clock_for(meta, state, 0, NOW) is None  # seat 2 is a bot
    meta, state = two_humans(turn_seconds=0)
    assert clock_for(meta, state, 0, NOW) is None
    meta, state = two_humans()
    auto = msgspec.structs.replace(
        meta,
        seats=[
            msgspec.structs.replace(s, standins=AUTO_AFTER) if s.seat == 1 else s
            for s in meta.seats
        ],
    )
    assert on_auto(auto.seats[1])
    assert clock_for(auto, state, 0, NOW) is None


def test_a_stand_in_move_extends_the_streak_and_an_own_move_resets_it() -> None:
    meta, state = two_humans()
    cards = engine.seat_view(state, 1).hints[0]
    move = Play(seat=1, cards=cards)
    engine.apply(state, move)
    after = meta_after(meta, move, state, 1, NOW, standin=True)
    assert after.seats[1].standins == 1
    assert after.clock is None or after.clock.seat != 1
    again = meta_after(after, Pass(seat=1), state, 2, NOW)
    assert again.seats[1].standins == 0


def test_the_next_deal_retires_open_seat_invites() -> None:
    meta, state = two_humans()
    opened = open_seat(meta, 0, 2, "hash-of-an-invite", between_deals=True)
    after = meta_after(opened, NextDeal(), state, 9, NOW)
    assert after.seats[2].token_hash is None
    assert [r.why for r in after.retired] == ["expired"]
