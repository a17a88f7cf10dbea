"""Pure rules of Pao De Kuai: cards, combinations, legal plays, state, seat views.

No I/O, no asyncio, no global randomness: a match is its rules, seed and action log.
"""

from .actions import (
    Action,
    BombPaid,
    DealEnded,
    DealStarted,
    Event,
    LastCard,
    MatchEnded,
    NextDeal,
    Pass,
    Passed,
    Play,
    Played,
    TrickCleared,
)
from .cards import RANKS, SUITS, card_code, deck, parse_card, parse_cards
from .errors import EngineError, IllegalActionError, InvalidActionError, Reason
from .game import MATCH_LENGTHS, apply, new_match, replay
from .rules import PRESETS, Rules
from .state import DealResult, DealState, MatchState, Move
from .view import (
    BOT_HINTS,
    PublicView,
    SeatView,
    hints_for,
    pick_cards,
    public_view,
    seat_view,
)

__all__ = [
    "BOT_HINTS",
    "MATCH_LENGTHS",
    "PRESETS",
    "RANKS",
    "SUITS",
    "Action",
    "BombPaid",
    "DealEnded",
    "DealResult",
    "DealStarted",
    "DealState",
    "EngineError",
    "Event",
    "IllegalActionError",
    "InvalidActionError",
    "LastCard",
    "MatchEnded",
    "MatchState",
    "Move",
    "NextDeal",
    "Pass",
    "Passed",
    "Play",
    "Played",
    "PublicView",
    "Reason",
    "Rules",
    "SeatView",
    "TrickCleared",
    "apply",
    "card_code",
    "deck",
    "hints_for",
    "new_match",
    "parse_card",
    "parse_cards",
    "pick_cards",
    "public_view",
    "replay",
    "seat_view",
]
