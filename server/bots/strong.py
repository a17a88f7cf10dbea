"""The strong bot: determinized search over the hands the opponents may hold."""

from __future__ import annotations

import random
import time

from ..engine import SeatView
from .base import BotAction
from .levels import legal_of, to_action
from .observe import observe
from .search import Clock, SearchStats, search

__all__ = ["DEFAULT_BUDGET", "StrongBot"]

DEFAULT_BUDGET = 0.3


class StrongBot:
    level = "strong"

    def __init__(
        self, seed: int, budget: float = DEFAULT_BUDGET, clock: Clock = time.perf_counter
    ) -> None:
        self.seed = seed
        self.budget = budget
        self.clock = clock
        self.last_stats = SearchStats()

    def choose(self, view: SeatView) -> BotAction:
        obs = observe(view)
        legal = legal_of(obs)
        if not legal:
            return to_action(view, None)
        if len(legal) == 1 or obs.hand in legal:
            return to_action(view, obs.hand if obs.hand in legal else legal[0])
        # The same seed, deal and position always give the same samples.
        rng = random.Random(f"strong/{self.seed}/{view.deal_no}/{len(view.moves)}")
        self.last_stats = SearchStats()
        play = search(obs, legal, rng, self.budget, self.clock, self.last_stats)
        return to_action(view, play)
