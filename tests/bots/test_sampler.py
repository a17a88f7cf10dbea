"""The strong bot's sampler deals only hands consistent with the seat's view."""

from __future__ import annotations

import random

import pytest

from server.bots import make_bot
from server.bots.observe import Observation, observe
from server.bots.sampler import Sampler, consistent, constraints_of
from server.engine import PRESETS, MatchState, apply, new_match, seat_view
from server.engine.combos import SINGLE, UNIT, counts_of
from server.engine.players import card_count, count_at

from .test_levels import PRESET_NAMES


def positions(preset: str, seeds: range) -> list[tuple[Observation, list[int]]]:
    """(observation of the seat to move, everyone's true hands) along normal-bot deals."""
    out: list[tuple[Observation, list[int]]] = []
    for seed in seeds:
        state: MatchState = new_match(PRESETS[preset], seed, 1)
        bots = [make_bot("normal", seed) for _ in range(3)]
        while state.deal.result is None:
            turn = state.deal.turn
            view = seat_view(state, turn)
            out.append((observe(view), [counts_of(h) for h in state.deal.hands]))
            apply(state, bots[turn].choose(view))
    return out


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_true_hands_always_satisfy_the_inferred_proofs(preset: str) -> None:
    found = 0
    for obs, truth in positions(preset, range(25)):
        found += len(constraints_of(obs))
        assert consistent(obs, truth)
    assert found > 100  # the deals did produce passes and forced singles to check


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_samples_have_the_right_sizes_and_exactly_the_unseen_cards(preset: str) -> None:
    for obs, _truth in positions(preset, range(8)):
        sampler = Sampler(obs, random.Random(1))
        for _ in range(3):
            hands = sampler.sample()
            assert hands[obs.seat] == obs.hand
            assert sum(hands) - obs.hand == obs.unseen
            assert [card_count(h) for h in hands] == list(obs.sizes)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_samples_satisfy_every_pass_and_forced_single_proof(preset: str) -> None:
    checked = 0
    for obs, _truth in positions(preset, range(12)):
        if not constraints_of(obs):
            continue
        sampler = Sampler(obs, random.Random(7))
        for _ in range(4):
            assert consistent(obs, sampler.sample())
            checked += 1
    assert checked > 200


def test_a_player_who_passed_on_a_single_is_never_dealt_a_higher_card() -> None:
    for obs, _truth in positions("classic", range(40)):
        passes = [
            c
            for c in constraints_of(obs)
            if c.forced_top < 0 and c.table is not None and c.table.kind == SINGLE
        ]
        if not passes or obs.unseen >> (4 * (passes[0].table.top + 1)) == 0:  # type: ignore[union-attr]
            continue
        proof = passes[0]
        assert proof.table is not None
        sampler = Sampler(obs, random.Random(3))
        for _ in range(20):
            hand = sampler.sample()[proof.seat]
            assert hand >> (4 * (proof.table.top + 1)) == 0
        return
    pytest.fail("no pass on a single with higher cards unseen in the deals tried")


def test_consistency_check_rejects_hands_that_break_a_pass_proof() -> None:
    for obs, truth in positions("classic", range(40)):
        for proof in constraints_of(obs):
            if proof.forced_top >= 0 or proof.table is None or proof.table.kind != SINGLE:
                continue
            other = 3 - obs.seat - proof.seat
            # Move a card above the passed single from the other opponent to the passer.
            for r in range(proof.table.top + 1, 13):
                if (truth[other] >> (4 * r)) & 15 and truth[proof.seat] & 15 * UNIT[0]:
                    bent = list(truth)
                    bent[other] += UNIT[0] - UNIT[r]
                    bent[proof.seat] += UNIT[r] - UNIT[0]
                    assert consistent(obs, truth)
                    assert not consistent(obs, bent)
                    return
    pytest.fail("no position to bend among the deals tried")


def test_a_single_played_while_the_next_seat_held_one_card_is_a_proof() -> None:
    # Under the last-card rule that single was its player's highest playable one.
    with_proof = [
        (obs, c)
        for obs, _truth in positions("classic", range(40))
        for c in constraints_of(obs)
        if c.forced_top >= 0
    ]
    assert len(with_proof) > 10
    for obs, proof in with_proof[:10]:
        sampler = Sampler(obs, random.Random(5))
        for _ in range(5):
            then = sampler.sample()[proof.seat] + proof.later
            assert not any(count_at(then, r) for r in range(proof.forced_top + 1, 13))
