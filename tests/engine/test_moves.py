"""Legal plays for the seat to move (RULES.md "Leading and following", "Last card", rule D)."""

from __future__ import annotations

import gc

from server.engine.combos import counts_string, parse_rank_string
from server.engine.moves import legal_plays, submultisets, table_reading_of

from .oracle import rank_key


def legal(
    hand: str,
    table: str = "",
    *,
    next_has_one: bool = False,
    needs_three: bool = False,
    split_bombs: bool = True,
) -> list[str]:
    reading = table_reading_of(parse_rank_string(table)) if table else None
    plays = legal_plays(parse_rank_string(hand), reading, next_has_one, needs_three, split_bombs)
    return sorted((counts_string(p) for p in plays), key=rank_key)


def test_leader_may_play_every_combination_in_the_hand() -> None:
    assert legal("3345") == ["3", "33", "4", "5"]
    assert legal("33344") == ["3", "33", "33344", "3344", "4", "44"]


def test_short_forms_appear_only_as_the_whole_hand() -> None:
    assert "888" in legal("888")
    assert "8889" in legal("8889")
    assert "888" not in legal("8889")
    # 888 and 8889 are not the whole hand here; 8889TT is no combination.
    assert legal("8889TT") == ["8", "88", "8889T", "888TT", "9", "T", "TT"]


def test_following_lists_only_same_kind_and_length_with_higher_top_or_bombs() -> None:
    assert legal("4455667777", "3344") == ["4455", "5566", "6677", "7777"]
    assert legal("34567899", "45678") == ["56789"]
    assert legal("KK2", "QQ") == ["KK"]


def test_pass_is_the_only_choice_when_nothing_beats() -> None:
    assert legal("345", "2") == []
    assert legal("3333", "4444") == []


def test_must_hold_a_three_when_the_three_of_spades_is_required() -> None:
    assert legal("3456789", needs_three=True) == [
        "3",
        "34567",
        "345678",
        "3456789",
    ]


def test_locked_bombs_leave_only_whole() -> None:
    assert legal("77775", split_bombs=False) == ["5", "7777"]
    assert legal("77775", split_bombs=True) == ["5", "57777", "7", "77", "7777"]


def test_last_card_rule_restricts_singles_only() -> None:
    assert legal("5566K", next_has_one=True) == ["55", "5566", "66", "K"]
    assert legal("5566K", "4", next_has_one=True) == ["K"]
    assert legal("5566K", "33", next_has_one=True) == ["55", "66"]


def test_last_card_highest_single_ignores_locked_bombs() -> None:
    assert legal("5KKKK", "4", next_has_one=True, split_bombs=False) == ["5", "KKKK"]
    assert legal("5KKKK", "4", next_has_one=True, split_bombs=True) == ["K", "KKKK"]


def test_drawing_submultisets_leaves_no_reference_cycle_for_the_collector() -> None:
    # A cycle per (memo-missed) call was what the cyclic GC found most while tables
    # played (bench/server.py --gc-cycles): it must be freed by reference counting.
    pool = parse_rank_string("3345559KA")
    gc.collect()
    gc.disable()
    try:
        drawn = submultisets.__wrapped__(pool, 3)
        found = gc.collect()
    finally:
        gc.enable()
    assert len(drawn) > 10
    assert found == 0
