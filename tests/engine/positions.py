"""Random conformance positions: hands from the right deck, tables of every kind.

Used by the oracle comparison and to build the reference file.  Everything is
drawn from a ``random.Random`` the caller seeds, so runs repeat exactly.
"""

from __future__ import annotations

import random
from typing import Any

from .oracle import ACE, KING, PRESETS, RANKS, deck_codes

__all__ = ["TABLE_KINDS", "random_hand", "random_position", "random_table"]

TABLE_KINDS = (
    "single",
    "pair",
    "pair_run",
    "straight",
    "trio_two",
    "airplane",
    "bomb",
    "short_trio",
    "short_airplane",
)


def _by_rank(codes: list[str]) -> list[list[str]]:
    groups: list[list[str]] = [[] for _ in RANKS]
    for code in codes:
        groups[RANKS.index(code[0])].append(code)
    return groups


def _chains(groups: list[list[str]], width: int, min_len: int) -> list[tuple[int, int]]:
    """(low, length) of every run of ranks within 3..A with ``width`` cards each."""
    out = []
    for low in range(ACE + 1):
        length = 0
        while low + length <= ACE and len(groups[low + length]) >= width:
            length += 1
            if length >= min_len:
                out.append((low, length))
    return out


def _extras(rng: random.Random, pool: list[str], used: list[str], k: int) -> list[str] | None:
    rest = [c for c in pool if c not in used]
    if len(rest) < k:
        return None
    return rng.sample(rest, k)


def random_table(rng: random.Random, pool: list[str], kind: str) -> list[str] | None:
    """A play of ``kind`` drawn from ``pool``, or None when the pool holds none."""
    groups = _by_rank(pool)
    if kind == "single":
        return [rng.choice(pool)] if pool else None
    if kind in ("pair", "bomb", "trio_two", "short_trio"):
        need = {"pair": 2, "bomb": 4, "trio_two": 3, "short_trio": 3}[kind]
        ranks = [r for r in range(13) if len(groups[r]) >= need and (kind != "bomb" or r <= KING)]
        if not ranks:
            return None
        body = rng.sample(groups[rng.choice(ranks)], need)
        if kind == "trio_two":
            extra = _extras(rng, pool, body, 2)
            return None if extra is None else body + extra
        if kind == "short_trio":
            extra = _extras(rng, pool, body, rng.randint(0, 1))
            return None if extra is None else body + extra
        return body
    width, min_len = {
        "pair_run": (2, 2),
        "straight": (1, 5),
        "airplane": (3, 2),
        "short_airplane": (3, 2),
    }[kind]
    chains = _chains(groups, width, min_len)
    if not chains:
        return None
    low, length = rng.choice(chains)
    body = [c for r in range(low, low + length) for c in rng.sample(groups[r], width)]
    if kind == "airplane":
        extra = _extras(rng, pool, body, 2 * length)
        return None if extra is None else body + extra
    if kind == "short_airplane":
        extra = _extras(rng, pool, body, rng.randint(0, 2 * length - 1))
        return None if extra is None else body + extra
    return body


def random_hand(rng: random.Random, pool: list[str], size: int) -> list[str]:
    """``size`` cards from ``pool``: uniformly, or clumped into trios and bombs."""
    if rng.random() < 0.5:
        return rng.sample(pool, size)
    groups = _by_rank(pool)
    rng.shuffle(groups)
    hand: list[str] = []
    for group in groups:
        if len(hand) >= size:
            break
        take = min(size - len(hand), rng.choice((2, 3, 3, 4, 4)), len(group))
        hand += rng.sample(group, take)
    if len(hand) < size:
        hand += rng.sample([c for c in pool if c not in hand], size - len(hand))
    return hand


def random_position(rng: random.Random, preset: str, ident: Any) -> dict[str, Any]:
    """A valid conformance position for ``preset``: any hand of 1..16, any table."""
    deck = deck_codes(PRESETS[preset].removed_ace)
    hand = random_hand(rng, deck, rng.randint(1, 16))
    rest = [c for c in deck if c not in hand]
    table: list[str] = []
    if rng.random() < 0.7:
        table = random_table(rng, rest, rng.choice(TABLE_KINDS)) or [rng.choice(rest)]
    first_play = False
    next_has_one = rng.random() < 0.3
    if not table and not next_has_one and rng.random() < 0.25:
        # The first play of a match: under rule B the leader holds the 3 of spades.
        first_play = True
        if "3S" not in hand:
            hand[0] = "3S"
            hand = list(dict.fromkeys(hand))
    rng.shuffle(hand)
    return {
        "id": ident,
        "rules": preset,
        "hand": hand,
        "table": table,
        "next_has_one": next_has_one,
        "first_play": first_play,
    }
