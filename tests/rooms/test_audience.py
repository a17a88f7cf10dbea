"""A table's audience: who listens, and what each listener hears."""

from __future__ import annotations

from typing import Literal

import pytest

from server import engine
from server.engine import PRESETS, SeatView
from server.rooms.audience import Audience
from server.rooms.emotes import EMOTE_BURST
from server.rooms.log import SeatMeta, TableMeta
from server.rooms.seating import SeatError, SeatReason
from server.rooms.seats import SPECTATOR
from server.rooms.updates import (
    Closing,
    EmoteShown,
    HintAnswer,
    StateUpdate,
    TableSnapshot,
    Update,
    WatchUpdate,
)


class Ear:
    """A listener that keeps what it hears."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.heard: list[Update] = []
        self.ended: Closing | None = None

    @property
    def open(self) -> bool:
        return self.ended is None

    def push(self, update: Update) -> bool:
        self.heard.append(update)
        return True

    def end(self, why: Closing) -> None:
        self.ended = why


def seats(*kinds: Literal["human", "bot"]) -> list[SeatMeta]:
    return [SeatMeta(seat=i, kind=kind, name=f"s{i}") for i, kind in enumerate(kinds)]


def snapshot() -> TableSnapshot:
    meta = TableMeta(
        id="t",
        rules=PRESETS["classic"],
        seed=1,
        deals=1,
        seats=seats("human", "human", "bot"),
        bot_speed_ms=0,
        created_at=0.0,
    )
    return TableSnapshot(meta=meta, connected=(True, False, False), bot_speed_ms=0, match_no=1)


def seated(audience: Audience, *listeners: Ear) -> None:
    audience.match_seats(seats("human", "human", "bot"))
    for listener in listeners:
        if listener.seat == SPECTATOR:
            audience.admit_spectator(listener)
        else:
            audience.seat(listener)


def test_each_seat_hears_its_own_view_and_spectators_the_public_one() -> None:
    state = engine.new_match(PRESETS["classic"], 5, 1)
    audience = Audience(max_spectators=2)
    tab_a, tab_b, friend, watcher = Ear(0), Ear(0), Ear(1), Ear(SPECTATOR)
    seated(audience, tab_a, tab_b, friend, watcher)
    audience.broadcast(state, 7, snapshot(), [])
    (a,), (b,), (f,), (w,) = tab_a.heard, tab_b.heard, friend.heard, watcher.heard
    assert isinstance(a, StateUpdate)
    assert isinstance(b, StateUpdate)
    assert isinstance(f, StateUpdate)
    assert isinstance(w, WatchUpdate)
    assert a.view is b.view  # built once for the seat, shared by its sockets
    assert (a.view.seat, f.view.seat) == (0, 1)
    assert a.view.hand != f.view.hand
    assert not isinstance(w.view, SeatView)
    assert {a.version, f.version, w.version} == {7}


def test_a_new_version_builds_new_views() -> None:
    state = engine.new_match(PRESETS["classic"], 5, 1)
    audience = Audience(max_spectators=2)
    before = audience.view(state, 0)
    assert audience.view(state, 0) is before
    audience.new_version()
    assert audience.view(state, 0) is not before
    audience.forget_views()
    assert audience.view(state, 0) == before


def test_the_hint_cycle_wraps_and_starts_over_at_a_new_version() -> None:
    state = engine.new_match(PRESETS["classic"], 5, 1)
    leader = state.deal.turn
    audience = Audience(max_spectators=2)
    ear = Ear(leader)
    count = len(engine.hints_for(state, leader))
    for _ in range(count + 1):
        audience.hint(ear, state, 0)
    answers = [u for u in ear.heard if isinstance(u, HintAnswer)]
    assert [a.index for a in answers] == [*range(count), 0]
    audience.new_version()
    audience.hint(ear, state, 1)
    last = ear.heard[-1]
    assert isinstance(last, HintAnswer)
    assert last.index == 0


def test_the_gallery_takes_no_more_spectators_than_its_limit() -> None:
    audience = Audience(max_spectators=1)
    audience.admit_spectator(Ear(SPECTATOR))
    with pytest.raises(SeatError) as refused:
        audience.admit_spectator(Ear(SPECTATOR))
    assert refused.value.reason is SeatReason.TOO_MANY_SPECTATORS
    assert len(audience.spectators) == 1


def test_a_seat_keeps_its_newest_sockets_and_the_oldest_beyond_them_is_told_why() -> None:
    audience = Audience(max_spectators=1, max_sockets_per_seat=2)
    first, second, third, friend = Ear(0), Ear(0), Ear(0), Ear(1)
    seated(audience, first, second, friend)
    assert first.ended is None
    seated(audience, third)
    assert first.ended is Closing.REPLACED
    assert audience.humans[0] == [second, third]
    assert (second.ended, third.ended, friend.ended) == (None, None, None)
    # Only the live ones hear the table.
    state = engine.new_match(PRESETS["classic"], 5, 1)
    audience.broadcast(state, 0, snapshot(), [])
    assert (len(first.heard), len(second.heard), len(third.heard)) == (0, 1, 1)


def test_a_seat_a_bot_takes_over_ends_its_sockets() -> None:
    audience = Audience(max_spectators=1)
    ear = Ear(1)
    seated(audience, ear)
    audience.match_seats(seats("human", "bot", "bot"))
    assert ear.ended is Closing.REVOKED
    assert 1 not in audience.humans
    assert audience.connected(seats("human", "bot", "bot")) == (False, False, False)


def test_emotes_reach_everyone_until_the_seat_has_used_its_allowance() -> None:
    audience = Audience(max_spectators=1)
    me, friend, watcher = Ear(0), Ear(1), Ear(SPECTATOR)
    seated(audience, me, friend, watcher)
    for _ in range(EMOTE_BURST):
        audience.emote(me, "wave", now=100.0)
    with pytest.raises(SeatError) as refused:
        audience.emote(me, "wave", now=100.0)
    assert refused.value.reason is SeatReason.TOO_MANY_EMOTES
    shown = EMOTE_BURST
    for ear in (me, friend, watcher):
        assert ear.heard == [EmoteShown(0, "wave")] * shown
    audience.emote(friend, "wave", now=100.0)  # each seat has its own allowance
    assert watcher.heard[-1] == EmoteShown(1, "wave")


def test_everyone_ends_when_the_table_closes() -> None:
    audience = Audience(max_spectators=1)
    ears = [Ear(0), Ear(1), Ear(SPECTATOR)]
    seated(audience, *ears)
    assert audience.any_connection()
    audience.end_everyone(Closing.SHUTDOWN)
    assert [e.ended for e in ears] == [Closing.SHUTDOWN] * 3
