"""The easy and normal policies, on rank counts: given a position, which legal play.

Both take a ``Situation`` (what the seat to move knows, or in a simulation
what it is allowed to pretend to know) and the legal plays, and return one of
them, or None to pass (only ever when there is no legal play: must-beat).
"""

from __future__ import annotations

from typing import NamedTuple

from ..engine.players import (
    BOMB,
    SEATS,
    UNIT,
    Counts,
    Reading,
    best_reading,
    card_count,
    count_at,
    lowest_rank,
    memo,
    rank_hints,
)
from .plan import WIN, beat_size, beatable, hand_cost

__all__ = ["Situation", "easy_choice", "normal_choice", "normal_scores"]


class Situation(NamedTuple):
    """What a policy may use: its own hand, every hand size, the table, the unseen cards."""

    seat: int
    hand: Counts
    sizes: tuple[int, ...] | list[int]
    table: Reading | None
    # What the two opponents may hold between them.
    unseen: Counts
    split: bool
    pay_immediately: bool


def easy_choice(sit: Situation, legal: tuple[Counts, ...]) -> Counts | None:
    """Goes out when it can; leads the group holding its lowest card; follows with the
    cheapest play that beats.  No planning, no counting, nothing silly."""
    if not legal:
        return None
    hand = sit.hand
    if hand in legal:
        return hand
    if sit.table is None:
        low = lowest_rank(hand)
        c = count_at(hand, low)
        want = min(c, 3) * UNIT[low]
        if want in legal:
            return want
        with_low = [p for p in legal if count_at(p, low) == min(c, 3)]
        if with_low:
            # A trio with the lowest two other cards as kickers.
            return min(with_low, key=lambda p: (card_count(p), p))
    return rank_hints(hand, legal, leading=sit.table is None)[0]


def _bomb_bonus(sit: Situation, reading: Reading) -> float:
    if sit.pay_immediately:
        return -1.5
    # A bomb pays only if it is not topped: cheap when nothing can top it.
    return -0.8 if not beatable(sit.unseen, reading, 4, sit.split) else 0.3


@memo(1 << 17)
def _options(
    hand: Counts, table: Reading | None, legal: tuple[Counts, ...], split: bool
) -> tuple[tuple[Counts, Reading | None, float], ...]:
    """Per legal play: the play, how it reads, and the cost of the hand it leaves.

    What ``normal_scores`` needs that depends on the seat's own cards alone, so a
    play-out that meets the same hand and table again pays one lookup for all.
    The hand itself (going out) gets no reading: it scores ``WIN``.
    """
    out: list[tuple[Counts, Reading | None, float]] = []
    for p in legal:
        if p == hand:
            out.append((p, None, WIN))
            continue
        reading = best_reading(p, final=False, table=table)
        assert reading is not None, "every legal play has a reading"
        out.append((p, reading, hand_cost(hand - p, split)))
    return tuple(out)


def normal_scores(sit: Situation, legal: tuple[Counts, ...]) -> list[float]:
    """The normal policy's cost of each legal play (lower is better)."""
    hand, table, seat, split, unseen = sit.hand, sit.table, sit.seat, sit.split, sit.unseen
    opp_sizes = [sit.sizes[(seat + 1) % SEATS], sit.sizes[(seat + 2) % SEATS]]
    short = min(opp_sizes)
    danger = short <= 2
    biggest = max(opp_sizes)
    leading = table is None
    out: list[float] = []
    for p, reading, score in _options(hand, table, legal, split):
        if reading is None:
            out.append(WIN)
            continue
        if reading.kind == BOMB:
            score += _bomb_bonus(sit, reading)
        if leading:
            # Shed many cards while holding the lead.
            score -= 0.04 * card_count(p)
        if not danger and score >= 2.0:
            # Whether anyone can beat it changes nothing below: skip the question.
            out.append(score)
            continue
        need = beat_size(unseen, reading, split)
        safe = biggest < need
        if danger:
            if not safe and short >= need:
                # An opponent with one or two cards could take this trick and go out.
                score += 3.0
            score -= 0.02 * reading.top
        if safe and score < 2.0:
            # Few plays left: a trick nobody can take keeps the lead to finish with.
            score -= 0.6
        out.append(score)
    return out


def normal_choice(sit: Situation, legal: tuple[Counts, ...]) -> Counts | None:
    """Plays so that what is left splits into the fewest, strongest plays; keeps its
    high cards for control; guards against an opponent about to go out; bombs when a
    bomb pays."""
    if not legal:
        return None
    if len(legal) == 1:
        return legal[0]
    if sit.hand in legal:
        return sit.hand
    scores = normal_scores(sit, legal)
    best = min(range(len(legal)), key=scores.__getitem__)
    return legal[best]
