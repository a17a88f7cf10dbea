"""What a seat can do, and what the engine reports back: plain msgspec data."""

from __future__ import annotations

from typing import TypeAlias

import msgspec

__all__ = [
    "Action",
    "BombPaid",
    "DealEnded",
    "DealStarted",
    "Event",
    "LastCard",
    "MatchEnded",
    "NextDeal",
    "Pass",
    "Passed",
    "Play",
    "Played",
    "TrickCleared",
]


class Play(msgspec.Struct, gc=False, frozen=True, tag="play"):
    seat: int
    cards: list[str]


class Pass(msgspec.Struct, gc=False, frozen=True, tag="pass"):
    seat: int


class NextDeal(msgspec.Struct, gc=False, frozen=True, tag="next_deal"):
    """Deal the next hand of the match once the current deal is over."""


Action: TypeAlias = Play | Pass | NextDeal


class Played(msgspec.Struct, gc=False, frozen=True, tag="played"):
    seat: int
    cards: list[str]
    kind: str
    top: str


class Passed(msgspec.Struct, gc=False, frozen=True, tag="passed"):
    seat: int


class TrickCleared(msgspec.Struct, gc=False, frozen=True, tag="trick_cleared"):
    leader: int


class LastCard(msgspec.Struct, gc=False, frozen=True, tag="last_card"):
    seat: int


class BombPaid(msgspec.Struct, gc=False, frozen=True, tag="bomb_paid"):
    seat: int
    points: list[int]


class DealStarted(msgspec.Struct, gc=False, frozen=True, tag="deal_started"):
    deal_no: int
    leader: int


class DealEnded(msgspec.Struct, gc=False, frozen=True, tag="deal_ended"):
    winner: int
    totals: list[int]


class MatchEnded(msgspec.Struct, gc=False, frozen=True, tag="match_ended"):
    winners: list[int]
    totals: list[int]


Event: TypeAlias = (
    Played | Passed | TrickCleared | LastCard | BombPaid | DealStarted | DealEnded | MatchEnded
)
