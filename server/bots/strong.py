"""The strong bot: determinized search over the hands the opponents may hold."""

from __future__ import annotations

import gc
import random
import time

from ..engine import SeatView
from .base import BotAction
from .levels import legal_of, to_action
from .observe import observe
from .search import MOVES_PER_SECOND, Clock, SearchStats, search

__all__ = ["DEFAULT_BUDGET", "StrongBot", "sampler_rng"]

DEFAULT_BUDGET = 0.1


def sampler_rng(seed: int, view: SeatView) -> random.Random:
    """The generator of a decision's sampled deals: the same seed, deal and position
    always give the same samples, and every position of a deal its own (a seed that
    ignored the position would draw the same few deals at every turn)."""
    return random.Random(f"strong/{seed}/{view.deal_no}/{len(view.moves)}")


class StrongBot:
    """Searches sampled deals for the play with the best mean deal score (``search``)."""

    level = "strong"

    def __init__(
        self,
        seed: int,
        budget: float = DEFAULT_BUDGET,
        clock: Clock = time.monotonic,
        moves_per_second: float = MOVES_PER_SECOND,
    ) -> None:
        self.seed = seed
        self.budget = budget
        self.clock = clock
        self.moves_per_second = moves_per_second
        self.last_stats = SearchStats()

    def choose(self, view: SeatView, asked_at: float | None = None) -> BotAction:
        """The searched action for ``view`` (forced moves without search).

        The budget counts from ``asked_at`` (a reading of the bot's clock, by
        default ``time.monotonic``, taken when the decision was asked), or from
        this call: reading the view and planning are part of the decision.

        The cyclic garbage collector is held off for the whole decision.  The
        planning caches hold hundreds of thousands of tuples; a full collection
        scanning them took 100-200 ms, most of a decision's budget, and the
        search makes no reference cycles, so nothing piles up meanwhile.  On the
        way out every object still alive (mostly cache entries) moves to the
        permanent generation (``gc.freeze``, constant time): the collections the
        decision's allocations are due to trigger then find an empty young
        generation, instead of scanning the caches inside the next decision.
        Frozen objects are still freed by reference counting when a cache clears.
        """
        asked_at = self.clock() if asked_at is None else asked_at
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            action = self._choose(view, asked_at)
        finally:
            if was_enabled:
                # Nothing is allocated between here and the return.
                gc.freeze()
                gc.enable()
        return action

    def _choose(self, view: SeatView, asked_at: float) -> BotAction:
        obs = observe(view)
        legal = legal_of(obs)
        if not legal:
            return to_action(view, None)
        if len(legal) == 1 or obs.hand in legal:
            return to_action(view, obs.hand if obs.hand in legal else legal[0])
        rng = sampler_rng(self.seed, view)
        self.last_stats = SearchStats()
        play = search(
            obs,
            legal,
            rng,
            self.budget,
            self.clock,
            self.last_stats,
            asked_at=asked_at,
            moves_per_second=self.moves_per_second,
        )
        return to_action(view, play)
