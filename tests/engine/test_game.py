"""Turn order, leading, following, tricks, last card, deals and matches (apply)."""

from __future__ import annotations

import random

import pytest

from server import engine
from server.engine import (
    DealEnded,
    DealStarted,
    LastCard,
    MatchEnded,
    NextDeal,
    Passed,
    Play,
    Played,
    Reason,
    TrickCleared,
)
from server.engine.cards import THREE_OF_SPADES

from .helpers import hand_codes, make_state, pass_, play, snapshot
from .playout import random_action

PRESETS = ("classic", "sixteen", "kawu")


def _holder_of_three_of_spades(state: engine.MatchState) -> int:
    return next(s for s in range(3) if THREE_OF_SPADES in state.deal.hands[s])


def _finish_deal(state: engine.MatchState, rng: random.Random) -> None:
    while state.deal.result is None:
        engine.apply(state, random_action(state, rng))


def test_play_passes_from_seat_0_to_1_to_2_and_back() -> None:
    state = make_state(["3S 9S 4D", "5S TS 4H", "7S JS 4C"])
    seen = []
    for seat, card in [(0, "3S"), (1, "5S"), (2, "7S"), (0, "9S"), (1, "TS"), (2, "JS")]:
        seen.append(state.deal.turn)
        play(state, seat, card)
    assert seen == [0, 1, 2, 0, 1, 2]
    assert state.deal.turn == 0


@pytest.mark.parametrize("preset", PRESETS)
def test_holder_of_three_of_spades_leads_the_first_deal(preset: str) -> None:
    for seed in range(20):
        state = engine.new_match(engine.PRESETS[preset], seed)
        assert state.deal.turn == state.deal.leader == _holder_of_three_of_spades(state)
        assert state.deal.table is None


@pytest.mark.parametrize("preset", ["classic", "kawu"])
def test_rule_b_first_play_must_contain_three_of_spades(preset: str) -> None:
    state = engine.new_match(engine.PRESETS[preset], 3)
    seat = state.deal.turn
    others = [c for c in hand_codes(state, seat) if c != "3S"]
    before = snapshot(state)
    with pytest.raises(engine.IllegalActionError) as err:
        engine.apply(state, Play(seat=seat, cards=[others[-1]]))
    assert err.value.reason is Reason.MUST_INCLUDE_THREE_OF_SPADES
    assert snapshot(state) == before
    events = engine.apply(state, Play(seat=seat, cards=["3S"]))
    assert events[0] == Played(seat=seat, cards=["3S"], kind="single", top="3")


def test_rule_b_counts_the_card_not_the_rank() -> None:
    # The next seat holds two cards, so the last-card rule allows any single: only
    # rule B can refuse the 3 of hearts.
    state = make_state(["3S 3H 9D", "5S 6S", "7S"], needs_three=True)
    with pytest.raises(engine.IllegalActionError) as err:
        play(state, 0, "3H")
    assert err.value.reason is Reason.MUST_INCLUDE_THREE_OF_SPADES
    play(state, 0, "3S 3H")
    assert state.deal.needs_three_of_spades is False


def test_sixteen_first_play_is_free() -> None:
    state = engine.new_match(engine.PRESETS["sixteen"], 3)
    seat = state.deal.turn
    highest = hand_codes(state, seat)[-1]
    assert highest != "3S"
    view = engine.seat_view(state, seat)
    assert view.must_include is None
    engine.apply(state, Play(seat=seat, cards=[highest]))
    assert state.deal.table is not None


def test_rule_b_binds_only_the_first_play_of_the_match() -> None:
    state = make_state(["3S 9S KS", "3H 3D", "3C"], needs_three=True)
    play(state, 0, "3S")
    pass_(state, 1)
    pass_(state, 2)
    # A new trick in the same deal: any card leads.
    play(state, 0, "9S")
    assert state.deal.table is not None


def _later_deal_cases(preset: str) -> tuple[list[tuple[int, int, int]], engine.MatchState]:
    """(winner of deal n, holder of 3S in deal n+1, leader of deal n+1) over a 10-deal match."""
    rng = random.Random(f"leader/{preset}")
    state = engine.new_match(engine.PRESETS[preset], 11, 10)
    cases: list[tuple[int, int, int]] = []
    while True:
        _finish_deal(state, rng)
        assert state.deal.result is not None
        if state.winners is not None:
            return cases, state
        winner = state.deal.result.winner
        events = engine.apply(state, NextDeal())
        assert len(events) == 1
        assert isinstance(events[0], DealStarted)
        assert events[0].leader == state.deal.turn == state.deal.leader
        cases.append((winner, _holder_of_three_of_spades(state), state.deal.turn))
        # Rule B is about the first play of the match only.
        assert state.deal.needs_three_of_spades is False


@pytest.mark.parametrize("preset", ["classic", "kawu"])
def test_rule_c_winner_of_previous_deal_leads(preset: str) -> None:
    cases, _ = _later_deal_cases(preset)
    assert len(cases) == 9
    assert all(leader == winner for winner, _, leader in cases)
    assert any(holder != winner for winner, holder, _ in cases)


def test_rule_c_sixteen_holder_of_three_of_spades_leads_again() -> None:
    cases, _ = _later_deal_cases("sixteen")
    assert len(cases) == 9
    assert all(leader == holder for _, holder, leader in cases)
    assert any(holder != winner for winner, holder, _ in cases)


def test_later_deals_are_dealt_afresh_from_the_seed() -> None:
    _, a = _later_deal_cases("classic")
    _, b = _later_deal_cases("classic")
    assert [r.deal_no for r in a.results] == list(range(1, 11))
    assert snapshot(a) == snapshot(b)


def test_leader_plays_any_combination() -> None:
    state = make_state(["5S 5H 6S 6H 7S 7H 2S", "8S", "9S"])
    events = play(state, 0, "5S 5H 6S 6H 7S 7H")
    assert events[0] == Played(
        seat=0, cards=["5S", "5H", "6S", "6H", "7S", "7H"], kind="pair_run", top="7"
    )


def test_following_needs_same_kind_length_and_higher_top() -> None:
    state = make_state(["5S 6S 7S 8S 9S 3H", "6H 7H 8H 9H TH 4D 5D 6D 7D 8D 9D", "3S"])
    play(state, 0, "5S 6S 7S 8S 9S")
    for cards in ["5D 6D 7D 8D 9D", "4D 5D 6D 7D 8D 9D", "4D 5D 6D 7D 8D"]:
        with pytest.raises(engine.IllegalActionError) as err:
            play(state, 1, cards)
        assert err.value.reason is Reason.DOES_NOT_BEAT, cards
    play(state, 1, "6H 7H 8H 9H TH")
    assert state.deal.table is not None
    assert (state.deal.table.kind, state.deal.table.top, state.deal.table.length) == (
        "straight",
        "T",
        5,
    )


def test_bomb_beats_any_non_bomb_and_only_a_higher_bomb_beats_a_bomb() -> None:
    state = make_state(["5S 6S 7S 8S 9S 2S", "4H 4D 4C 4S 9H", "6H 6D 6C 6S 3C"])
    play(state, 0, "5S 6S 7S 8S 9S")
    play(state, 1, "4H 4D 4C 4S")
    with pytest.raises(engine.IllegalActionError) as err:
        pass_(state, 2)
    assert err.value.reason is Reason.MUST_BEAT
    play(state, 2, "6H 6D 6C 6S")
    with pytest.raises(engine.IllegalActionError) as err:
        play(state, 0, "2S")
    assert err.value.reason is Reason.DOES_NOT_BEAT
    pass_(state, 0)
    events = pass_(state, 1)
    assert events == [Passed(seat=1), TrickCleared(leader=2)]


def test_trick_clears_after_two_passes_in_a_row_and_last_player_leads() -> None:
    state = make_state(["KS 3D", "5S 4D", "6S 3H"])
    play(state, 0, "KS")
    assert pass_(state, 1) == [Passed(seat=1)]
    assert state.deal.table is not None
    assert state.deal.turn == 2
    assert pass_(state, 2) == [Passed(seat=2), TrickCleared(leader=0)]
    assert engine.seat_view(state, 0).table is None
    assert state.deal.trick == []
    assert state.deal.turn == state.deal.leader == 0


def test_a_play_between_passes_restarts_the_count() -> None:
    state = make_state(["5S 3D 4H", "4S 3C", "7S 6H 3H"])
    play(state, 0, "5S")
    pass_(state, 1)
    play(state, 2, "7S")
    assert pass_(state, 0) == [Passed(seat=0)]
    assert state.deal.table is not None
    assert [(m.seat, m.kind) for m in state.deal.trick] == [
        (0, "single"),
        (1, "pass"),
        (2, "single"),
        (0, "pass"),
    ]
    assert pass_(state, 1) == [Passed(seat=1), TrickCleared(leader=2)]
    assert state.deal.turn == 2


def test_leading_an_ambiguous_airplane_reads_it_with_the_higher_trios() -> None:
    state = make_state(["3S 3H 3D 4S 4H 4D 5S 5H 5D 6S KS", "9S", "TS"])
    events = play(state, 0, "3S 3H 3D 4S 4H 4D 5S 5H 5D 6S")
    assert events[0] == Played(
        seat=0,
        cards=["3S", "3H", "3D", "4S", "4H", "4D", "5S", "5H", "5D", "6S"],
        kind="airplane",
        top="5",
    )
    assert state.deal.table is not None
    assert state.deal.table.length == 2


def test_seat_down_to_one_card_is_announced() -> None:
    state = make_state(["5S 6S", "7S 8S 9S", "TS JS QS"])
    events = play(state, 0, "5S")
    assert events == [Played(seat=0, cards=["5S"], kind="single", top="5"), LastCard(seat=0)]
    assert engine.seat_view(state, 1).last_card == [True, False, False]
    assert engine.seat_view(state, 2).last_card == [True, False, False]


def _worked_example() -> engine.MatchState:
    """RULES.md: the previous player played a 9; you hold 10, K and the 2 of spades;
    the next player has one card."""
    state = make_state(["9D 3C", "TS KH 2S", "4H"], turn=0)
    play(state, 0, "9D")
    return state


def test_worked_last_card_example_only_the_two_of_spades() -> None:
    state = _worked_example()
    assert state.deal.turn == 1
    view = engine.seat_view(state, 1)
    assert view.legal == ["2"]
    assert view.can_pass is False
    for cards, reason in [
        ("TS", Reason.MUST_PLAY_HIGHEST_SINGLE),
        ("KH", Reason.MUST_PLAY_HIGHEST_SINGLE),
    ]:
        before = snapshot(state)
        with pytest.raises(engine.IllegalActionError) as err:
            play(state, 1, cards)
        assert err.value.reason is reason
        assert snapshot(state) == before
    with pytest.raises(engine.IllegalActionError) as err:
        pass_(state, 1)
    assert err.value.reason is Reason.MUST_BEAT
    play(state, 1, "2S")


def test_last_card_rule_binds_a_leading_single_too() -> None:
    state = make_state(["5S 5H 9S KS", "4H", "3H 7C"], turn=0)
    with pytest.raises(engine.IllegalActionError) as err:
        play(state, 0, "9S")
    assert err.value.reason is Reason.MUST_PLAY_HIGHEST_SINGLE
    # Pairs are not restricted.
    play(state, 0, "5S 5H")


def test_last_card_rule_looks_only_at_the_next_seat() -> None:
    # The seat after next has one card: any single is fine.
    state = make_state(["5S 9S KS", "4H 6H", "3H"], turn=0)
    play(state, 0, "5S")
    assert state.deal.table is not None


def test_last_card_rule_leaves_a_leader_only_the_highest_single() -> None:
    state = make_state(["5S 9S KS", "4H", "3H 7H 8H"], turn=0)
    assert engine.seat_view(state, 0).legal == ["K"]


def test_deal_ends_the_moment_a_hand_is_empty() -> None:
    state = make_state(["5S", "7S 8S", "TS JS QS"], turn=0)
    events = play(state, 0, "5S")
    assert isinstance(events[-1], MatchEnded)
    assert isinstance(events[-2], DealEnded)
    assert events[-2].winner == 0
    assert state.deal.result is not None
    assert state.deal.result.winner == 0
    assert engine.seat_view(state, 1).turn is None
    for action in (Play(seat=1, cards=["7S"]), engine.Pass(seat=1)):
        with pytest.raises(engine.InvalidActionError) as err:
            engine.apply(state, action)
        assert err.value.reason is Reason.DEAL_OVER


@pytest.mark.parametrize("deals", [1, 5, 10])
def test_match_lasts_1_5_or_10_deals(deals: int) -> None:
    rng = random.Random(deals)
    state = engine.new_match(engine.PRESETS["classic"], deals, deals)
    for n in range(1, deals + 1):
        assert state.deal.deal_no == n
        _finish_deal(state, rng)
        if n < deals:
            assert state.winners is None
            with pytest.raises(engine.InvalidActionError) as err:
                engine.apply(state, Play(seat=0, cards=["3S"]))
            assert err.value.reason is Reason.DEAL_OVER
            engine.apply(state, NextDeal())
    assert len(state.results) == deals
    assert state.winners is not None
    best = max(state.totals)
    assert state.winners == [s for s in range(3) if state.totals[s] == best]
    with pytest.raises(engine.InvalidActionError) as err:
        engine.apply(state, NextDeal())
    assert err.value.reason is Reason.MATCH_OVER


@pytest.mark.parametrize("deals", [0, 2, 3, 11])
def test_other_match_lengths_are_refused(deals: int) -> None:
    with pytest.raises(ValueError, match="deals"):
        engine.new_match(engine.PRESETS["classic"], 1, deals)


def test_next_deal_during_a_deal_is_refused() -> None:
    state = engine.new_match(engine.PRESETS["kawu"], 4, 5)
    before = snapshot(state)
    with pytest.raises(engine.InvalidActionError) as err:
        engine.apply(state, NextDeal())
    assert err.value.reason is Reason.DEAL_IN_PROGRESS
    assert snapshot(state) == before


def test_a_tie_for_the_most_points_is_a_win_for_everyone_tied() -> None:
    state = make_state(["5S 6S 7S 8S", "9S", "TS JS"], turn=1, played_any=[True, True, True])
    state.totals = [10, 0, -10]
    events = play(state, 1, "9S")
    # Seat 1 takes 4 + 2 points: totals 6, 6, -12.
    assert state.totals == [6, 6, -12]
    assert events[-1] == MatchEnded(winners=[0, 1], totals=[6, 6, -12])
    assert state.winners == [0, 1]
    assert engine.seat_view(state, 2).winners == [0, 1]


def test_a_single_top_scorer_is_the_only_winner() -> None:
    state = make_state(["5S 6S", "9S", "TS JS"], turn=1, played_any=[True, True, True])
    state.totals = [10, 0, -10]
    events = play(state, 1, "9S")
    assert state.totals == [8, 4, -12]
    assert events[-1] == MatchEnded(winners=[0], totals=[8, 4, -12])


def test_there_is_no_undo_action() -> None:
    assert set(engine.Action.__args__) == {engine.Play, engine.Pass, NextDeal}
    state = engine.new_match(engine.PRESETS["classic"], 1)
    before = snapshot(state)
    with pytest.raises(engine.InvalidActionError) as err:
        engine.apply(state, "undo")  # type: ignore[arg-type]
    assert err.value.reason is Reason.INVALID_POSITION
    assert snapshot(state) == before


def test_replay_from_seed_and_log_rebuilds_the_match_exactly() -> None:
    rng = random.Random(5)
    for preset in PRESETS:
        state = engine.new_match(engine.PRESETS[preset], 77, 5)
        while state.winners is None:
            engine.apply(state, random_action(state, rng))
        again = engine.replay(engine.PRESETS[preset], 77, 5, state.log)
        assert snapshot(again) == snapshot(state)
        assert again.log == state.log


def test_suits_never_compare() -> None:
    state = make_state(["9C 3D", "9S 4D", "5H"])
    play(state, 0, "9C")
    with pytest.raises(engine.IllegalActionError) as err:
        play(state, 1, "9S")
    assert err.value.reason is Reason.DOES_NOT_BEAT


def test_the_log_keeps_its_own_copy_of_each_action() -> None:
    # apply is the only way a match changes: a caller reusing its card list
    # afterwards must not rewrite the log that replays the match.
    state = make_state(["5S 5H 9S", "7S 7H 8S", "3H 4H"])
    cards = ["5S", "5H"]
    engine.apply(state, Play(seat=0, cards=cards))
    before = snapshot(state)
    cards[:] = ["9S"]
    assert snapshot(state) == before
