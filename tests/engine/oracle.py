"""A brute-force reference for the legal plays of a position, from RULES.md alone.

It shares nothing with ``server.engine``: it enumerates every sub-multiset of
ranks in the hand, reads each one naively as every combination it can be, and
keeps those the rules allow.  It is slow (no generation by kind, no position
cache) so that it is plainly right; the engine is checked against it.

Interpretations the rules leave open, written down so tests can name them:

- The extras of a trio + two and the wings of an airplane are "any cards": they
  may include a fourth card of a trio's rank (``33334`` is a trio + two) when
  bombs may be split.
- A table that reads several ways is read as its highest reading: a bomb, else a
  full form before a short one, then more units (trios, pairs, cards), then the
  higher top.  (A short form on the table only occurs as someone's last cards.)
- Listed plays are sorted by their ranks in rank order, compared position by
  position, a prefix first: ``"3" < "33" < "334" < "34" < "4"``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "PRESETS",
    "RANKS",
    "SUITS",
    "Preset",
    "Reading",
    "beats",
    "deck_codes",
    "legal_plays",
    "legal_readings",
    "rank_counts",
    "rank_key",
    "readings",
    "solve",
    "table_reading",
]

RANKS = "3456789TJQKA2"
SUITS = "SHDC"
KING = RANKS.index("K")
ACE = RANKS.index("A")
TWO = RANKS.index("2")


class Reading(NamedTuple):
    kind: str  # single pair pair_run straight trio_two airplane bomb
    length: int  # cards of a straight, pairs of a pair run, trios of an airplane, else 1
    top: int  # rank index that the play is compared by
    short: bool  # a form allowed only as the player's final play


def deck_codes(removed_ace: str) -> list[str]:
    """The 48 codes: every rank and suit, but only the 2 of spades and not ``removed_ace``."""
    out = []
    for rank in RANKS:
        for suit in SUITS:
            code = rank + suit
            if rank == "2" and suit != "S":
                continue
            if code == removed_ace:
                continue
            out.append(code)
    return out


def rank_counts(codes: Iterable[str]) -> tuple[int, ...]:
    counts = [0] * 13
    for code in codes:
        counts[RANKS.index(code[0])] += 1
    return tuple(counts)


def _counts_text(counts: Sequence[int]) -> str:
    return "".join(RANKS[r] * n for r, n in enumerate(counts))


def rank_key(text: str) -> tuple[int, ...]:
    return tuple(RANKS.index(ch) for ch in text)


def _consecutive_within_run_ranks(ranks: list[int]) -> bool:
    """Consecutive ranks inside 3..A (the 2 never takes part in a run)."""
    if not ranks or ranks[-1] > ACE:
        return False
    return all(b == a + 1 for a, b in itertools.pairwise(ranks))


@lru_cache(maxsize=1 << 18)
def readings(counts: tuple[int, ...]) -> frozenset[Reading]:
    """Every way the rank multiset ``counts`` reads as a combination, short forms included."""
    n = sum(counts)
    present = [r for r in range(13) if counts[r]]
    out: set[Reading] = set()
    if n == 1:
        out.add(Reading("single", 1, present[0], False))
    if n == 2 and len(present) == 1:
        out.add(Reading("pair", 1, present[0], False))
    if n == 4 and len(present) == 1 and present[0] <= KING:
        out.add(Reading("bomb", 1, present[0], False))
    if n >= 5 and all(counts[r] == 1 for r in present) and _consecutive_within_run_ranks(present):
        out.add(Reading("straight", n, present[-1], False))
    if (
        len(present) >= 2
        and all(counts[r] == 2 for r in present)
        and _consecutive_within_run_ranks(present)
    ):
        out.add(Reading("pair_run", len(present), present[-1], False))
    trio_ranks = [r for r in present if counts[r] >= 3]
    for trio in trio_ranks:
        if n == 5:
            out.add(Reading("trio_two", 1, trio, False))
        elif n in (3, 4):
            out.add(Reading("trio_two", 1, trio, True))
    # An airplane needs at least two trios: every chain of them, every length.
    for trios in range(2, len(trio_ranks) + 1):
        for low in range(0, ACE - trios + 2):
            chain = range(low, low + trios)
            if not all(counts[r] >= 3 for r in chain):
                continue
            wings = n - 3 * trios
            if wings == 2 * trios:
                out.add(Reading("airplane", trios, chain[-1], False))
            elif 0 <= wings < 2 * trios:
                out.add(Reading("airplane", trios, chain[-1], True))
    return frozenset(out)


def _height(r: Reading) -> tuple[bool, bool, int, int]:
    return (r.kind == "bomb", not r.short, r.length, r.top)


def table_reading(counts: tuple[int, ...]) -> Reading | None:
    found = readings(counts)
    return max(found, key=_height) if found else None


def beats(play: Reading, table: Reading) -> bool:
    if play.kind == "bomb":
        return table.kind != "bomb" or play.top > table.top
    if table.kind == "bomb":
        return False
    return play.kind == table.kind and play.length == table.length and play.top > table.top


def _full_size(reading: Reading) -> int:
    """How many cards the full form of a reading's kind and length holds."""
    per_unit = {"pair_run": 2, "straight": 1, "airplane": 5}
    fixed = {"single": 1, "pair": 2, "trio_two": 5, "bomb": 4}
    if reading.kind in fixed:
        return fixed[reading.kind]
    return per_unit[reading.kind] * reading.length


def legal_readings(
    play: tuple[int, ...],
    hand: tuple[int, ...],
    to_beat: Reading | None,
    *,
    next_has_one: bool,
    needs_three: bool,
    split_bombs: bool,
) -> list[Reading]:
    """The readings under which ``play`` (rank counts, drawn from ``hand``) may be
    played now; empty when the rules forbid it.  ``to_beat``: the table's reading."""
    n = sum(play)
    if n == 0:
        return []
    final = n == sum(hand)
    usable = [r for r in readings(play) if final or not r.short]
    # D = no: a held four of a kind leaves the hand only whole, as a bomb.
    locked = [] if split_bombs else [r for r in range(KING + 1) if hand[r] == 4]
    touched = [r for r in locked if play[r]]
    if touched:
        if not (n == 4 and play[touched[0]] == 4):
            return []
        usable = [r for r in usable if r.kind == "bomb"]
    if needs_three and play[0] == 0:
        return []
    if to_beat is not None:
        usable = [r for r in usable if beats(r, to_beat)]
    if next_has_one and n == 1:
        singles = [r for r in range(13) if hand[r] and r not in locked]
        if play.index(1) != singles[-1]:
            return []
    return usable


def legal_plays(
    hand: tuple[int, ...],
    table: tuple[int, ...] | None,
    *,
    next_has_one: bool,
    needs_three: bool,
    split_bombs: bool,
) -> list[str]:
    """Every legal play of ``hand`` as a rank string, sorted by ``rank_key``.

    ``table`` is the play to beat (rank counts) or None when leading; ``needs_three``:
    the play must hold the 3 of spades, which the hand holds (a rank-0 card).
    """
    total = sum(hand)
    to_beat = table_reading(table) if table is not None else None
    if table is not None and to_beat is None:
        raise ValueError("the table is no combination")
    # Only plays of these sizes could beat the table: its full form, a bomb, or
    # a short form, which is always the whole hand.
    sizes = None if to_beat is None else {_full_size(to_beat), 4, total}
    found: set[str] = set()
    for sub in itertools.product(*(range(c + 1) for c in hand)):
        if (sizes is not None and sum(sub) not in sizes) or not readings(sub):
            continue
        usable = legal_readings(
            sub,
            hand,
            to_beat,
            next_has_one=next_has_one,
            needs_three=needs_three,
            split_bombs=split_bombs,
        )
        if usable:
            found.add(_counts_text(sub))
    return sorted(found, key=rank_key)


class Preset(NamedTuple):
    removed_ace: str  # house rule A
    first_play_three: bool  # B
    split_bombs: bool  # D


# The preset table of RULES.md ("House rules"), rules A, B and D.
PRESETS = {
    "classic": Preset("AS", first_play_three=True, split_bombs=True),
    "sixteen": Preset("AS", first_play_three=False, split_bombs=False),
    "kawu": Preset("AC", first_play_three=True, split_bombs=True),
}


def solve(position: dict[str, object]) -> dict[str, object]:
    """The conformance answer for a valid position (the input format of the tool)."""
    rules = PRESETS[str(position["rules"])]
    hand = position["hand"]
    table = position["table"]
    assert isinstance(hand, list)
    assert isinstance(table, list)
    plays = legal_plays(
        rank_counts(hand),
        rank_counts(table) if table else None,
        next_has_one=bool(position["next_has_one"]),
        needs_three=bool(position["first_play"]) and rules.first_play_three,
        split_bombs=rules.split_bombs,
    )
    return {"id": position["id"], "plays": plays, "pass": bool(table) and not plays}
