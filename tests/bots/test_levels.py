"""Every level plays only legal actions, in every preset, and easy is never absurd."""

from __future__ import annotations

import pytest

from server.bots import is_legal, make_bot
from server.bots.base import Bot
from server.engine import PRESETS, Play, apply, new_match, parse_card, seat_view
from server.engine.combos import counts_of, counts_string
from tests.engine.helpers import make_state

PRESET_NAMES = sorted(PRESETS)


def play_deal(preset: str, seed: int, bots: list[Bot]) -> int:
    """Play one deal to its end, checking every action against the seat's view."""
    state = new_match(PRESETS[preset], seed, 1)
    decisions = 0
    while state.deal.result is None:
        turn = state.deal.turn
        view = seat_view(state, turn)
        action = bots[turn].choose(view)
        assert is_legal(view, action), (view, action)
        apply(state, action)  # the engine refuses anything illegal
        decisions += 1
    return decisions


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_easy_and_normal_bots_only_play_legal_actions_over_many_deals(preset: str) -> None:
    for seed in range(300):
        mix = ("easy", "normal", "normal", "easy")
        bots = [make_bot(mix[(seed + s) % 4], seed) for s in range(3)]
        assert play_deal(preset, seed, bots) > 0


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_strong_bot_with_a_tiny_budget_only_plays_legal_actions(preset: str) -> None:
    for seed in range(3):
        bots = [make_bot(level, seed, budget=0.003) for level in ("strong", "normal", "strong")]
        assert play_deal(preset, 500 + seed, bots) > 0


def test_easy_bot_follows_a_three_with_a_four_rather_than_its_two() -> None:
    # The 3 of spades leads the match as a single; find a follower holding a 4 and the 2.
    for seed in range(400):
        state = new_match(PRESETS["classic"], seed, 1)
        leader = state.deal.turn
        follower = (leader + 1) % 3
        follow_ranks = {c >> 2 for c in state.deal.hands[follower]}
        if 1 not in follow_ranks or 12 not in follow_ranks:
            continue
        apply(state, Play(seat=leader, cards=["3S"]))
        view = seat_view(state, follower)
        action = make_bot("easy", seed).choose(view)
        assert isinstance(action, Play)
        assert "2S" not in action.cards
        played = counts_string(counts_of(parse_card(c) for c in action.cards))
        assert played[-1] != "2"
        return
    pytest.fail("no deal with that position among the seeds tried")


def test_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown bot level"):
        make_bot("grandmaster", 1)


@pytest.mark.parametrize("level", ["easy", "normal", "strong"])
def test_every_level_goes_out_when_its_whole_hand_is_one_play(level: str) -> None:
    # Leading with a straight: the lowest card alone would also be legal.
    state = make_state(["3S 4H 5D 6C 7S", "9S TS", "JS QS"])
    action = make_bot(level, 1, budget=0.01).choose(seat_view(state, 0))
    assert isinstance(action, Play)
    assert sorted(action.cards) == sorted(["3S", "4H", "5D", "6C", "7S"])
