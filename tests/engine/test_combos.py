"""Combinations (RULES.md "Combinations"): what a set of cards reads as, and what beats what."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.engine.combos import (
    KIND_NAMES,
    Reading,
    beats,
    best_reading,
    card_count,
    classify,
    counts_of_ranks,
    highest_rank,
    parse_rank_string,
    rank_mask,
)


def readings(text: str) -> set[tuple[str, int, str, bool]]:
    return {
        (KIND_NAMES[r.kind], r.length, "3456789TJQKA2"[r.top], r.short)
        for r in classify(parse_rank_string(text))
    }


def reading(kind: str, length: int, top: str) -> Reading:
    return Reading(KIND_NAMES.index(kind), length, "3456789TJQKA2".index(top))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5", ("single", 1, "5")),
        ("2", ("single", 1, "2")),
        ("QQ", ("pair", 1, "Q")),
        ("AA", ("pair", 1, "A")),
        ("5566", ("pair_run", 2, "6")),
        ("778899", ("pair_run", 3, "9")),
        ("QQKKAA", ("pair_run", 3, "A")),
        ("33445566778899TTJJQQKKAA"[:16], ("pair_run", 8, "T")),
        ("34567", ("straight", 5, "7")),
        ("3456789TJQKA", ("straight", 12, "A")),
        ("TJQKA", ("straight", 5, "A")),
        ("55539", ("trio_two", 1, "5")),
        ("55599", ("trio_two", 1, "5")),
        ("3AAA2", ("trio_two", 1, "A")),
        ("3334445678", ("airplane", 2, "4")),
        ("KKKAAA2345", ("airplane", 2, "A")),
        ("3334445552", ("airplane", 2, "5")),
        ("7777", ("bomb", 1, "7")),
        ("3333", ("bomb", 1, "3")),
        ("KKKK", ("bomb", 1, "K")),
    ],
)
def test_each_kind_reads_with_its_top_and_length(text: str, expected: tuple[str, int, str]) -> None:
    assert (*expected, False) in readings(text)


@pytest.mark.parametrize(
    "text",
    [
        "35",  # two different singles
        "3345",  # pair plus singles
        "3344556",  # pair run plus a single
        "3355",  # pairs not consecutive
        "4567",  # a straight needs five
        "3456789TJQKA2",  # the 2 is never part of a straight
        "JQKA2",
        "KKAA2",
        "555566",  # no four-with-two
        "5555678",  # no four-with-three
        "55566677",  # two trios with two wings: short of wings, so only a final play
        "AAA2",  # three aces are no bomb (and a trio with one extra is a final form)
        "333444",  # bare airplane: a final form
    ],
)
def test_non_combinations_have_no_full_reading(text: str) -> None:
    assert {r for r in readings(text) if not r[3]} == set()


def test_extras_of_a_trio_may_be_the_fourth_card_of_its_rank() -> None:
    # "any two other cards": 5556 plus the last 5 is a trio + two, not a bomb.
    assert readings("55556") == {("trio_two", 1, "5", False)}


def test_three_aces_are_a_trio_never_a_bomb() -> None:
    assert readings("AAA") == {("trio_two", 1, "A", True)}
    assert all(kind != "bomb" for kind, *_ in readings("AAA2"))


def test_two_is_never_in_a_pair_run_or_airplane() -> None:
    # Impossible with one 2 in the deck, so built directly as rank counts.
    a, two = 11, 12
    assert classify(counts_of_ranks([a, a, two, two])) == ()
    assert classify(counts_of_ranks([a, a, a, two, two, two])) == ()
    assert ("airplane", 2, "A", False) in readings("KKKAAA2345")


@pytest.mark.parametrize(
    ("text", "short"),
    [
        ("888", ("trio_two", 1, "8", True)),
        ("8889", ("trio_two", 1, "8", True)),
        ("888999", ("airplane", 2, "9", True)),
        ("888999T", ("airplane", 2, "9", True)),
        ("888999TJQ", ("airplane", 2, "9", True)),
        ("333444555", ("airplane", 3, "5", True)),
    ],
)
def test_short_forms_are_flagged_short(text: str, short: tuple[str, int, str, bool]) -> None:
    assert short in readings(text)
    assert best_reading(parse_rank_string(text), final=False) is None
    assert best_reading(parse_rank_string(text), final=True) is not None


def test_short_forms_only_count_as_final_play() -> None:
    assert best_reading(parse_rank_string("888"), final=False) is None
    assert best_reading(parse_rank_string("8889"), final=False) is None
    assert best_reading(parse_rank_string("888999T"), final=False) is None
    assert best_reading(parse_rank_string("888"), final=True) == Reading(
        KIND_NAMES.index("trio_two"), 1, 5, True
    )


def test_ambiguous_airplane_reads_with_the_higher_trios() -> None:
    # RULES.md: 333444555 6 could be two airplanes; it is the one with higher trios.
    best = best_reading(parse_rank_string("3334445556"), final=False)
    assert best == reading("airplane", 2, "5")


def test_going_out_with_an_ambiguous_set_reads_as_the_full_form() -> None:
    # 333 444 555 6 as a last play: a full airplane 444555 with wings 3336 is read,
    # not the short three-trio airplane; a full form outranks a short one.
    best = best_reading(parse_rank_string("3334445556"), final=True)
    assert best == reading("airplane", 2, "5")


def test_rank_strings_naming_more_cards_than_the_deck_holds_are_refused() -> None:
    for text in ("22", "33333", "55555"):
        with pytest.raises(ValueError, match="more cards"):
            parse_rank_string(text)
    assert parse_rank_string("3333AAA2") == counts_of_ranks([0] * 4 + [11] * 3 + [12])


def test_ambiguous_set_reads_as_whatever_beats_when_following() -> None:
    counts = parse_rank_string("3334445556")
    # Against an airplane topped by 4 the top-5 reading is the legal one.
    assert best_reading(counts, final=False, table=reading("airplane", 2, "4")) == reading(
        "airplane", 2, "5"
    )
    assert best_reading(counts, final=False, table=reading("airplane", 2, "5")) is None


def test_bomb_reading_outranks_a_short_trio_of_the_same_cards() -> None:
    assert best_reading(parse_rank_string("7777"), final=True) == reading("bomb", 1, "7")


@pytest.mark.parametrize(
    ("play", "table", "wins"),
    [
        (("single", 1, "6"), ("single", 1, "5"), True),
        (("single", 1, "5"), ("single", 1, "5"), False),
        (("single", 1, "2"), ("single", 1, "A"), True),
        (("pair", 1, "A"), ("pair", 1, "K"), True),
        (("pair", 1, "4"), ("single", 1, "3"), False),
        (("straight", 5, "8"), ("straight", 5, "7"), True),
        (("straight", 6, "9"), ("straight", 5, "7"), False),
        (("straight", 5, "A"), ("straight", 6, "8"), False),
        (("pair_run", 2, "7"), ("pair_run", 2, "6"), True),
        (("pair_run", 3, "9"), ("pair_run", 2, "6"), False),
        (("trio_two", 1, "6"), ("trio_two", 1, "5"), True),
        (("trio_two", 1, "4"), ("trio_two", 1, "5"), False),
        (("airplane", 2, "6"), ("airplane", 2, "5"), True),
        (("airplane", 3, "9"), ("airplane", 2, "5"), False),
        (("bomb", 1, "3"), ("single", 1, "2"), True),
        (("bomb", 1, "3"), ("straight", 12, "A"), True),
        (("bomb", 1, "3"), ("airplane", 3, "A"), True),
        (("bomb", 1, "8"), ("bomb", 1, "7"), True),
        (("bomb", 1, "7"), ("bomb", 1, "8"), False),
        (("single", 1, "2"), ("bomb", 1, "3"), False),
        (("trio_two", 1, "A"), ("pair_run", 2, "4"), False),
    ],
)
def test_following_needs_same_kind_and_length_and_higher_top_or_a_bomb(
    play: tuple[str, int, str], table: tuple[str, int, str], wins: bool
) -> None:
    assert beats(reading(*play), reading(*table)) is wins


@pytest.mark.parametrize(
    ("play", "table"),
    [
        ("34555", "444KA"),  # low extras: trio of 5s over trio of 4s with high extras
        ("44455", "333A2"),
        ("3344666777", "555666KKAA"),  # low wings: 6-7 airplane over 5-6 with high wings
    ],
)
def test_extras_and_wings_never_affect_comparison(play: str, table: str) -> None:
    mine = best_reading(parse_rank_string(play), final=False)
    theirs = best_reading(parse_rank_string(table), final=False)
    assert mine is not None
    assert theirs is not None
    assert beats(mine, theirs)
    assert not beats(theirs, mine)


# Per-rank counts of at most four cards (a rank never holds more), as in a hand.
_rank_counts = st.lists(st.integers(0, 4), min_size=13, max_size=13)


def _packed(counts: list[int]) -> int:
    return sum(n << (4 * r) for r, n in enumerate(counts))


@given(_rank_counts, _rank_counts)
def test_rank_masks_count_the_ranks_two_sets_of_cards_share(a: list[int], b: list[int]) -> None:
    shared = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    assert (rank_mask(_packed(a)) & rank_mask(_packed(b))).bit_count() == shared


@given(_rank_counts.filter(any))
def test_highest_rank_and_card_count_read_the_packed_counts(counts: list[int]) -> None:
    packed = _packed(counts)
    assert highest_rank(packed) == max(r for r, n in enumerate(counts) if n)
    assert card_count(packed) == sum(counts)
