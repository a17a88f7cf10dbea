"""``decide``: strong bots think in worker processes; failures fall back to legal plays."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator

import pytest

import server.bots as bots
from server.bots import BotAction, decide, is_legal
from server.engine import (
    BOT_HINTS,
    PRESETS,
    Pass,
    Play,
    SeatView,
    apply,
    new_match,
    seat_view,
)


@pytest.fixture
def worker_pool() -> Iterator[None]:
    yield
    bots.shutdown()
    assert multiprocessing.active_children() == []


def opening_view() -> SeatView:
    # As rooms hand it to bots: without hints, so a fallback works from the legal list.
    state = new_match(PRESETS["classic"], 21, 1)
    return seat_view(state, state.deal.turn, hints=BOT_HINTS)


async def test_strong_bot_decides_in_a_worker_and_leaves_no_process_behind(
    worker_pool: None,
) -> None:
    view = opening_view()
    action = await decide("strong", 5, view, 0.2)
    assert is_legal(view, action)
    assert multiprocessing.active_children()  # it really ran in a worker


@pytest.mark.parametrize("level", ["easy", "normal"])
async def test_easy_and_normal_bots_decide_inline_with_a_legal_play(level: str) -> None:
    view = opening_view()
    assert is_legal(view, await decide(level, 1, view, 0.1))


async def test_a_crashing_bot_is_replaced_by_a_legal_play(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Crashing:
        level = "normal"

        def choose(self, view: SeatView) -> BotAction:
            raise RuntimeError("policy bug")

    monkeypatch.setattr(bots, "make_bot", lambda level, seed, budget=0.3: Crashing())
    view = opening_view()
    action = await decide("normal", 1, view, 0.1)
    assert is_legal(view, action)
    assert "policy bug" in caplog.text


async def test_an_illegal_answer_is_replaced_by_a_legal_play(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Passing:
        level = "easy"

        def choose(self, view: SeatView) -> BotAction:
            return Pass(seat=view.seat)  # the leader may not pass

    monkeypatch.setattr(bots, "make_bot", lambda level, seed, budget=0.3: Passing())
    view = opening_view()
    action = await decide("easy", 1, view, 0.1)
    assert not isinstance(action, Pass)
    assert is_legal(view, action)


async def test_an_unknown_level_still_gets_a_legal_play() -> None:
    view = opening_view()
    assert is_legal(view, await decide("grandmaster", 1, view, 0.1))


async def test_a_failing_strong_bot_plays_the_normal_bots_choice(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Overload or a dead worker pool must not drop a strong seat to the first hint.
    def broken_pool() -> None:
        raise RuntimeError("pool is gone")

    monkeypatch.setattr(bots, "get_pool", broken_pool)
    state = new_match(PRESETS["classic"], 4, 1)
    for _ in range(12):
        view = seat_view(state, state.deal.turn)
        expected = bots.make_bot("normal", 7).choose(view)
        assert await decide("strong", 7, view, 0.1) == expected
        apply(state, expected)
    assert "pool is gone" in caplog.text


@pytest.mark.parametrize(
    ("budget", "searched"),
    [(5.0, bots.DEFAULT_BUDGET), (0.125, bots.DEFAULT_BUDGET), (0.05, 0.04), (0.0, 0.01)],
)
def test_a_strong_bot_searches_four_fifths_of_a_short_budget_and_never_past_the_default(
    budget: float, searched: float
) -> None:
    # A table's five-second bot pause must not buy a five-second search on the shared pool.
    assert bots.think_time(budget) == pytest.approx(searched)


def test_a_first_play_without_the_three_of_spades_is_not_legal_for_a_bot() -> None:
    # Another 3 reads the same in rank space ("3" is in view.legal); only the card differs.
    for seed in range(50):
        state = new_match(PRESETS["classic"], seed, 1)
        view = seat_view(state, state.deal.turn)
        other_threes = [c for c in view.hand if c[0] == "3" and c != "3S"]
        if view.must_include == "3S" and other_threes:
            assert "3" in view.legal
            assert not is_legal(view, Play(seat=view.seat, cards=[other_threes[0]]))
            assert is_legal(view, Play(seat=view.seat, cards=["3S"]))
            return
    pytest.fail("no opening hand with two 3s among the seeds tried")


@pytest.mark.parametrize("preset", ["classic", "sixteen", "kawu"])
def test_the_fallback_from_a_bots_view_is_always_a_legal_action(preset: str) -> None:
    # A bot's view has no hints: the fallback must still find a play the engine takes,
    # the 3 of spades included on a match's first play.
    for seed in range(8):
        state = new_match(PRESETS[preset], seed, 1)
        while state.deal.result is None:
            view = seat_view(state, state.deal.turn, hints=BOT_HINTS)
            action = bots.fallback_action(view)
            assert is_legal(view, action)
            apply(state, action)
