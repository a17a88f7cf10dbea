"""``conformance.solve`` agrees with the brute-force oracle on thousands of positions."""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server import engine
from server.engine.conformance import solve

from . import oracle
from .playout import conformance_position, play_match
from .positions import TABLE_KINDS, random_position, random_table

PRESETS = ("classic", "sixteen", "kawu")
# Positions per preset, and hypothesis examples, in the suite: the first 600 random
# positions already show every feature ``wanted`` below at least five times (kawu, the
# last to, by its 423rd).  The full sweep, ``PDK_ORACLE_POSITIONS=2000
# PDK_ORACLE_EXAMPLES=600 pytest tests/engine/test_conformance_oracle.py`` (docs/
# performance.md, "The test suite"), checks more than three times as many.
RANDOM_POSITIONS = int(os.environ.get("PDK_ORACLE_POSITIONS", "600"))
HYPOTHESIS_EXAMPLES = int(os.environ.get("PDK_ORACLE_EXAMPLES", "200"))


def _mismatches(positions: list[dict[str, Any]], answers: list[dict[str, Any]]) -> list[str]:
    out = []
    for position, want in zip(positions, answers, strict=True):
        got = solve(position)
        if got != want:
            missing = sorted(set(want["plays"]) - set(got.get("plays", [])))
            extra = sorted(set(got.get("plays", [])) - set(want["plays"]))
            out.append(
                f"{position}: missing {missing[:8]} extra {extra[:8]} "
                f"pass {got.get('pass')} (want {want['pass']}) {got.get('error', '')}"
            )
    return out


def _features(position: dict[str, Any], answer: dict[str, Any]) -> set[str]:
    """What a position exercises, so the test can insist its sample covers every rule."""
    plays = answer["plays"]
    assert isinstance(plays, list)
    hand = oracle.rank_counts(position["hand"])
    out = set()
    if position["table"]:
        reading = oracle.table_reading(oracle.rank_counts(position["table"]))
        assert reading is not None
        out.add(f"table {reading.kind}{' short' if reading.short else ''}")
    else:
        out.add("leading")
    if answer["pass"]:
        out.add("pass")
    if position["next_has_one"]:
        out.add("next has one")
    if position["first_play"]:
        out.add(f"first play {position['rules']}")
    if any(c == 4 for c in hand[: oracle.KING + 1]):
        out.add(f"holds a bomb {position['rules']}")
    for text in plays:
        found = oracle.readings(oracle.rank_counts(text))
        out.update(f"plays {r.kind}" for r in found)
        if len(text) == sum(hand) and all(r.short for r in found):
            out.add("plays short form")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_solve_agrees_with_oracle_on_random_positions(preset: str) -> None:
    rng = random.Random(f"oracle/{preset}")
    positions = [random_position(rng, preset, i) for i in range(RANDOM_POSITIONS)]
    answers = [oracle.solve(p) for p in positions]
    assert _mismatches(positions, answers) == []
    seen = Counter(f for p, a in zip(positions, answers, strict=True) for f in _features(p, a))
    wanted = {
        "leading",
        "pass",
        "next has one",
        f"first play {preset}",
        f"holds a bomb {preset}",
        "plays short form",
        *(f"table {k}" for k in ("single", "pair", "pair_run", "straight", "trio_two")),
        *(f"table {k}" for k in ("airplane", "bomb", "trio_two short", "airplane short")),
        *(f"plays {k}" for k in ("single", "pair", "pair_run", "straight", "trio_two")),
        *(f"plays {k}" for k in ("airplane", "bomb")),
    }
    assert {w for w in wanted if seen[w] < 5} == set()


@pytest.mark.parametrize("preset", PRESETS)
def test_solve_and_seat_view_agree_with_oracle_on_played_out_matches(preset: str) -> None:
    rules = engine.PRESETS[preset]
    rng = random.Random(f"playout/{preset}")
    positions: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    view_mismatches: list[dict[str, Any]] = []
    table_mismatches: list[tuple[engine.Move, oracle.Reading]] = []
    for seed in range(2):
        for state, _action in play_match(rules, seed, 5, rng):
            deal = state.deal
            if deal.result is not None:
                continue
            position = conformance_position(state, len(positions))
            # Leads with most of a hand are the oracle's slowest case: sample them.
            if not position["table"] and len(position["hand"]) > 12 and rng.random() < 0.7:
                continue
            positions.append(position)
            answers.append(oracle.solve(position))
            view = engine.seat_view(state, deal.turn)
            if view.legal != answers[-1]["plays"]:
                view_mismatches.append(position)
            if deal.table is not None:
                want = oracle.table_reading(oracle.rank_counts(deal.table.cards))
                assert want is not None
                got = (deal.table.kind, deal.table.length, oracle.RANKS.index(deal.table.top))
                if got != (want.kind, want.length, want.top):
                    table_mismatches.append((deal.table, want))
    assert len(positions) > 300
    assert _mismatches(positions, answers) == []
    assert view_mismatches == []
    assert table_mismatches == []


MIXED_RULES = [
    # Each house rule away from its presets' combinations.
    engine.Rules(preset="mixed-1", removed_ace="AC", split_bombs=False),
    engine.Rules(
        preset="mixed-2",
        first_play_three_spades=True,
        later_leader="three_of_spades",
        split_bombs=False,
        bomb_payment="immediate",
    ),
    engine.Rules(preset="mixed-3", first_play_three_spades=False, bomb_payment="winning"),
]


@pytest.mark.parametrize("rules", MIXED_RULES, ids=lambda r: r.preset)
def test_seat_view_agrees_with_oracle_under_mixed_house_rules(rules: engine.Rules) -> None:
    rng = random.Random(f"mixed/{rules.preset}")
    checked = 0
    for state, _action in play_match(rules, 3, 5, rng):
        deal = state.deal
        if deal.result is not None:
            continue
        seat = deal.turn
        hand = oracle.rank_counts(engine.card_code(c) for c in deal.hands[seat])
        if deal.table is None and sum(hand) > 12 and rng.random() < 0.7:
            continue
        want = oracle.legal_plays(
            hand,
            oracle.rank_counts(deal.table.cards) if deal.table is not None else None,
            next_has_one=len(deal.hands[(seat + 1) % 3]) == 1,
            needs_three=deal.needs_three_of_spades,
            split_bombs=rules.split_bombs,
        )
        assert engine.seat_view(state, seat).legal == want, (rules, deal.hands[seat], deal.table)
        checked += 1
    assert checked > 100


@pytest.mark.slow
@settings(max_examples=HYPOTHESIS_EXAMPLES, derandomize=True, database=None, deadline=None)
@given(
    preset=st.sampled_from(PRESETS),
    picks=st.lists(st.integers(min_value=0, max_value=47), min_size=1, max_size=16, unique=True),
    table_seed=st.integers(min_value=0, max_value=10**6),
    table_kind=st.sampled_from((None, *TABLE_KINDS)),
    next_has_one=st.booleans(),
)
def test_solve_agrees_with_oracle_on_hypothesis_positions(
    preset: str, picks: list[int], table_seed: int, table_kind: str | None, next_has_one: bool
) -> None:
    deck = oracle.deck_codes(oracle.PRESETS[preset].removed_ace)
    hand = [deck[i] for i in picks]
    rest = [c for c in deck if c not in hand]
    table = []
    if table_kind is not None:
        table = random_table(random.Random(table_seed), rest, table_kind) or []
    position = {
        "id": 0,
        "rules": preset,
        "hand": hand,
        "table": table,
        "next_has_one": next_has_one,
        "first_play": False,
    }
    assert solve(position) == oracle.solve(position)
