"""Legal plays for the seat to move, in rank-count space.

Everything here works on ``Counts`` ints (see ``combos``) and is cached by
position shape: the same hand against the same table with the same flags has
the same answer, whoever holds it and whatever the suits.
"""

from __future__ import annotations

from .cards import RANK_COUNT
from .combos import (
    AIRPLANE,
    BOMB,
    BOMB_CARDS,
    LONGEST_RUN,
    PAIR,
    PAIR_RUN,
    SINGLE,
    STRAIGHT,
    TOP_BOMB_RANK,
    TOP_RUN_RANK,
    TRIO_TWO,
    UNIT,
    Counts,
    Reading,
    beats,
    classify,
    count_at,
    counts_tuple,
    lowest_beating_top,
    rank_block,
)
from .memo import memo

__all__ = [
    "Position",
    "legal_plays",
    "locked_ranks",
    "sort_key",
    "submultisets",
    "table_reading_of",
]

# (hand, table reading or None, next seat holds one card, must hold a 3, bombs splittable)
Position = tuple[Counts, Reading | None, bool, bool, bool]


def locked_ranks(hand: Counts, split_bombs: bool) -> Counts:
    """Counts of the four-of-a-kinds that may leave the hand only as bombs."""
    if split_bombs:
        return 0
    locked = 0
    for r in range(TOP_BOMB_RANK + 1):
        if count_at(hand, r) == BOMB_CARDS:
            locked += BOMB_CARDS * UNIT[r]
    return locked


@memo(1 << 16)
def submultisets(pool: Counts, k: int) -> tuple[Counts, ...]:
    """Every multiset of ``k`` cards drawn from ``pool`` (wings and kickers)."""
    ranks = [r for r in range(RANK_COUNT) if count_at(pool, r)]
    out: list[Counts] = []
    _walk(pool, ranks, out, 0, k, 0)
    return tuple(out)


def _walk(pool: Counts, ranks: list[int], out: list[Counts], i: int, need: int, acc: int) -> None:
    # A module function, not a closure that calls itself: such a closure is a reference
    # cycle the cyclic GC must find and free (bench/server.py --gc-cycles).
    if need == 0:
        out.append(acc)
        return
    for j in range(i, len(ranks)):
        r = ranks[j]
        for take in range(1, min(count_at(pool, r), need) + 1):
            _walk(pool, ranks, out, j + 1, need - take, acc + take * UNIT[r])


def _runs(avail: tuple[int, ...], width: int, min_len: int) -> list[tuple[int, int]]:
    """(start, length) of every run of ranks holding ``width`` cards, 3..A."""
    out: list[tuple[int, int]] = []
    # Scan down from the ace: ``length`` is the longest run starting at ``start``.
    length = 0
    for start in range(TOP_RUN_RANK, -1, -1):
        length = length + 1 if avail[start] >= width else 0
        for n in range(min_len, length + 1):
            out.append((start, n))
    return out


# Every view sorts its seat's legal plays by this key; the distinct plays number
# in the thousands, so the key is looked up rather than rebuilt rank by rank.
@memo(1 << 16)
def sort_key(play: Counts) -> tuple[int, ...]:
    """Rank-order key of a play's rank string: how lists of plays are sorted."""
    return tuple(r for r in range(RANK_COUNT) for _ in range(count_at(play, r)))


@memo(1 << 10)
def _any_beats(table: Reading | None, kind: int) -> bool:
    """Whether some play of ``kind``, of any length, could beat ``table``."""
    return any(lowest_beating_top(table, kind, n) is not None for n in range(1, LONGEST_RUN + 1))


def _generate(
    hand: Counts, locked: Counts, avail: tuple[int, ...], table: Reading | None, next_has_one: bool
) -> set[Counts]:
    plays: set[Counts] = set()
    free = hand - locked
    # Per kind (and length), the lowest top that beats the table; None: none beats.
    need = lowest_beating_top(table, SINGLE, 1)
    if need is not None:
        singles = [r for r in range(RANK_COUNT) if avail[r]]
        if next_has_one and singles:
            # Last-card rule: a single must be the highest one can play.
            singles = singles[-1:]
        plays.update(UNIT[r] for r in singles if r >= need)
    need = lowest_beating_top(table, PAIR, 1)
    if need is not None:
        plays.update(2 * UNIT[r] for r in range(need, RANK_COUNT) if avail[r] >= 2)
    for kind, width, min_len in ((PAIR_RUN, 2, 2), (STRAIGHT, 1, 5)):
        if not _any_beats(table, kind):
            continue
        for start, length in _runs(avail, width, min_len):
            need = lowest_beating_top(table, kind, length)
            if need is not None and start + length - 1 >= need:
                plays.add(rank_block(start, length, width))
    need = lowest_beating_top(table, TRIO_TWO, 1)
    if need is not None:
        for t in range(need, RANK_COUNT):
            if avail[t] >= 3:
                trio = 3 * UNIT[t]
                for kick in submultisets(free - trio, 2):
                    plays.add(trio + kick)
    if _any_beats(table, AIRPLANE):
        for start, length in _runs(avail, 3, 2):
            need = lowest_beating_top(table, AIRPLANE, length)
            if need is not None and start + length - 1 >= need:
                body = rank_block(start, length, 3)
                for wings in submultisets(free - body, 2 * length):
                    plays.add(body + wings)
    need = lowest_beating_top(table, BOMB, 1)
    assert need is not None
    held = counts_tuple(hand) if locked else avail
    for r in range(need, TOP_BOMB_RANK + 1):
        if held[r] == BOMB_CARDS:
            plays.add(BOMB_CARDS * UNIT[r])
    return plays


@memo(1 << 18)
def legal_plays(
    hand: Counts,
    table: Reading | None,
    next_has_one: bool,
    needs_three: bool,
    split_bombs: bool,
) -> tuple[Counts, ...]:
    """Every legal play (as Counts) for the seat to move, in Counts order.

    ``table`` is the reading to beat, or None when leading.  ``needs_three``:
    the play must hold the 3 of spades, i.e. at least one 3 in rank space (the
    seat holds that card, so it can always choose it among its 3s).
    """
    locked = locked_ranks(hand, split_bombs)
    free = hand - locked
    avail = counts_tuple(free)
    plays = _generate(hand, locked, avail, table, next_has_one)
    # Short forms (trio with one or no extra, airplane short of wings) are only
    # ever the whole hand, so the hand itself is the one candidate.
    if hand not in plays:
        for reading in classify(hand):
            if not reading.short:
                continue
            if locked and reading.kind != BOMB:
                break
            if table is None or beats(reading, table):
                plays.add(hand)
                break
    if needs_three:
        plays = {p for p in plays if count_at(p, 0)}
    return tuple(sorted(plays))


def table_reading_of(play: Counts) -> Reading | None:
    """How a play on the table reads: its highest reading, short forms included
    (a short form is legal as someone's last cards)."""
    readings = classify(play)
    return readings[0] if readings else None
