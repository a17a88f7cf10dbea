"""Deck, card codes and dealing (RULES.md "Deck and ranks")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from server import engine
from server.engine import Reason
from server.engine.cards import card_rank, deal_hands
from server.engine.combos import counts_of, counts_string

REPO_ROOT = Path(__file__).resolve().parents[2]
PRESET_ACE = {"classic": "AS", "sixteen": "AS", "kawu": "AC"}


@pytest.mark.parametrize(("preset", "ace"), PRESET_ACE.items())
def test_deck_has_48_cards_one_two_three_aces_and_four_of_the_rest(preset: str, ace: str) -> None:
    rules = engine.PRESETS[preset]
    assert rules.removed_ace == ace
    codes = [engine.card_code(c) for c in engine.deck(rules.removed_ace)]
    assert len(codes) == len(set(codes)) == 48
    per_rank = Counter(code[0] for code in codes)
    assert per_rank == {**{r: 4 for r in "3456789TJQK"}, "A": 3, "2": 1}
    assert "2S" in codes
    assert {"2H", "2D", "2C"}.isdisjoint(codes)
    assert ace not in codes
    assert {"AS", "AH", "AD", "AC"} - {ace} <= set(codes)


@pytest.mark.parametrize("code", ["3S", "TH", "JD", "QC", "KS", "AH", "2S", "9C"])
def test_card_codes_parse_and_format_both_ways(code: str) -> None:
    card = engine.parse_card(code)
    assert engine.card_code(card) == code
    assert engine.parse_card(code.lower()) == card


def test_ten_may_be_written_10() -> None:
    assert engine.parse_card("10H") == engine.parse_card("TH")


def test_rank_order_runs_3_to_2_and_suits_never_compare() -> None:
    order = [card_rank(engine.parse_card(r + "S")) for r in "3456789TJQKA2"]
    assert order == sorted(order)
    assert len(set(order)) == 13
    assert {card_rank(engine.parse_card("5" + s)) for s in "SHDC"} == {order[2]}


@pytest.mark.parametrize("code", ["", "1S", "3X", "S3", "33S", "ZZ", "11H", "2"])
def test_unknown_codes_are_refused_as_invalid_card(code: str) -> None:
    with pytest.raises(engine.InvalidActionError) as err:
        engine.parse_card(code)
    assert err.value.reason is Reason.INVALID_CARD


def test_naming_a_card_twice_is_refused_as_duplicate() -> None:
    with pytest.raises(engine.InvalidActionError) as err:
        engine.parse_cards(["3S", "4S", "3s"])
    assert err.value.reason is Reason.DUPLICATE_CARD


def test_rank_strings_list_ranks_ascending() -> None:
    cards = engine.parse_cards(["9S", "5H", "2S", "5D", "3C", "5S"])
    assert counts_string(counts_of(cards)) == "355592"


@pytest.mark.parametrize("ace", ["AS", "AC"])
def test_whole_deck_is_dealt_16_each(ace: str) -> None:
    hands = deal_hands(ace, 12345, 1)
    assert [len(h) for h in hands] == [16, 16, 16]
    assert sorted(c for h in hands for c in h) == sorted(engine.deck(ace))


def test_deal_is_determined_by_seed_and_deal_number() -> None:
    assert deal_hands("AS", 7, 1) == deal_hands("AS", 7, 1)
    assert deal_hands("AS", 7, 1) != deal_hands("AS", 8, 1)
    assert deal_hands("AS", 7, 1) != deal_hands("AS", 7, 2)
    a = engine.new_match(engine.PRESETS["classic"], 99)
    b = engine.new_match(engine.PRESETS["classic"], 99)
    assert a.deal.hands == b.deal.hands


def test_seeds_give_varied_deals() -> None:
    first_hands = {tuple(deal_hands("AS", seed, 1)[0]) for seed in range(50)}
    assert len(first_hands) == 50


def test_deal_does_not_depend_on_the_process_hash_seed() -> None:
    code = (
        "from server.engine.cards import deal_hands; "
        "print([deal_hands(a, 2024, n) for a in ('AS', 'AC') for n in (1, 2)])"
    )
    outputs = set()
    for hash_seed in ("0", "1", "12345"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert repr([deal_hands(a, 2024, n) for a in ("AS", "AC") for n in (1, 2)]) + "\n" in outputs
