"""Combinations: reading a multiset of ranks as a play, and what beats what.

Plays are handled as rank-count vectors packed into one int, four bits per
rank (rank r at bits 4r..4r+3).  Suits never matter to a combination, so every
rule check runs on these ints; adding and removing cards is integer arithmetic
and a subset test is one subtraction against guard bits.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TypeAlias

import msgspec

from .cards import (
    ACE,
    KING,
    RANK_COUNT,
    RANKS,
    SUIT_COUNT,
    TWO,
    Card,
    CardCode,
    card_code,
    card_rank,
    deck,
    parse_card,
)
from .memo import memo

__all__ = [
    "AIRPLANE",
    "BOMB",
    "BOMB_CARDS",
    "KIND_NAMES",
    "LONGEST_RUN",
    "PAIR",
    "PAIR_RUN",
    "SINGLE",
    "STRAIGHT",
    "TOP_BOMB_RANK",
    "TOP_RUN_RANK",
    "TRIO_TWO",
    "UNIT",
    "Counts",
    "Reading",
    "beats",
    "best_reading",
    "card_count",
    "classify",
    "count_at",
    "counts_of",
    "counts_of_codes",
    "counts_of_deck_without",
    "counts_of_ranks",
    "counts_string",
    "counts_tuple",
    "highest_rank",
    "is_subset",
    "lowest_beating_top",
    "lowest_rank",
    "parse_rank_string",
    "rank_block",
    "rank_mask",
    "reading_key",
]

Counts: TypeAlias = int

SINGLE, PAIR, PAIR_RUN, STRAIGHT, TRIO_TWO, AIRPLANE, BOMB = range(7)
KIND_NAMES = ("single", "pair", "pair_run", "straight", "trio_two", "airplane", "bomb")

# Runs (straights, pair runs, airplanes' trios) end at the ace at the highest: the
# 2 never joins one.  The longest run is every rank from the 3 to the ace.
TOP_RUN_RANK = ACE
LONGEST_RUN = TOP_RUN_RANK + 1
# A bomb is a whole rank, four of a kind; the deck holds three aces and one 2, so
# the king's is the highest.
BOMB_CARDS = SUIT_COUNT
TOP_BOMB_RANK = KING

# Each rank's count sits in a four-bit field (it is at most four, so the field's
# top bit is always clear: the guard ``is_subset`` borrows from).
_FIELD_BITS = 4
_FIELD = (1 << _FIELD_BITS) - 1
_SHIFTS = tuple(_FIELD_BITS * r for r in range(RANK_COUNT))
UNIT = tuple(1 << shift for shift in _SHIFTS)
_GUARDS = sum(8 * unit for unit in UNIT)


class Reading(msgspec.Struct, frozen=True, gc=False):
    """One way to read a set of cards.

    ``length`` is what must match when following: 1 for singles, pairs, bombs
    and trio+two; the card count for straights; pairs for a pair run; trios for
    an airplane.  ``short`` marks the forms allowed only as a final play.

    A struct the cyclic GC does not track (frozen, hashable), not a NamedTuple:
    the memo caches' keys and values hold readings by the hundred thousand, and a
    tuple holding a tracked object stays tracked itself, so every one of them
    was scanned again by every older-generation collection (docs/performance.md,
    "Session 7").
    """

    kind: int
    length: int
    top: int
    short: bool = False


# Each card's rank unit, indexed by the card: summing them is the counts, in C.
_CARD_UNIT = tuple(UNIT[card_rank(c)] for c in range(52))


def counts_of(cards: Iterable[Card]) -> Counts:
    """The rank counts of some cards (suits dropped)."""
    # A rank holds at most four cards, so the units never carry into the next nibble.
    return sum(map(_CARD_UNIT.__getitem__, cards))


_CODE_UNIT = {card_code(c): unit for c, unit in enumerate(_CARD_UNIT)}


def counts_of_codes(codes: Collection[CardCode]) -> Counts:
    """The rank counts of cards named by their codes, as views name them."""
    try:
        # A view's codes are exact: one lookup each, summed in C.
        return sum(map(_CODE_UNIT.__getitem__, codes))
    except KeyError:
        return counts_of(parse_card(c) for c in codes)  # normalises, or says which is no card


_DECKS: dict[CardCode, Counts] = {}


def counts_of_deck_without(removed_ace: CardCode) -> Counts:
    """The whole deck without ``removed_ace`` (rules.removed_ace), as Counts."""
    if removed_ace not in _DECKS:
        _DECKS[removed_ace] = counts_of(deck(removed_ace))
    return _DECKS[removed_ace]


def counts_of_ranks(ranks: Iterable[int]) -> Counts:
    """The rank counts of a list of ranks (0..12), one card per entry."""
    total = 0
    for r in ranks:
        total += UNIT[r]
    return total


def count_at(counts: Counts, rank: int) -> int:
    """How many cards of ``rank`` (0 = 3 .. 12 = 2) ``counts`` holds."""
    return (counts >> _SHIFTS[rank]) & _FIELD


def counts_tuple(counts: Counts) -> tuple[int, ...]:
    """The thirteen per-rank counts, 3 first."""
    return tuple([(counts >> shift) & _FIELD for shift in _SHIFTS])


# The low field of every byte (seven bytes cover the thirteen fields), and the
# multiplier that adds up every byte into the top one.
_LOW_NIBBLES = sum(_FIELD << (2 * shift) for shift in _SHIFTS[:7])
_BYTE_SUM = sum(1 << (2 * shift) for shift in _SHIFTS[:7])


def card_count(counts: Counts) -> int:
    """How many cards ``counts`` holds in all."""
    # Add neighbouring nibbles into bytes (each at most 8), then add the bytes
    # with one multiplication: the sum (at most 52) lands in the top byte.
    pairs = (counts & _LOW_NIBBLES) + ((counts >> 4) & _LOW_NIBBLES)
    return ((pairs * _BYTE_SUM) >> 48) & 255


def lowest_rank(counts: Counts) -> int:
    """The lowest rank present; ``counts`` must not be empty."""
    # The lowest set bit lies in the lowest rank's four-bit field.
    return ((counts & -counts).bit_length() - 1) // _FIELD_BITS


def highest_rank(counts: Counts) -> int:
    """The highest rank present; ``counts`` must not be empty."""
    return (counts.bit_length() - 1) // _FIELD_BITS


# The lowest bit of every rank's four-bit field.
_RANK_BITS = sum(UNIT)


def rank_mask(counts: Counts) -> int:
    """One bit per rank that ``counts`` holds (the lowest bit of its field), so that
    ``(rank_mask(a) & rank_mask(b)).bit_count()`` counts the ranks both hold."""
    # A rank holds at most four cards, so its count lives in the field's low three bits.
    return (counts | counts >> 1 | counts >> 2) & _RANK_BITS


def rank_block(start: int, length: int, width: int) -> Counts:
    """``width`` cards of each of ``length`` consecutive ranks from ``start`` (a run's cards)."""
    total = 0
    for r in range(start, start + length):
        total += width * UNIT[r]
    return total


def is_subset(part: Counts, whole: Counts) -> bool:
    """Whether every card of ``part`` is in ``whole`` (rank by rank)."""
    # Each field holds at most 4, so bit 3 of every nibble is a free guard: a
    # field that would go negative borrows from its guard.
    return ((whole | _GUARDS) - part) & _GUARDS == _GUARDS


@memo(1 << 16)
def counts_string(counts: Counts) -> str:
    """``"55539"``: ranks ascending, each repeated by its count."""
    return "".join(RANKS[r] * count_at(counts, r) for r in range(RANK_COUNT))


def parse_rank_string(text: str) -> Counts:
    """Counts from ranks written out, e.g. ``"55539"`` (``"10"`` reads as ``"T"``)."""
    total = 0
    for ch in text.upper().replace("10", "T"):
        r = RANKS.find(ch)
        if r < 0:
            raise ValueError(f"{ch!r} is not a rank")
        total += UNIT[r]
    if not is_subset(total, _FULL_RANKS):
        raise ValueError(f"{text!r} names more cards of a rank than a deck holds")
    return total


# Every card of every rank a deck may hold: four of each up to the ace, one 2.
_FULL_RANKS = sum(SUIT_COUNT * UNIT[r] for r in range(TWO)) + UNIT[TWO]


def reading_key(r: Reading) -> tuple[bool, bool, int, int]:
    """Orders readings from highest: a bomb, then a full form, more units, higher top."""
    return (r.kind == BOMB, not r.short, r.length, r.top)


def _consecutive(ranks: list[int]) -> bool:
    return ranks[-1] - ranks[0] == len(ranks) - 1 and ranks[-1] <= TOP_RUN_RANK


@memo(1 << 17)
def classify(counts: Counts) -> tuple[Reading, ...]:
    """Every reading of a rank multiset, highest first (empty: no combination).

    Short forms are included and flagged; whether they are allowed depends on
    the play being the player's last cards, which the caller knows.
    """
    c = counts_tuple(counts)
    n = sum(c)
    present = [r for r in range(RANK_COUNT) if c[r]]
    out: list[Reading] = []
    if n == 1:
        out.append(Reading(SINGLE, 1, present[0]))
    elif n == 2 and len(present) == 1:
        out.append(Reading(PAIR, 1, present[0]))
    if n == BOMB_CARDS and len(present) == 1 and present[0] <= TOP_BOMB_RANK:
        out.append(Reading(BOMB, 1, present[0]))
    if n >= 5 and len(present) == n and _consecutive(present):
        out.append(Reading(STRAIGHT, n, present[-1]))
    if (
        n >= 4
        and len(present) * 2 == n
        and all(c[r] == 2 for r in present)
        and _consecutive(present)
    ):
        out.append(Reading(PAIR_RUN, len(present), present[-1]))
    trios = [r for r in present if c[r] >= 3]
    if trios:
        for t in trios:
            if n == 5:
                out.append(Reading(TRIO_TWO, 1, t))
            elif n in (3, 4):
                out.append(Reading(TRIO_TWO, 1, t, True))
        # Airplanes: every chain of >= 2 consecutive trio ranks within 3..A.
        for i, start in enumerate(trios):
            if start > TOP_RUN_RANK:
                break
            k = 1
            for nxt in trios[i + 1 :]:
                if nxt != start + k or nxt > TOP_RUN_RANK:
                    break
                k += 1
                wings = n - 3 * k
                if wings == 2 * k:
                    out.append(Reading(AIRPLANE, k, nxt))
                elif wings < 2 * k:
                    out.append(Reading(AIRPLANE, k, nxt, True))
    out.sort(key=reading_key, reverse=True)
    # One shared instance per distinct reading: memo values hold readings by the
    # hundred thousand, and one copy each is memory they need not hold.
    return tuple(_READINGS.setdefault(r, r) for r in dict.fromkeys(out))


_READINGS: dict[Reading, Reading] = {}


def lowest_beating_top(table: Reading | None, kind: int, length: int) -> int | None:
    """What beats what, the one place it is decided.

    The lowest top rank a play of ``kind`` and ``length`` needs to beat ``table``
    (0 on an empty table: anything leads), or None when no such play beats it.
    A bomb beats every non-bomb and a lower bomb; anything else needs the same
    kind and length and a higher top.
    """
    if table is None:
        return 0
    if kind == BOMB:
        return table.top + 1 if table.kind == BOMB else 0
    if kind == table.kind and length == table.length:
        return table.top + 1
    return None


def beats(play: Reading, table: Reading) -> bool:
    """Whether ``play`` beats ``table`` (see ``lowest_beating_top``)."""
    need = lowest_beating_top(table, play.kind, play.length)
    return need is not None and play.top >= need


def best_reading(counts: Counts, *, final: bool, table: Reading | None = None) -> Reading | None:
    """The highest reading legal at this moment, or None.

    ``final``: the play empties the hand, so short forms count.  ``table``: the
    play to beat, if following.
    """
    for r in classify(counts):
        if r.short and not final:
            continue
        if table is None or beats(r, table):
            return r
    return None
