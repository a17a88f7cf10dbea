"""The strong bot's search: determinized play-outs and an exact endgame.

For each sampled deal (opponents' hands drawn by ``Sampler``), every candidate
play is made and the deal is played to its end: exactly (max-n: each seat
maximises its own deal score) when few cards remain, otherwise by the normal
policy for all three seats.  The candidate with the best mean deal score for
the bot wins -- points, not merely the chance to go out first.

The budget is counted twice: a work budget (simulated moves), which when it
ends the search makes a seed and a view always give the same play, and the
clock, read before every simulated move, which ends it first whenever the
machine is slower than the work budget assumes (cold caches, a busy host).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from ..engine.players import SEATS, Counts, RankDeal
from .observe import Observation
from .policy import Situation, normal_choice, normal_scores
from .sampler import Sampler

__all__ = ["MAX_CANDIDATES", "SearchStats", "search"]

MAX_CANDIDATES = 6
# Simulated moves per second of budget: about what one warm core manages, so
# the reproducible work budget ends most searches once caches are warm.
MOVES_PER_SECOND = 120000
ENDGAME_CARDS = 12
ENDGAME_NODES = 20000
# Simulated moves (or endgame nodes) between two readings of the clock: every
# one, since a move on cold caches can take milliseconds and a reading takes
# well under a microsecond.
CLOCK_EVERY = 1

Clock = Callable[[], float]


class SearchStats:
    """What one search did: samples scored, moves simulated, exact solves, clock stop."""

    def __init__(self) -> None:
        self.samples = 0
        self.moves = 0
        self.exact = 0
        self.stopped_by_clock = False


class _OutOfTime(Exception):
    pass


class _Timer:
    """Reads the clock every ``CLOCK_EVERY`` ticks; raises once the deadline has passed."""

    def __init__(self, clock: Clock, deadline: float) -> None:
        self.clock = clock
        self.deadline = deadline
        self.ticks = 0

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks % CLOCK_EVERY == 0 and self.clock() >= self.deadline:
            raise _OutOfTime


def _rollout(sim: RankDeal, seat: int, timer: _Timer) -> tuple[int, int]:
    """Play ``sim`` out with the normal policy for everyone: the deal score of ``seat``
    and the number of moves simulated."""
    moves = 0
    while sim.winner < 0:
        moves += 1
        timer.tick()
        t = sim.turn
        legal = sim.legal()
        if not legal:
            sim.pass_()
        else:
            hands = sim.hands
            sit = Situation(
                t,
                hands[t],
                sim.sizes,
                sim.table,
                hands[(t + 1) % SEATS] + hands[(t + 2) % SEATS],
                sim.split,
                sim.pay_immediately,
            )
            choice = normal_choice(sit, legal)
            assert choice is not None
            sim.play(choice)
    return sim.scores()[seat], moves


def _key(sim: RankDeal) -> tuple[object, ...]:
    return (
        tuple(sim.hands),
        sim.turn,
        sim.leader,
        sim.table,
        sim.passes,
        tuple(sim.played_any),
        sim.pending,
    )


class _Endgame:
    """Max-n search of a deal with every hand known, bounded by a node count."""

    def __init__(self, limit: int, timer: _Timer) -> None:
        self.timer = timer
        self.nodes = 0
        self.limit = limit
        self.memo: dict[tuple[object, ...], tuple[int, ...]] = {}

    def value(self, sim: RankDeal) -> tuple[int, ...]:
        """Future deal scores (bomb points from here on, plus card points)."""
        if sim.winner >= 0:
            return tuple(sim.scores())
        key = _key(sim)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self.nodes += 1
        self.timer.tick()
        if self.nodes > self.limit:
            raise _TooBig
        legal = sim.legal()
        t = sim.turn
        best: tuple[int, ...] | None = None
        if not legal:
            nxt = sim.copy()
            nxt.pass_()
            best = self.value(nxt)
        else:
            for p in legal:
                nxt = sim.copy()
                nxt.play(p)
                v = self.value(nxt)
                if best is None or v[t] > best[t]:
                    best = v
        assert best is not None
        self.memo[key] = best
        return best


class _TooBig(Exception):
    pass


def _zero_bombs(sim: RankDeal) -> RankDeal:
    # Bomb points already scored are the same whatever comes next; leaving them out
    # lets positions reached by different orders share memo entries.
    sim.bomb = [0] * SEATS
    return sim


def search(
    obs: Observation,
    legal: tuple[Counts, ...],
    rng: random.Random,
    budget: float,
    clock: Clock = time.monotonic,
    stats: SearchStats | None = None,
    asked_at: float | None = None,
    moves_per_second: float = MOVES_PER_SECOND,
) -> Counts:
    """The play among ``legal`` with the best mean deal score over sampled deals.

    ``budget`` seconds count from ``asked_at`` (a reading of ``clock`` when the
    decision was asked; default: now), so time spent before the search, in a
    queue or reading the view, is spent from the same budget.  If even the
    first sample cannot be finished in time, the normal policy's favourite is
    played.  The work budget is ``budget * moves_per_second`` simulated moves.
    """
    stats = stats if stats is not None else SearchStats()
    deadline = (clock() if asked_at is None else asked_at) + budget
    sit = Situation(
        obs.seat, obs.hand, obs.sizes, obs.table, obs.unseen, obs.split, obs.pay_immediately
    )
    prior = normal_scores(sit, legal)
    order = sorted(range(len(legal)), key=lambda i: (prior[i], i))
    cands = [legal[i] for i in order[:MAX_CANDIDATES]]
    if len(cands) == 1:
        return cands[0]
    totals = [0.0] * len(cands)
    timer = _Timer(clock, deadline)
    work = budget * moves_per_second
    sampler = Sampler(obs, rng, timer.tick)
    exact_ok = sum(obs.sizes) <= ENDGAME_CARDS
    try:
        while stats.moves < work:
            timer.tick()
            hands = sampler.sample()
            base = _zero_bombs(obs.sim(hands))
            values: list[float] | None = None
            if exact_ok:
                solver = _Endgame(ENDGAME_NODES, timer)
                try:
                    values = []
                    for c in cands:
                        nxt = base.copy()
                        nxt.play(c)
                        values.append(float(solver.value(nxt)[obs.seat]))
                    stats.exact += 1
                except _TooBig:
                    exact_ok = False
                    values = None
                stats.moves += solver.nodes
            if values is None:
                values = []
                for c in cands:
                    sim = base.copy()
                    sim.play(c)
                    score, moves = _rollout(sim, obs.seat, timer)
                    values.append(float(score))
                    stats.moves += moves + 1
            # A sample counts only once every candidate has been scored on it.
            for i, v in enumerate(values):
                totals[i] += v
            stats.samples += 1
    except _OutOfTime:
        stats.stopped_by_clock = True
    if stats.samples == 0:
        return cands[0]
    best = max(range(len(cands)), key=lambda i: (totals[i], -i))
    return cands[best]
