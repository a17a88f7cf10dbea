"""What a bot knows, read from its SeatView alone, in rank-count space."""

from __future__ import annotations

from typing import NamedTuple

from ..engine import SeatView
from ..engine.players import (
    BOMB,
    HAND_SIZE,
    SEATS,
    Counts,
    RankDeal,
    Reading,
    counts_of_codes,
    counts_of_table_deck,
    move_reading,
)

__all__ = ["Observation", "PastMove", "observe"]


class PastMove(NamedTuple):
    """One public move, with the situation it was made in (for inference)."""

    seat: int
    play: Counts | None  # None: a pass
    table: Reading | None  # what was on the table before it
    next_has_one: bool  # the seat after ``seat`` then held one card


class Observation(NamedTuple):
    """One seat's knowledge of the deal in progress, from its view alone."""

    seat: int
    deal_no: int
    hand: Counts
    sizes: tuple[int, ...]
    table: Reading | None
    leader: int
    passes: int
    played_any: tuple[bool, ...]
    bomb: tuple[int, ...]
    pending: int
    needs_three: bool
    split: bool
    pay_immediately: bool
    # Cards the two opponents hold together: the deck minus this hand and all plays.
    unseen: Counts
    history: tuple[PastMove, ...]

    def sim(self, hands: list[Counts]) -> RankDeal:
        """This position as a ``RankDeal`` with ``hands`` as everyone's cards."""
        return RankDeal(
            hands,
            self.seat,
            split=self.split,
            pay_immediately=self.pay_immediately,
            leader=self.leader,
            table=self.table,
            passes=self.passes,
            played_any=list(self.played_any),
            bomb=list(self.bomb),
            pending=self.pending,
            needs_three=self.needs_three,
        )


def observe(view: SeatView) -> Observation:
    """What ``view`` tells its seat, in rank-count space, with the public history."""
    hand = counts_of_codes(view.hand)
    sizes = [HAND_SIZE] * SEATS
    table: Reading | None = None
    passes = 0
    played = 0
    history: list[PastMove] = []
    played_any = [False] * SEATS
    for move in view.moves:
        nxt_one = sizes[(move.seat + 1) % SEATS] == 1
        if move.kind == "pass":
            history.append(PastMove(move.seat, None, table, nxt_one))
            passes += 1
            if passes == SEATS - 1:
                table, passes = None, 0
        else:
            play = counts_of_codes(move.cards)
            history.append(PastMove(move.seat, play, table, nxt_one))
            played += play
            sizes[move.seat] -= len(move.cards)
            played_any[move.seat] = True
            table, passes = move_reading(move), 0
    table = move_reading(view.table) if view.table is not None else None
    pay_now = view.rules.bomb_payment == "immediate"
    pending = view.leader if table is not None and table.kind == BOMB and not pay_now else -1
    return Observation(
        seat=view.seat,
        deal_no=view.deal_no,
        hand=hand,
        sizes=tuple(view.counts),
        table=table,
        leader=view.leader,
        passes=passes,
        played_any=tuple(played_any),
        bomb=tuple(view.bomb_points),
        pending=pending,
        needs_three=view.must_include is not None,
        split=view.rules.split_bombs,
        pay_immediately=pay_now,
        unseen=counts_of_table_deck(view.rules) - hand - played,
        history=tuple(history),
    )
