"""Hand planning: split a hand into few, strong plays, and what can beat a play.

``hand_cost`` is the heuristic value of a hand still to be played: the cost of
its cheapest split into combinations, where each combination costs about one
"turn" to get rid of, less when it is strong enough to win its trick (a high
card, a long run) and negative for a bomb (it wins a lead and pays points).
Every function here is pure and cached on rank-count ints, so a deal played
out thousands of times mostly hits the caches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..engine.players import (
    ACE,
    AIRPLANE,
    BOMB,
    BOMB_CARDS,
    PAIR,
    PAIR_RUN,
    RANK_COUNT,
    SINGLE,
    STRAIGHT,
    TOP_BOMB_RANK,
    TOP_RUN_RANK,
    TRIO_TWO,
    TWO,
    UNIT,
    Counts,
    Memoised,
    Reading,
    count_at,
    lowest_beating_top,
    lowest_rank,
    memo,
)

__all__ = [
    "NEVER",
    "WIN",
    "Group",
    "Plan",
    "beat_size",
    "beatable",
    "decompose",
    "group_cost",
    "hand_cost",
]

R = TypeVar("R")

# (kind, length, top rank, the cards)
Group = tuple[int, int, int, Counts]

# The cost of an empty hand: going out beats everything.
WIN = -100.0


def group_cost(kind: int, length: int, top: int) -> float:
    """About one turn per combination, less for one likely to win its trick; a bomb gains."""
    if kind == BOMB:
        return -1.0
    if kind == SINGLE:
        strength = max(0, top - 6) / 6
    elif kind == PAIR:
        strength = min(1.0, max(0, top - 5) / 6)
    elif kind == TRIO_TWO:
        strength = max(0, top - 3) / 8
    else:
        strength = 0.5 + 0.5 * top / TOP_RUN_RANK
    return 1.0 - 0.8 * strength


# ``group_cost`` by kind and top rank, for the kinds ``decompose`` forms (a run's
# cost does not depend on its length): looked up, as the search forms millions.
_COST_BY_TOP = {
    kind: tuple(group_cost(kind, 1, top) for top in range(RANK_COUNT))
    for kind in (SINGLE, PAIR, TRIO_TWO, STRAIGHT, PAIR_RUN, AIRPLANE)
}
# The bare group of one rank, by how many cards of it the hand holds (at most three).
_BARE = (SINGLE, PAIR, TRIO_TWO)
# Runs a rank can start: (cards of each rank, fewest ranks, kind).
_RUNS = ((1, 5, STRAIGHT), (2, 2, PAIR_RUN), (3, 2, AIRPLANE))
_BOMB_COST = group_cost(BOMB, 1, 0)


# A plan: the cost of a split and its groups.
Plan = tuple[float, tuple[Group, ...]]
# A plan as the planner's memo holds it: the cost, then each group's kind, length,
# top and cards in turn, in one flat tuple.  The cyclic GC lets go of a tuple only
# once none of its elements is a tuple it still tracks, one level of nesting per
# collection, and the planner makes fresh plans at every decision: nested, a
# plan's tuples lived through two or three collections each (at 1,000 tables
# they were three quarters of what every middle collection scanned); flat, a plan
# is let go at its first.
_FlatPlan = tuple[Any, ...]


def decompose(hand: Counts, split: bool) -> Plan:
    """The cheapest split of ``hand`` into combinations (trios bare), by ``group_cost``.

    The lowest rank must go somewhere: as its bare group (a bomb when it is four of
    a kind), or as the start of a run.  Each choice is tried in that order, runs
    shortest first, and the first of equal cost is kept.
    """
    flat = _PLANNERS[split](hand)
    groups = zip(flat[1::4], flat[2::4], flat[3::4], flat[4::4], strict=True)
    return flat[0], tuple(groups)


def hand_cost(hand: Counts, split: bool) -> float:
    """Heuristic cost of a hand (lower is better); trios and airplanes absorb weak kickers."""
    return _COSTERS[split](hand)


# Each function below is memoised once per value of ``split`` (a preset fixes it),
# so its memo is keyed on the hand alone: in a memo of a quarter of a million
# entries an int key is found in a third of the time a (hand, split) tuple takes
# (the tuple and its int are two more cache misses), and the planner looks up
# about 30 keys per decision.  Each memo holds half the entries the shared one
# did, so together they are bounded as before.
_MEMO_SIZE = 1 << 17


def _named(fn: Callable[[Counts], R], name: str) -> Callable[[Counts], R]:
    """``fn`` under ``name`` (a memo is listed by its function's name)."""
    fn.__name__ = fn.__qualname__ = name
    return fn


def _planner(split: bool) -> Memoised[[Counts], _FlatPlan]:
    """``decompose`` for one value of ``split``, its plans flat."""

    def plan(hand: Counts) -> _FlatPlan:
        if hand == 0:
            return (0.0,)
        low = lowest_rank(hand)
        count = count_at(hand, low)
        if count == BOMB_CARDS and low <= TOP_BOMB_RANK:
            cards = BOMB_CARDS * UNIT[low]
            rest = planned(hand - cards)
            best = (_BOMB_COST + rest[0], BOMB, 1, low, cards, *rest[1:])
            if not split:
                return best  # a locked four of a kind is played whole
        else:
            bare = min(count, 3)
            kind = _BARE[bare - 1]
            cards = bare * UNIT[low]
            rest = planned(hand - cards)
            best = (_COST_BY_TOP[kind][low] + rest[0], kind, 1, low, cards, *rest[1:])
        best_cost = best[0]
        for width, min_len, kind in _RUNS:
            costs = _COST_BY_TOP[kind]
            block = length = 0
            top = low
            while top <= TOP_RUN_RANK:
                have = count_at(hand, top)
                if have < width or (have == BOMB_CARDS and not split):
                    break
                block += width * UNIT[top]
                length += 1
                if length >= min_len:
                    rest = planned(hand - block)
                    cost = costs[top] + rest[0]
                    if cost < best_cost:
                        best_cost, best = cost, (cost, kind, length, top, block, *rest[1:])
                top += 1
        return best

    planned = memo(_MEMO_SIZE)(_named(plan, f"decompose_{_SPLIT_NAMES[split]}"))
    return planned


def _coster(split: bool) -> Memoised[[Counts], float]:
    """``hand_cost`` for one value of ``split``."""
    plan = _PLANNERS[split]

    def cost_of(hand: Counts) -> float:
        if hand == 0:
            return WIN
        flat = plan(hand)
        cost: float = flat[0]
        kinds, lengths, tops = flat[1::4], flat[2::4], flat[3::4]
        capacity = 0
        for kind, length in zip(kinds, lengths, strict=True):
            if kind == TRIO_TWO:
                capacity += 2
            elif kind == AIRPLANE:
                capacity += 2 * length
        if capacity:
            weak = sorted(
                (group_cost(k, n, t), 1 if k == SINGLE else 2)
                for k, n, t in zip(kinds, lengths, tops, strict=True)
                if k in (SINGLE, PAIR) and t < ACE
            )
            for gc, width in reversed(weak):
                if width <= capacity:
                    capacity -= width
                    cost -= gc
        return cost

    return memo(_MEMO_SIZE)(_named(cost_of, f"hand_cost_{_SPLIT_NAMES[split]}"))


_SPLIT_NAMES = ("locked", "split")
_PLANNERS = (_planner(False), _planner(True))
_COSTERS = (_coster(False), _coster(True))


def _best_top(pool: Counts, kind: int, length: int, split: bool) -> int:
    """The highest top rank of a play of ``kind`` and ``length`` that cards from ``pool``
    could form (-1: none), the pool taken as one hand; kickers and wings not required.

    Under ``split`` false a four of a kind forms only a bomb, not part of a run.
    """
    if kind == BOMB:
        return next(
            (r for r in range(TOP_BOMB_RANK, -1, -1) if count_at(pool, r) == BOMB_CARDS), -1
        )
    width = _WIDTH[kind]
    if kind in (SINGLE, PAIR, TRIO_TWO):
        return next((r for r in range(TWO, -1, -1) if count_at(pool, r) >= width), -1)
    best = -1
    run = 0
    for r in range(TOP_RUN_RANK + 1):
        have = count_at(pool, r)
        if have >= width and (split or have != BOMB_CARDS):
            run += 1
            if run >= length:
                best = r
        else:
            run = 0
    return best


# Cards per rank of each kind's body (a trio's kickers and an airplane's wings aside).
_WIDTH = {SINGLE: 1, PAIR: 2, TRIO_TWO: 3, STRAIGHT: 1, PAIR_RUN: 2, AIRPLANE: 3}


# More cards than any hand holds: what ``beat_size`` answers when nothing beats.
NEVER = 99


@memo(1 << 18)
def beat_size(pool: Counts, table: Reading, split: bool) -> int:
    """The fewest cards a hand needs for cards from ``pool`` (what the opponents may hold
    between them) to beat ``table``: the bomb's four, or the size of the same kind of
    play; ``NEVER`` when nothing in the pool beats it.  Generous on purpose: the pool
    is treated as one hand, so it errs towards "beatable"."""
    size = NEVER
    need = lowest_beating_top(table, BOMB, 1)
    assert need is not None
    if _best_top(pool, BOMB, 1, True) >= need:
        size = 4
    kind, length = table.kind, table.length
    if kind == BOMB:
        return size
    need = lowest_beating_top(table, kind, length)
    assert need is not None
    width = _WIDTH[kind]
    if kind in (SINGLE, PAIR, TRIO_TWO):
        # Split or not: a single, pair or trio may come out of a four of a kind.
        if _best_top(pool, kind, 1, True) >= need:
            size = min(size, width)
    elif _best_top(pool, kind, length, split) >= need:
        size = min(size, width * length)
    return size


def beatable(pool: Counts, table: Reading, max_size: int, split: bool = True) -> bool:
    """Whether a hand of at most ``max_size`` cards from ``pool`` could beat ``table``
    (see ``beat_size``)."""
    return max_size >= beat_size(pool, table, split)
