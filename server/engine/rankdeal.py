"""One deal's flow of play in rank-count space: the rules ``apply`` and play-outs share.

``RankDeal`` holds what decides the rest of a deal (hands as ``Counts``, the
reading on the table, passes, who played, bomb points, a pending bomb) and
moves it on by a play or a pass: must-beat and the last-card rule through
``legal_plays``, trick clearing, when a bomb pays, who wins and what everyone
scores.  ``game.apply`` checks an action card by card, then lets a ``RankDeal``
built from the match state decide what happens; a bot's look-ahead plays
thousands of deals through the same class without cards, moves or events.  So
a rule of play or scoring is written here once.
"""

from __future__ import annotations

from .combos import BOMB, Counts, Reading, best_reading, card_count
from .moves import legal_plays
from .state import SEATS

__all__ = ["BOMB_POINTS", "RankDeal", "bomb_payment", "settle"]

# What each of the two other players pays a bomb's player (RULES.md, rule E).
BOMB_POINTS = 10


def bomb_payment(bomber: int) -> list[int]:
    """Per seat, what one bomb by ``bomber`` moves: +20 to the bomber, -10 from each other."""
    points = [-BOMB_POINTS] * SEATS
    points[bomber] = BOMB_POINTS * (SEATS - 1)
    return points


def settle(sizes: list[int], played_any: list[bool], winner: int) -> tuple[list[bool], list[int]]:
    """Who was shut out, and each seat's card points, when ``winner`` went out.

    Each loser pays the winner a point per card left, double when it never played.
    """
    shut_out = [s != winner and not played_any[s] for s in range(SEATS)]
    points = [0] * SEATS
    for s in range(SEATS):
        if s != winner:
            pay = sizes[s] * (2 if shut_out[s] else 1)
            points[s] -= pay
            points[winner] += pay
    return shut_out, points


class RankDeal:
    """One deal in progress with every hand known (a real deal or a sampled one).

    Mutable and cheap to ``copy``; ``play`` and ``pass_`` trust that the move is
    legal (``legal()`` lists the plays; a pass is legal only when it is empty and
    the table is not).  ``winner`` is -1 until a hand empties.  ``paid`` is the
    seat whose bomb was paid most recently since construction (-1: none), so a
    caller that builds a ``RankDeal`` per move can tell that one paid.
    """

    __slots__ = (
        "bomb",
        "hands",
        "leader",
        "needs_three",
        "paid",
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
        self.sizes = [card_count(h) for h in hands]
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
        self.paid = -1

    def copy(self) -> RankDeal:
        """An independent copy (hands and score lists are not shared)."""
        other = RankDeal.__new__(RankDeal)
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
        other.paid = self.paid
        return other

    def next_has_one(self) -> bool:
        """Whether the seat after the one to move holds exactly one card (last-card rule)."""
        return self.sizes[(self.turn + 1) % SEATS] == 1

    def legal(self) -> tuple[Counts, ...]:
        """Every legal play of the seat to move; empty means it must pass."""
        t = self.turn
        return legal_plays(
            self.hands[t],
            self.table,
            self.sizes[(t + 1) % SEATS] == 1,
            self.needs_three,
            self.split,
        )

    def _pay(self, seat: int) -> None:
        self.paid = seat
        bomb = self.bomb
        for s, points in enumerate(bomb_payment(seat)):
            bomb[s] += points

    def play(self, play: Counts) -> Reading:
        """Play ``play`` (one of ``legal()``) for the seat to move; returns how it reads."""
        t = self.turn
        hand = self.hands[t]
        final = play == hand
        reading = best_reading(play, final=final, table=self.table)
        assert reading is not None, "play is not legal here"
        self.hands[t] = hand - play
        self.sizes[t] -= card_count(play)
        self.table = reading
        self.leader = t
        self.passes = 0
        self.played_any[t] = True
        self.needs_three = False
        if reading.kind == BOMB:
            if self.pay_immediately:
                self._pay(t)
            else:
                # A higher bomb takes over; the beaten one never pays.
                self.pending = t
        else:
            # Only a bomb beats a bomb, and a cleared trick pays its pending one.
            assert self.pending < 0, "a non-bomb followed a pending bomb"
        if final:
            if self.pending == t:
                self._pay(t)
                self.pending = -1
            self.winner = t
            self.turn = -1
        else:
            self.turn = (t + 1) % SEATS
        return reading

    def pass_(self) -> bool:
        """Pass for the seat to move; True when that pass cleared the trick."""
        self.passes += 1
        if self.passes == SEATS - 1:
            if self.pending >= 0:
                self._pay(self.pending)
                self.pending = -1
            self.table = None
            self.passes = 0
            self.turn = self.leader
            return True
        self.turn = (self.turn + 1) % SEATS
        return False

    def card_points(self) -> tuple[list[bool], list[int]]:
        """Shut-outs and card points of the ended deal (see ``settle``)."""
        assert self.winner >= 0, "the deal is not over"
        return settle(self.sizes, self.played_any, self.winner)

    def scores(self) -> list[int]:
        """Deal totals of the ended deal: card points plus bomb points."""
        _shut, points = self.card_points()
        return [b + p for b, p in zip(self.bomb, points, strict=True)]
