"""Properties of random deals played out through the public API (hypothesis)."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server import engine
from server.engine import MatchState, NextDeal, Pass, Play, Reason

from .helpers import snapshot

PROPERTY_SETTINGS = settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _copy(state: MatchState) -> MatchState:
    return msgspec.json.decode(snapshot(state), type=MatchState)


def _check_conserved(state: MatchState) -> None:
    deal = state.deal
    held = [engine.card_code(c) for hand in deal.hands for c in hand]
    played = [code for move in deal.moves for code in move.cards]
    deck = [engine.card_code(c) for c in engine.deck(state.rules.removed_ace)]
    assert Counter(held + played) == Counter(deck)
    assert len(held) + len(played) == 48


def _check_views_are_private(state: MatchState) -> None:
    for seat in range(3):
        encoded = msgspec.json.encode(engine.seat_view(state, seat)).decode()
        for other in range(3):
            if other != seat:
                for card in state.deal.hands[other]:
                    assert f'"{engine.card_code(card)}"' not in encoded


def _random_cards(rng: random.Random, state: MatchState, seat: int) -> list[str]:
    hand = [engine.card_code(c) for c in state.deal.hands[seat]]
    if rng.random() < 0.1:
        # Now and then a card the seat does not hold.
        others = [engine.card_code(c) for s in range(3) if s != seat for c in state.deal.hands[s]]
        return [*rng.sample(hand, min(len(hand), rng.randint(0, 3))), rng.choice(others)]
    return rng.sample(hand, rng.randint(1, min(len(hand), 7)))


def _refusal(state: MatchState, action: Play | Pass) -> engine.EngineError | None:
    """Apply ``action``; the refusal if it was refused (any other exception propagates)."""
    try:
        engine.apply(state, action)
    except engine.EngineError as err:
        return err
    return None


def _step(state: MatchState, rng: random.Random) -> None:
    """Probe the position, then make one move: a random card set if it is legal,
    else a random legal play or pass."""
    deal = state.deal
    seat = deal.turn
    view = engine.seat_view(state, seat)
    # A hint is there whenever a play is, and the first one is accepted.
    assert bool(view.hints) == bool(view.legal)
    if view.hints:
        engine.apply(_copy(state), Play(seat=seat, cards=view.hints[0]))
    # Every legal play, made concrete with pick_cards, is accepted (a sample of them).
    for ranks in rng.sample(view.legal, min(3, len(view.legal))):
        cards = engine.pick_cards(view.hand, ranks, view.must_include)
        engine.apply(_copy(state), Play(seat=seat, cards=cards))
    # A random set of cards is accepted exactly when its ranks are a legal play.
    cards = _random_cards(rng, state, seat)
    ranks = "".join(c[0] for c in sorted(cards, key=engine.parse_card))
    allowed = (
        set(cards) <= set(view.hand)
        and ranks in view.legal
        and (view.must_include is None or view.must_include in cards)
    )
    before = snapshot(state)
    refused = _refusal(state, Play(seat=seat, cards=cards))
    assert (refused is None) is allowed, (cards, refused)
    if refused is None:
        return
    assert isinstance(refused.reason, Reason)
    assert snapshot(state) == before
    # Passing is accepted exactly when the view allows it, refused with its reason.
    refused = _refusal(_copy(state), Pass(seat=seat))
    assert (refused is None) is view.can_pass
    if refused is not None:
        assert refused.reason.value == view.pass_reason
    if view.can_pass and (not view.legal or rng.random() < 0.3):
        engine.apply(state, Pass(seat=seat))
    else:
        ranks = rng.choice(view.legal)
        engine.apply(
            state, Play(seat=seat, cards=engine.pick_cards(view.hand, ranks, view.must_include))
        )


# The presets and every other combination of the house rules, each option on its own.
RULES = st.one_of(
    st.sampled_from(list(engine.PRESETS.values())),
    st.builds(
        engine.Rules,
        preset=st.just("custom"),
        removed_ace=st.sampled_from(["AS", "AC"]),
        first_play_three_spades=st.booleans(),
        later_leader=st.sampled_from(["winner", "three_of_spades"]),
        split_bombs=st.booleans(),
        bomb_payment=st.sampled_from(["immediate", "winning"]),
    ),
)


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(
    rules=RULES,
    seed=st.integers(min_value=0, max_value=2**31),
    deals=st.sampled_from([1, 5]),
)
def test_random_matches_keep_every_invariant(rules: engine.Rules, seed: int, deals: int) -> None:
    rng = random.Random(seed)
    state = engine.new_match(rules, seed, deals)
    steps = 0
    while state.winners is None:
        _check_conserved(state)
        if state.deal.result is not None:
            result = state.deal.result
            assert sum(result.deal_totals) == 0
            assert sum(result.match_totals) == 0
            engine.apply(state, NextDeal())
            continue
        if steps % 3 == 0:
            _check_views_are_private(state)
        _step(state, rng)
        steps += 1
    _check_conserved(state)
    assert len(state.results) == deals
    assert all(sum(r.deal_totals) == 0 for r in state.results)
    assert sum(state.totals) == 0
    assert snapshot(engine.replay(rules, seed, deals, state.log)) == snapshot(state)


ALL_CODES = [r + s for r in "3456789TJQKA2" for s in "SHDC"]


@PROPERTY_SETTINGS
@given(
    preset=st.sampled_from(["classic", "sixteen", "kawu"]),
    seed=st.integers(min_value=0, max_value=1000),
    steps=st.integers(min_value=0, max_value=30),
    seat=st.integers(min_value=-1, max_value=3),
    cards=st.lists(st.one_of(st.sampled_from(ALL_CODES), st.text(max_size=3)), max_size=8),
)
def test_any_card_list_from_any_seat_is_accepted_or_refused_with_a_reason(
    preset: str, seed: int, steps: int, seat: int, cards: list[str]
) -> None:
    rng = random.Random(seed)
    state = engine.new_match(engine.PRESETS[preset], seed)
    for _ in range(steps):
        if state.deal.result is not None:
            break
        _step(state, rng)
    before = snapshot(state)
    refused = _refusal(state, Play(seat=seat, cards=cards))
    if refused is None:
        assert seat == (msgspec.json.decode(before, type=MatchState).deal.turn)
    else:
        assert isinstance(refused.reason, Reason)
        assert refused.message
        assert snapshot(state) == before
