"""Why an action was refused: one reason code per distinct cause.

``InvalidActionError`` means the action is malformed (an unknown card code, a
card named twice, an action that makes no sense now).  ``IllegalActionError``
means it is well formed but the rules forbid it.  Both carry a ``Reason`` whose
value is the wire code.
"""

from __future__ import annotations

from enum import StrEnum

from server.errors import ServerError

__all__ = ["EngineError", "IllegalActionError", "InvalidActionError", "Reason"]


class Reason(StrEnum):
    """Why the engine refused an action; the value is the wire code."""

    # malformed
    INVALID_CARD = "invalid_card"
    DUPLICATE_CARD = "duplicate_card"
    INVALID_SEAT = "invalid_seat"
    DEAL_OVER = "deal_over"
    DEAL_IN_PROGRESS = "deal_in_progress"
    MATCH_OVER = "match_over"
    INVALID_POSITION = "invalid_position"
    # against the rules (RULES.md, "Player aids")
    NOT_YOUR_TURN = "not_your_turn"
    CARDS_NOT_IN_HAND = "cards_not_in_hand"
    NOT_A_COMBINATION = "not_a_combination"
    DOES_NOT_BEAT = "does_not_beat"
    MUST_INCLUDE_THREE_OF_SPADES = "must_include_three_of_spades"
    MUST_PLAY_HIGHEST_SINGLE = "must_play_highest_single"
    SHORT_FORM_ONLY_LAST = "short_form_only_last"
    MAY_NOT_SPLIT_BOMB = "may_not_split_bomb"
    LEADER_MAY_NOT_PASS = "leader_may_not_pass"
    MUST_BEAT = "must_beat"


class EngineError(ServerError[Reason]):
    """Base of every engine refusal (a ``server.errors.ServerError``)."""


class InvalidActionError(EngineError, ValueError):
    """The action is malformed or makes no sense in this state."""


class IllegalActionError(EngineError):
    """The action is well formed but the rules forbid it."""
