"""Legal plays for the seat to move, in rank-count space.

Everything here works on ``Counts`` ints (see ``combos``) and is cached by
position shape: the same hand against the same table with the same flags has
the same answer, whoever holds it and whatever the suits.
"""

from __future__ import annotations

from .combos import (
    AIRPLANE,
    BOMB,
    PAIR,
    PAIR_RUN,
    SINGLE,
    STRAIGHT,
    TOP_RUN_RANK,
    TRIO_TWO,
    UNIT,
    Counts,
    Reading,
    beats,
    classify,
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
    for r in range(11):
        if (hand >> (4 * r)) & 15 == 4:
            locked += 4 * UNIT[r]
    return locked


@memo(1 << 16)
def submultisets(pool: Counts, k: int) -> tuple[Counts, ...]:
    """Every multiset of ``k`` cards drawn from ``pool`` (wings and kickers)."""
    ranks = [r for r in range(13) if (pool >> (4 * r)) & 15]
    out: list[Counts] = []

    def walk(i: int, need: int, acc: Counts) -> None:
        if need == 0:
            out.append(acc)
            return
        for j in range(i, len(ranks)):
            r = ranks[j]
            have = (pool >> (4 * r)) & 15
            for take in range(1, min(have, need) + 1):
                walk(j + 1, need - take, acc + take * UNIT[r])

    walk(0, k, 0)
    return tuple(out)


def _runs(avail: list[int], width: int, min_len: int) -> list[tuple[int, int]]:
    """(start, length) of every run of ranks holding ``width`` cards, 3..A."""
    out: list[tuple[int, int]] = []
    for start in range(TOP_RUN_RANK + 1):
        length = 0
        while start + length <= TOP_RUN_RANK and avail[start + length] >= width:
            length += 1
            if length >= min_len:
                out.append((start, length))
    return out


def _block(start: int, length: int, width: int) -> Counts:
    total = 0
    for r in range(start, start + length):
        total += width * UNIT[r]
    return total


_SHIFTS = tuple(4 * r for r in range(13))


def sort_key(play: Counts) -> tuple[int, ...]:
    """Rank-order key of a play's rank string: how lists of plays are sorted."""
    return tuple(r for r in range(13) for _ in range((play >> (4 * r)) & 15))


def _generate(
    hand: Counts, locked: Counts, avail: list[int], table: Reading | None, next_has_one: bool
) -> set[Counts]:
    plays: set[Counts] = set()
    free = hand - locked
    kind = table.kind if table is not None else -1
    top = table.top if table is not None else -1
    leading = table is None

    if leading or kind == SINGLE:
        singles = [r for r in range(13) if avail[r]]
        if next_has_one and singles:
            # Last-card rule: a single must be the highest one can play.
            singles = singles[-1:]
        plays.update(UNIT[r] for r in singles if r > top)
    if leading or kind == PAIR:
        plays.update(2 * UNIT[r] for r in range(13) if avail[r] >= 2 and r > top)
    if leading or kind == PAIR_RUN:
        for start, length in _runs(avail, 2, 2):
            if leading or (length == table.length and start + length - 1 > top):  # type: ignore[union-attr]
                plays.add(_block(start, length, 2))
    if leading or kind == STRAIGHT:
        for start, length in _runs(avail, 1, 5):
            if leading or (length == table.length and start + length - 1 > top):  # type: ignore[union-attr]
                plays.add(_block(start, length, 1))
    if leading or kind == TRIO_TWO:
        for t in range(13):
            if avail[t] >= 3 and t > top:
                trio = 3 * UNIT[t]
                for kick in submultisets(free - trio, 2):
                    plays.add(trio + kick)
    if leading or kind == AIRPLANE:
        for start, length in _runs(avail, 3, 2):
            if leading or (length == table.length and start + length - 1 > top):  # type: ignore[union-attr]
                body = _block(start, length, 3)
                for wings in submultisets(free - body, 2 * length):
                    plays.add(body + wings)
    for r in range(11):
        if (hand >> (4 * r)) & 15 == 4 and (kind != BOMB or r > top):
            plays.add(4 * UNIT[r])
    return plays


@memo(1 << 16)
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
    avail = [(free >> shift) & 15 for shift in _SHIFTS]
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
        plays = {p for p in plays if p & 15}
    return tuple(sorted(plays))


def table_reading_of(play: Counts) -> Reading | None:
    """How a play on the table reads: its highest reading, short forms included
    (a short form is legal as someone's last cards)."""
    readings = classify(play)
    return readings[0] if readings else None
