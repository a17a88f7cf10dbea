"""Ordering legal plays so that the first hint is a sensible one."""

from __future__ import annotations

from .combos import BOMB, Counts, classify

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
    broken = high = size = 0
    # Walk the four-bit rank fields of play and hand together (lowest rank first).
    took_rest, hand_rest, r = play, hand, 0
    while took_rest:
        took = took_rest & 15
        if took:
            high = r
            size += took
            if took < hand_rest & 15:
                broken += 1
        took_rest >>= 4
        hand_rest >>= 4
        r += 1
    if leading:
        # Shed many low cards without breaking groups; keep bombs.
        return (1, int(is_bomb), broken, high, -size, play)
    # Beat as cheaply as possible: whole groups, lowest top, bombs last.
    return (1, int(is_bomb), broken, high, size, play)


def rank_hints(hand: Counts, legal: tuple[Counts, ...], *, leading: bool) -> list[Counts]:
    """``legal`` ordered as the hint button offers them: going out, then cheapest first."""

    return sorted(legal, key=lambda p: _cost(hand, p, leading))
