"""Ordering legal plays so that the first hint is a sensible one."""

from __future__ import annotations

from .combos import BOMB, Counts, classify, count_at

__all__ = ["MAX_HINTS", "rank_hints"]

# Enough to cycle through every sensible alternative without shipping hundreds of
# kicker variations in every view.
MAX_HINTS = 30


def _cost(hand: Counts, play: Counts, leading: bool) -> tuple[int, ...]:
    readings = classify(play)
    is_bomb = bool(readings) and readings[0].kind == BOMB
    broken = 0
    high = 0
    for r in range(13):
        took = count_at(play, r)
        if took:
            high = r
            if took < count_at(hand, r):
                broken += 1
    size = sum(count_at(play, r) for r in range(13))
    if play == hand:
        # Going out beats any other consideration.
        return (0,)
    if leading:
        # Shed many low cards without breaking groups; keep bombs.
        return (1, int(is_bomb), broken, high, -size, play)
    # Beat as cheaply as possible: whole groups, lowest top, bombs last.
    return (1, int(is_bomb), broken, high, size, play)


def rank_hints(hand: Counts, legal: tuple[Counts, ...], *, leading: bool) -> list[Counts]:
    """``legal`` ordered as the hint button offers them: going out, then cheapest first."""

    return sorted(legal, key=lambda p: _cost(hand, p, leading))
