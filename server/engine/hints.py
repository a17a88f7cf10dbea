"""Ordering legal plays so that the first hint is a sensible one."""

from __future__ import annotations

from .combos import BOMB, Counts, card_count, classify, highest_rank, rank_mask

__all__ = ["MAX_HINTS", "rank_hints"]

# Enough to cycle through every sensible alternative without shipping hundreds of
# kicker variations in every view.
MAX_HINTS = 30


def _cost(hand: Counts, play: Counts, leading: bool) -> tuple[int, ...]:
    if play == hand:
        # Going out beats any other consideration.
        return (0,)
    readings = classify(play)
    is_bomb = bool(readings) and readings[0].kind == BOMB
    # The groups the play breaks: ranks it takes some, not all, of.  A legal play
    # is part of the hand, so ``hand - play`` borrows nothing.
    broken = (rank_mask(play) & rank_mask(hand - play)).bit_count()
    high, size = highest_rank(play), card_count(play)
    if leading:
        # Shed many low cards without breaking groups; keep bombs.
        return (1, int(is_bomb), broken, high, -size, play)
    # Beat as cheaply as possible: whole groups, lowest top, bombs last.
    return (1, int(is_bomb), broken, high, size, play)


def rank_hints(hand: Counts, legal: tuple[Counts, ...], *, leading: bool) -> list[Counts]:
    """``legal`` ordered as the hint button offers them: going out, then cheapest first."""

    return sorted(legal, key=lambda p: _cost(hand, p, leading))
