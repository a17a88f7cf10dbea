"""The engine's API for computer players: everything a bot may use besides its SeatView.

A player program reasons in rank-count space, where suits are gone:

- Ranks are ints from 0 (the 3) to ``TWO``, ``RANK_COUNT`` of them; ``ACE``,
  ``TOP_RUN_RANK`` (the highest rank a run may reach), ``TOP_BOMB_RANK`` (the
  highest four of a kind) and ``BOMB_CARDS`` name the limits: no bare numbers.
- ``Counts``: a multiset of ranks packed into one int, four bits per rank.
  ``counts_of`` (cards), ``counts_of_codes``, ``count_at``, ``counts_tuple``,
  ``card_count``, ``lowest_rank``, ``rank_block`` (a run's cards),
  ``counts_string`` and
  ``UNIT[r]`` (one card of rank r; adding and subtracting Counts adds and
  removes cards) are its helpers: nothing else should shift bits.
- ``Reading``: how a set of cards reads as a play (kind, length, top).
  ``classify`` lists every reading, ``best_reading`` the one legal now,
  ``beats`` and ``lowest_beating_top`` say what beats what, ``move_reading``
  reads a public ``Move``.
- ``legal_plays`` lists a position's legal plays; ``locked_ranks`` the bombs
  that may not be split; ``rank_hints`` orders plays as the hint button does.
- ``RankDeal`` plays a deal on with every hand given (a sampled deal, in a
  search): the same class decides what happens after every real action, so a
  play-out follows the rules and the scoring exactly.
- ``memo``: the engine's bounded cache for pure functions of such ints (a ``Memoised``
  function).

Bots import the engine only from here and from the package (``server.engine``).
"""

from __future__ import annotations

from .cards import ACE, HAND_SIZE, RANK_COUNT, TWO
from .combos import (
    AIRPLANE,
    BOMB,
    BOMB_CARDS,
    KIND_NAMES,
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
    best_reading,
    card_count,
    classify,
    count_at,
    counts_of,
    counts_of_codes,
    counts_of_deck_without,
    counts_string,
    counts_tuple,
    lowest_beating_top,
    lowest_rank,
    rank_block,
)
from .game import move_reading
from .hints import rank_hints
from .memo import Memoised, memo
from .moves import legal_plays, locked_ranks
from .rankdeal import BOMB_POINTS, RankDeal
from .rules import Rules
from .state import SEATS

__all__ = [
    "ACE",
    "AIRPLANE",
    "BOMB",
    "BOMB_CARDS",
    "BOMB_POINTS",
    "HAND_SIZE",
    "KIND_NAMES",
    "PAIR",
    "PAIR_RUN",
    "RANK_COUNT",
    "SEATS",
    "SINGLE",
    "STRAIGHT",
    "TOP_BOMB_RANK",
    "TOP_RUN_RANK",
    "TRIO_TWO",
    "TWO",
    "UNIT",
    "Counts",
    "Memoised",
    "RankDeal",
    "Reading",
    "beats",
    "best_reading",
    "card_count",
    "classify",
    "count_at",
    "counts_of",
    "counts_of_codes",
    "counts_of_table_deck",
    "counts_string",
    "counts_tuple",
    "legal_plays",
    "locked_ranks",
    "lowest_beating_top",
    "lowest_rank",
    "memo",
    "move_reading",
    "rank_block",
    "rank_hints",
]


def counts_of_table_deck(rules: Rules) -> Counts:
    """The whole deck of a table with ``rules``, as Counts."""
    return counts_of_deck_without(rules.removed_ace)
