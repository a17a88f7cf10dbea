"""A fast deal simulator in rank-count space, for bots' own look-ahead.

The engine's ``apply`` works on card codes and builds events; a search that
plays thousands of deals out needs none of that.  ``SimDeal`` mirrors the
rules of one deal (must-beat, last card, bombs and their payment, shut-outs)
on ``Counts`` ints, using the engine's own ``legal_plays`` and readings, so
the two cannot disagree on what is legal.
"""

from __future__ import annotations

from ..engine.combos import BOMB, Counts, Reading, best_reading
from ..engine.memo import memo
from ..engine.moves import legal_plays

__all__ = ["BOMB_POINTS", "SEATS", "SimDeal", "ncards"]

SEATS = 3
BOMB_POINTS = 10


@memo(1 << 16)
def ncards(counts: Counts) -> int:
    total = 0
    while counts:
        total += counts & 15
        counts >>= 4
    return total


class SimDeal:
    """One deal in progress, every hand known (a real deal or a sampled one)."""

    __slots__ = (
        "bomb",
        "hands",
        "leader",
        "needs_three",
        "passes",
        "pay_immediately",
        "pending",
        "played_any",
        "sizes",
        "split",
        "table",
        "turn",
        "winner",
    )

    def __init__(
        self,
        hands: list[Counts],
        turn: int,
        *,
        split: bool,
        pay_immediately: bool,
        leader: int | None = None,
        table: Reading | None = None,
        passes: int = 0,
        played_any: list[bool] | None = None,
        bomb: list[int] | None = None,
        pending: int = -1,
        needs_three: bool = False,
    ) -> None:
        self.hands = list(hands)
        self.sizes = [ncards(h) for h in hands]
        self.turn = turn
        self.leader = turn if leader is None else leader
        self.table = table
        self.passes = passes
        self.played_any = list(played_any) if played_any is not None else [False] * SEATS
        self.bomb = list(bomb) if bomb is not None else [0] * SEATS
        self.pending = pending
        self.needs_three = needs_three
        self.split = split
        self.pay_immediately = pay_immediately
        self.winner = -1

    def copy(self) -> SimDeal:
        other = SimDeal.__new__(SimDeal)
        other.hands = list(self.hands)
        other.sizes = list(self.sizes)
        other.turn = self.turn
        other.leader = self.leader
        other.table = self.table
        other.passes = self.passes
        other.played_any = list(self.played_any)
        other.bomb = list(self.bomb)
        other.pending = self.pending
        other.needs_three = self.needs_three
        other.split = self.split
        other.pay_immediately = self.pay_immediately
        other.winner = self.winner
        return other

    def next_has_one(self) -> bool:
        return self.sizes[(self.turn + 1) % SEATS] == 1

    def legal(self) -> tuple[Counts, ...]:
        t = self.turn
        return legal_plays(
            self.hands[t],
            self.table,
            self.sizes[(t + 1) % SEATS] == 1,
            self.needs_three,
            self.split,
        )

    def _pay(self, seat: int) -> None:
        for s in range(SEATS):
            self.bomb[s] += 2 * BOMB_POINTS if s == seat else -BOMB_POINTS

    def play(self, play: Counts) -> None:
        """Play ``play`` (one of ``legal()``) for the seat to move."""
        t = self.turn
        hand = self.hands[t]
        final = play == hand
        reading = best_reading(play, final=final, table=self.table)
        assert reading is not None, "play is not legal here"
        self.hands[t] = hand - play
        self.sizes[t] -= ncards(play)
        self.table = reading
        self.leader = t
        self.passes = 0
        self.played_any[t] = True
        self.needs_three = False
        if reading.kind == BOMB:
            if self.pay_immediately:
                self._pay(t)
            else:
                self.pending = t
        if final:
            if self.pending == t:
                self._pay(t)
                self.pending = -1
            self.winner = t
            self.turn = -1
        else:
            self.turn = (t + 1) % SEATS

    def pass_(self) -> None:
        self.passes += 1
        if self.passes == SEATS - 1:
            if self.pending >= 0:
                self._pay(self.pending)
                self.pending = -1
            self.table = None
            self.passes = 0
            self.turn = self.leader
        else:
            self.turn = (self.turn + 1) % SEATS

    def scores(self) -> list[int]:
        """Deal totals (card points with shut-out doubling, plus bomb points)."""
        w = self.winner
        out = list(self.bomb)
        for s in range(SEATS):
            if s != w:
                pay = self.sizes[s] * (1 if self.played_any[s] else 2)
                out[s] -= pay
                out[w] += pay
        return out
