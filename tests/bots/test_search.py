"""The strong bot's search honours its budget, is deterministic, and solves endgames."""

from __future__ import annotations

import gc
import random

from server.bots import make_bot
from server.bots.levels import NormalBot, legal_of, situation_of
from server.bots.observe import observe
from server.bots.policy import normal_choice
from server.bots.search import MOVES_PER_SECOND, SearchStats, search
from server.bots.strong import StrongBot
from server.engine import PRESETS, Play, SeatView, apply, new_match, parse_cards, seat_view
from server.engine.players import counts_of


class TickingClock:
    """A fake clock that moves ``step`` seconds every time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now


def view_with_choices(preset: str, seed: int, min_cards: int = 0) -> SeatView:
    """A view where the seat to move has several legal plays (after ``min_cards``)."""
    state = new_match(PRESETS[preset], seed, 1)
    bots = [make_bot("normal", seed) for _ in range(3)]
    while state.deal.result is None:
        view = seat_view(state, state.deal.turn)
        if len(view.legal) >= 3 and sum(view.counts) <= 48 - min_cards:
            return view
        apply(state, bots[state.deal.turn].choose(view))
    raise AssertionError("no such position in this deal")


def test_search_stops_at_the_first_clock_reading_past_its_deadline() -> None:
    view = view_with_choices("classic", 4)
    obs = observe(view)
    stats = SearchStats()
    clock = TickingClock(step=0.0001)
    search(obs, legal_of(obs), random.Random(1), 0.05, clock, stats)
    assert stats.stopped_by_clock
    assert stats.samples >= 1
    # 50 ms of budget at 0.1 ms a reading: the 501st reading is past the deadline.
    assert clock.reads == 501
    assert stats.moves < 0.05 * MOVES_PER_SECOND


def test_search_out_of_time_before_one_sample_plays_the_normal_choice() -> None:
    view = view_with_choices("classic", 4)
    obs = observe(view)
    legal = legal_of(obs)
    stats = SearchStats()
    play = search(obs, legal, random.Random(1), 0.5, TickingClock(step=1.0), stats)
    assert stats.stopped_by_clock
    assert stats.samples == 0
    assert play == normal_choice(situation_of(obs), legal)


def test_search_stops_on_its_work_budget_when_the_clock_stands_still() -> None:
    view = view_with_choices("classic", 4)
    obs = observe(view)
    stats = SearchStats()
    search(obs, legal_of(obs), random.Random(1), 0.02, lambda: 0.0, stats)
    assert not stats.stopped_by_clock
    assert stats.moves >= 0.02 * MOVES_PER_SECOND
    assert stats.samples >= 1


def test_same_seed_and_view_give_the_same_strong_play() -> None:
    for seed in (2, 9):
        view = view_with_choices("sixteen", seed, min_cards=10)
        first = StrongBot(seed, budget=0.02, clock=lambda: 0.0)
        again = StrongBot(seed, budget=0.02, clock=lambda: 0.0)
        assert first.choose(view) == again.choose(view)
        assert first.last_stats.samples == again.last_stats.samples > 0


def test_a_late_position_is_searched_exactly() -> None:
    for seed in range(30):
        state = new_match(PRESETS["classic"], seed, 1)
        bots = [make_bot("normal", seed) for _ in range(3)]
        while state.deal.result is None:
            view = seat_view(state, state.deal.turn)
            if sum(view.counts) <= 9 and len(view.legal) >= 2:
                bot = StrongBot(seed, budget=0.01, clock=lambda: 0.0)
                action = bot.choose(view)
                assert bot.last_stats.exact == bot.last_stats.samples > 0
                apply(state, action)
                return
            apply(state, bots[state.deal.turn].choose(view))
    raise AssertionError("no late position with a choice in the deals tried")


def test_the_budget_counts_from_when_the_decision_was_asked() -> None:
    view = view_with_choices("classic", 4)
    obs = observe(view)
    clock = TickingClock(step=0.0001)
    asked = clock()
    clock.now += 0.04  # 40 ms lost before the search started (a queue, a busy core)
    stats = SearchStats()
    search(obs, legal_of(obs), random.Random(1), 0.05, clock, stats, asked_at=asked)
    assert stats.stopped_by_clock
    # 10 ms were left: about 100 readings of 0.1 ms, not the 500 a fresh budget gives.
    assert 95 <= clock.reads - 1 <= 105


def test_a_decision_asked_a_budget_ago_plays_the_normal_choice_at_once() -> None:
    view = view_with_choices("classic", 4)
    clock = TickingClock(step=0.0001)
    bot = StrongBot(4, budget=0.1, clock=clock)
    action = bot.choose(view, asked_at=clock() - 0.1)
    assert bot.last_stats.samples == 0
    assert bot.last_stats.stopped_by_clock
    assert action == NormalBot(4).choose(view)


def test_no_garbage_collection_runs_inside_a_strong_decision() -> None:
    view = view_with_choices("classic", 4)
    bot = StrongBot(4, budget=0.02, clock=lambda: 0.0)
    inside = False
    during: list[str] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and inside:
            during.append(f"generation {info['generation']}")

    threshold = gc.get_threshold()
    gc.callbacks.append(watch)
    gc.set_threshold(10)  # a collection every few allocations, were it enabled
    try:
        inside = True
        bot.choose(view)
        inside = False
        assert bot.last_stats.samples > 0
        assert during == []
        # Whatever the decision left alive is out of the collector's way.
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(watch)
        gc.unfreeze()


def exact_value(state_hands: list[int], obs_sim: object, play: int, seat: int) -> int:
    """The deal score ``seat`` gets from here if it plays ``play`` and everyone then
    plays perfectly for themselves, with the true hands known (max-n)."""
    from server.bots.search import _Endgame, _Timer

    sim = obs_sim.sim(state_hands)  # type: ignore[attr-defined]
    sim.bomb = [0, 0, 0]
    sim.play(play)
    return _Endgame(10**9, _Timer(lambda: 0.0, 1.0)).value(sim)[seat]


def test_in_late_positions_strong_chooses_better_than_normal_against_the_true_hands() -> None:
    # The search must pick its best candidate, and the endgame must let each seat
    # maximise its own score: with either turned round, strong does worse than normal.
    # A strong bot that played exactly like normal would tie, so the test asks for a
    # margin.  Over these 120 seeded deals (clock stopped, so the search is the same
    # on every machine) the first late position of each of 32 deals gave strong 114
    # points and normal 101, strong ahead in 5 positions and behind in none.
    strong_total = normal_total = positions = ahead = 0
    for seed in range(120):
        state = new_match(PRESETS["classic"], seed, 1)
        bots = [make_bot("normal", seed) for _ in range(3)]
        while state.deal.result is None:
            view = seat_view(state, state.deal.turn)
            if sum(view.counts) <= 12 and len(view.legal) >= 2:
                obs = observe(view)
                hands = [counts_of(h) for h in state.deal.hands]
                strong = StrongBot(seed, budget=0.01, clock=lambda: 0.0)
                strong_play = strong.choose(view)
                normal_play = bots[view.seat].choose(view)
                values = []
                for action in (strong_play, normal_play):
                    assert isinstance(action, Play)
                    played = counts_of(parse_cards(action.cards))
                    values.append(exact_value(hands, obs, played, view.seat))
                strong_total += values[0]
                normal_total += values[1]
                ahead += values[0] > values[1]
                positions += 1
                break
            apply(state, bots[state.deal.turn].choose(view))
    assert positions >= 20
    assert strong_total >= normal_total + 10
    assert ahead >= 4
