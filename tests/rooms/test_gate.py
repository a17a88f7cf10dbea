"""What the gate refuses before the room acts: a seat on auto playing, a new match
while one is going on, a name that is no name; and what it lets through."""

from __future__ import annotations

import msgspec
import pytest

from server import engine
from server.engine import NextDeal, Pass
from server.rooms.clock import AUTO_AFTER
from server.rooms.commands import Rename
from server.rooms.gate import check, cleaned
from server.rooms.log import NewMatch, TableMeta, match_seed
from server.rooms.seating import SeatError, SeatReason
from server.rooms.tables import CreateTableRequest, build_table
from server.rooms.updates import RoomError, RoomReason


def table() -> tuple[TableMeta, engine.MatchState]:
    meta, _ = build_table(CreateTableRequest(humans=2, seed=7))
    return meta, engine.new_match(meta.rules, match_seed(meta.seed, 1, meta.secret))


def on_auto(meta: TableMeta, seat: int) -> TableMeta:
    seats = [
        msgspec.structs.replace(s, standins=AUTO_AFTER) if s.seat == seat else s for s in meta.seats
    ]
    return msgspec.structs.replace(meta, seats=seats)


def test_a_seat_on_auto_may_not_play_but_others_may() -> None:
    meta, state = table()
    meta = on_auto(meta, 1)
    with pytest.raises(SeatError) as refused:
        check(Pass(1), 1, meta, state)
    assert refused.value.reason == SeatReason.SEAT_ON_AUTO
    check(Pass(0), 0, meta, state)
    check(NextDeal(), 1, meta, state)  # only play and pass are the stand-in's


def test_a_new_match_is_refused_while_the_match_goes_on() -> None:
    meta, state = table()
    with pytest.raises(RoomError) as refused:
        check(NewMatch(), 0, meta, state)
    assert refused.value.reason == RoomReason.MATCH_NOT_OVER


def test_a_rename_is_cleaned_for_the_sender_s_seat_or_refused() -> None:
    assert cleaned(Rename(seat=2, name="  Ann  "), 1) == Rename(seat=1, name="Ann")
    with pytest.raises(RoomError) as refused:
        cleaned(Rename(seat=1, name="   "), 1)
    assert refused.value.reason == RoomReason.INVALID_NAME
