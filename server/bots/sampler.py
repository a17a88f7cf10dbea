"""Sampling the opponents' hidden hands consistently with everything public.

What a seat knows about the two other hands: their sizes; that together they
hold exactly the unseen cards (the deck minus its own hand minus every card
played); and what their moves proved.  Under must-beat a pass proves the
passer held no legal play against the table then (bombs included, split-bomb
rule respected), and a single played while the next seat held one card was
the highest single its player could play.  A hand "then" is the hand now plus
what that seat has played since, so each proof is checked against the sampled
hand directly.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import NamedTuple

from ..engine.players import (
    RANK_COUNT,
    SEATS,
    SINGLE,
    TWO,
    UNIT,
    Counts,
    Reading,
    card_count,
    count_at,
    legal_plays,
    locked_ranks,
    lowest_rank,
)
from .observe import Observation

__all__ = ["Constraint", "Sampler", "consistent", "constraints_of"]

MAX_TRIES = 40
REPAIR_SWAPS = 200


def _nothing() -> None:
    pass


class Constraint(NamedTuple):
    """One thing a public move proved about its player's hand at the time."""

    seat: int
    # Cards the seat played after the moment: its hand then is its hand now plus these.
    later: Counts
    # A pass against ``table`` (``forced_top`` < 0), or a single of rank ``forced_top``
    # played as the highest single the seat could play.
    table: Reading | None
    next_has_one: bool
    forced_top: int


def constraints_of(obs: Observation) -> list[Constraint]:
    """Every proof the opponents' moves in this deal gave, latest first."""
    later = [0] * SEATS
    out: list[Constraint] = []
    for move in reversed(obs.history):
        if move.seat == obs.seat:
            continue
        if move.play is None:
            out.append(Constraint(move.seat, later[move.seat], move.table, move.next_has_one, -1))
        else:
            if move.next_has_one and card_count(move.play) == 1:
                top = lowest_rank(move.play)
                out.append(Constraint(move.seat, later[move.seat] + move.play, None, True, top))
            later[move.seat] += move.play
    return out


def _holds(hand: Counts, c: Constraint, split: bool) -> bool:
    then = hand + c.later
    if c.forced_top < 0:
        return not legal_plays(then, c.table, c.next_has_one, False, split)
    # No single above the one played, ignoring bombs that may not be split.
    free = then - locked_ranks(then, split)
    return not any(count_at(free, r) for r in range(c.forced_top + 1, RANK_COUNT))


def consistent(obs: Observation, hands: list[Counts]) -> bool:
    """Whether ``hands`` (everyone's cards now) could be the truth behind ``obs``."""
    seat = obs.seat
    if hands[seat] != obs.hand:
        return False
    opps = [s for s in range(SEATS) if s != seat]
    if sum(hands[s] for s in opps) != obs.unseen:
        return False
    if any(card_count(hands[s]) != obs.sizes[s] for s in opps):
        return False
    return all(_holds(hands[c.seat], c, obs.split) for c in constraints_of(obs))


def _bound(obs: Observation, seat: int, cons: list[Constraint]) -> int:
    """Highest rank ``seat`` can hold now, from single passes and forced singles."""
    bound = TWO
    if not obs.split:
        # A locked four of a kind may sit above a forced single; keep it simple.
        return bound
    for c in cons:
        if c.seat != seat:
            continue
        if c.forced_top >= 0:
            bound = min(bound, c.forced_top)
        elif c.table is not None and c.table.kind == SINGLE:
            bound = min(bound, c.table.top)
    return bound


class Sampler:
    """Draws opponents' hands for one observation; cheap filters first, then every proof."""

    def __init__(
        self, obs: Observation, rng: random.Random, tick: Callable[[], None] = _nothing
    ) -> None:
        # ``tick`` is called before every draw and every repair swap: a search
        # passes its clock check, which raises when the decision's time is up.
        self.obs = obs
        self.rng = rng
        self.tick = tick
        self.cons = constraints_of(obs)
        seat = obs.seat
        self.a, self.b = (seat + 1) % SEATS, (seat + 2) % SEATS
        ranks: list[int] = []
        for r in range(RANK_COUNT):
            ranks.extend([r] * count_at(obs.unseen, r))
        bound_a, bound_b = _bound(obs, self.a, self.cons), _bound(obs, self.b, self.cons)
        only_a = [r for r in ranks if r > bound_b]
        only_b = [r for r in ranks if r > bound_a]
        if any(r > bound_a and r > bound_b for r in ranks) or (
            len(only_a) > obs.sizes[self.a] or len(only_b) > obs.sizes[self.b]
        ):
            # The proofs cannot all hold with these sizes; fall back to sizes alone.
            only_a, only_b = [], []
            free = ranks
        else:
            free = [r for r in ranks if r <= bound_a and r <= bound_b]
        self.base_a = sum(UNIT[r] for r in only_a)
        self.need_a = obs.sizes[self.a] - len(only_a)
        self.free = free
        self.tries = 0
        self.rejected = 0

    def _hands(self, to_a: list[int]) -> list[Counts]:
        hand_a = self.base_a + sum(UNIT[r] for r in to_a)
        hands = [0] * SEATS
        hands[self.obs.seat] = self.obs.hand
        hands[self.a] = hand_a
        hands[self.b] = self.obs.unseen - hand_a
        return hands

    def _repair(self, free: list[int], bad: int) -> tuple[list[Counts], int]:
        """Swap free cards between the two hands while that breaks no more proofs."""
        need = self.need_a
        hands = self._hands(free[:need])
        if need == 0 or need == len(free):
            return hands, bad
        for _ in range(REPAIR_SWAPS):
            self.tick()
            i = self.rng.randrange(need)
            j = self.rng.randrange(need, len(free))
            if free[i] == free[j]:
                continue
            free[i], free[j] = free[j], free[i]
            trial = self._hands(free[:need])
            trial_bad = self._violations(trial)
            if trial_bad <= bad:
                hands, bad = trial, trial_bad
                if bad == 0:
                    break
            else:
                free[i], free[j] = free[j], free[i]
        return hands, bad

    def _violations(self, hands: list[Counts]) -> int:
        return sum(not _holds(hands[c.seat], c, self.obs.split) for c in self.cons)

    def sample(self) -> list[Counts]:
        """Everyone's hands: a draw that satisfies every proof; after ``MAX_TRIES``
        failed draws, the best one repaired by swaps (rarely still imperfect)."""
        best: list[int] = []
        best_bad = 1 << 30
        for _ in range(MAX_TRIES):
            self.tick()
            self.tries += 1
            free = self.free[:]
            self.rng.shuffle(free)
            hands = self._hands(free[: self.need_a])
            bad = self._violations(hands) if self.cons else 0
            if bad == 0:
                return hands
            self.rejected += 1
            if bad < best_bad:
                best, best_bad = free, bad
        return self._repair(best, best_bad)[0]
