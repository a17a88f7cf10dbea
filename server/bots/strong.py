"""The strong bot: determinized search over the hands the opponents may hold."""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ..engine import SeatView
from .base import BotAction
from .levels import legal_of, to_action
from .observe import observe
from .search import Clock, SearchStats, search

__all__ = ["DEFAULT_BUDGET", "StrongBot"]

DEFAULT_BUDGET = 0.3


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector off during a search.

    The planning caches hold hundreds of thousands of tuples; a full collection
    scanning them took 100-200 ms, which is most of a decision's budget.  The
    search itself makes no reference cycles, so nothing piles up meanwhile.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class StrongBot:
    """Searches sampled deals for the play with the best mean deal score (``search``)."""

    level = "strong"

    def __init__(
        self, seed: int, budget: float = DEFAULT_BUDGET, clock: Clock = time.perf_counter
    ) -> None:
        self.seed = seed
        self.budget = budget
        self.clock = clock
        self.last_stats = SearchStats()

    def choose(self, view: SeatView) -> BotAction:
        """The searched action for ``view`` (forced moves without search)."""
        obs = observe(view)
        legal = legal_of(obs)
        if not legal:
            return to_action(view, None)
        if len(legal) == 1 or obs.hand in legal:
            return to_action(view, obs.hand if obs.hand in legal else legal[0])
        # The same seed, deal and position always give the same samples.
        rng = random.Random(f"strong/{self.seed}/{view.deal_no}/{len(view.moves)}")
        self.last_stats = SearchStats()
        with _gc_paused():
            play = search(obs, legal, rng, self.budget, self.clock, self.last_stats)
        return to_action(view, play)
