"""The bots: each reads its SeatView, picks a play in rank space, names the cards."""

from __future__ import annotations

from ..engine import Pass, Play, SeatView, pick_cards
from ..engine.players import SEATS, Counts, counts_string, legal_plays
from .base import BotAction
from .observe import Observation, observe
from .policy import Situation, easy_choice, normal_choice

__all__ = ["EasyBot", "NormalBot", "legal_of", "situation_of", "to_action"]


def legal_of(obs: Observation) -> tuple[Counts, ...]:
    """The observing seat's legal plays (empty: it must pass)."""
    next_has_one = obs.sizes[(obs.seat + 1) % SEATS] == 1
    return legal_plays(obs.hand, obs.table, next_has_one, obs.needs_three, obs.split)


def situation_of(obs: Observation) -> Situation:
    """The policies' input for the observing seat: the unseen cards are the opponents'."""
    return Situation(
        seat=obs.seat,
        hand=obs.hand,
        sizes=obs.sizes,
        table=obs.table,
        unseen=obs.unseen,
        split=obs.split,
        pay_immediately=obs.pay_immediately,
    )


def to_action(view: SeatView, play: Counts | None) -> BotAction:
    """The engine action for a rank-space choice (None: pass), naming cards from the hand."""
    if play is None:
        return Pass(seat=view.seat)
    return Play(seat=view.seat, cards=pick_cards(view.hand, counts_string(play), view.must_include))


class EasyBot:
    """Sheds its lowest groups and follows as cheaply as it can (``policy.easy_choice``)."""

    level = "easy"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def choose(self, view: SeatView) -> BotAction:
        """The easy policy's action for ``view``."""
        obs = observe(view)
        return to_action(view, easy_choice(situation_of(obs), legal_of(obs)))


class NormalBot:
    """Plans its hand into few strong plays and counts cards (``policy.normal_choice``)."""

    level = "normal"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def choose(self, view: SeatView) -> BotAction:
        """The normal policy's action for ``view``."""
        obs = observe(view)
        return to_action(view, normal_choice(situation_of(obs), legal_of(obs)))
