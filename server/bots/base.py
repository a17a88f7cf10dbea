"""The seat/bot interface: a bot sees one SeatView and answers with one action."""

from __future__ import annotations

from typing import Protocol

from ..engine import Pass, Play, SeatView, pick_cards

__all__ = ["Bot", "BotAction", "fallback_action"]

BotAction = Play | Pass


class Bot(Protocol):
    """A computer player: one action per view, from that view alone."""

    level: str

    def choose(self, view: SeatView) -> BotAction:
        """A legal action for ``view.seat``, which must be the seat to move."""
        ...


def fallback_action(view: SeatView) -> BotAction:
    """A legal action from the view alone: the first hint, else the first legal play
    (a bot's view carries no hints), or a pass when nothing beats the table."""
    if view.hints:
        return Play(seat=view.seat, cards=list(view.hints[0]))
    if view.legal:
        return Play(seat=view.seat, cards=pick_cards(view.hand, view.legal[0], view.must_include))
    return Pass(seat=view.seat)
