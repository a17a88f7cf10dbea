"""The turn clock and stand-in timing, with the time passed in (no real clock)."""

from __future__ import annotations

import pytest

from server.rooms.clock import (
    DEFAULT_TURN_SECONDS,
    Due,
    StandinWhy,
    TurnClock,
    check_grace_seconds,
    check_turn_seconds,
    default_turn_seconds,
    remaining_ms,
    standin_due,
    start_clock,
)

NOW = 1_800_000_000.0


def test_one_human_against_bots_runs_no_clock_and_friends_get_thirty_seconds() -> None:
    assert default_turn_seconds(1) == 0
    assert default_turn_seconds(2) == DEFAULT_TURN_SECONDS == 30
    assert default_turn_seconds(3) == 30


@pytest.mark.parametrize("seconds", [0, 5, 30, 300])
def test_turn_seconds_is_zero_or_five_to_three_hundred(seconds: int) -> None:
    check_turn_seconds(seconds)


@pytest.mark.parametrize("seconds", [-1, 1, 4, 301])
def test_turn_seconds_outside_the_range_is_refused(seconds: int) -> None:
    with pytest.raises(ValueError, match="turn_seconds"):
        check_turn_seconds(seconds)


@pytest.mark.parametrize("seconds", [0, 4, 301])
def test_grace_seconds_outside_the_range_is_refused(seconds: int) -> None:
    with pytest.raises(ValueError, match="grace_seconds"):
        check_grace_seconds(seconds)


def test_a_clock_starts_at_now_plus_the_turn_and_counts_down() -> None:
    clock = start_clock(seat=1, version=7, turn_seconds=30, now=NOW)
    assert clock == TurnClock(seat=1, version=7, deadline=NOW + 30)
    assert remaining_ms(clock, NOW) == 30_000
    assert remaining_ms(clock, NOW + 12.25) == 17_750
    assert remaining_ms(clock, NOW + 31) == 0


def test_no_clock_when_the_table_runs_none() -> None:
    assert start_clock(seat=1, version=7, turn_seconds=0, now=NOW) is None


def test_a_restart_continues_from_the_stored_deadline_not_from_a_fresh_turn() -> None:
    clock = start_clock(seat=2, version=3, turn_seconds=30, now=NOW)
    assert clock is not None
    # Ten seconds later another process loads the stored clock: 20 s are left, not 30.
    assert remaining_ms(clock, NOW + 10) == 20_000
    due = standin_due(on_auto=False, clock=clock, away_since=None, grace_seconds=15)
    assert due == Due(at=NOW + 30, why=StandinWhy.CLOCK)


def test_a_present_human_without_a_clock_is_waited_for() -> None:
    assert standin_due(on_auto=False, clock=None, away_since=None, grace_seconds=15) is None


def test_an_absent_human_is_stood_in_for_after_the_grace_time() -> None:
    due = standin_due(on_auto=False, clock=None, away_since=NOW, grace_seconds=15)
    assert due == Due(at=NOW + 15, why=StandinWhy.GRACE)


def test_the_earlier_of_clock_and_grace_decides() -> None:
    clock = TurnClock(seat=0, version=1, deadline=NOW + 5)
    due = standin_due(on_auto=False, clock=clock, away_since=NOW, grace_seconds=15)
    assert due == Due(at=NOW + 5, why=StandinWhy.CLOCK)
    clock = TurnClock(seat=0, version=1, deadline=NOW + 30)
    due = standin_due(on_auto=False, clock=clock, away_since=NOW, grace_seconds=15)
    assert due == Due(at=NOW + 15, why=StandinWhy.GRACE)


def test_a_seat_on_auto_is_played_at_once() -> None:
    clock = TurnClock(seat=0, version=1, deadline=NOW + 30)
    due = standin_due(on_auto=True, clock=clock, away_since=None, grace_seconds=15)
    assert due is not None
    assert due.why is StandinWhy.AUTO
    assert due.at < NOW
