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
    """``seat`` plays ``cards`` (card codes)."""

    seat: int
    cards: list[str]


class Pass(msgspec.Struct, gc=False, frozen=True, tag="pass"):
    """``seat`` passes (allowed only when it holds no play that beats the table)."""

    seat: int


class NextDeal(msgspec.Struct, gc=False, frozen=True, omit_defaults=True, tag="next_deal"):
    """Deal the next hand of the match once the current deal is over.

    ``entropy``: the client seed each seat gave for this deal ("" for none), mixed
    into the shuffle (``cards.deal_key``); empty in logs from before client seeds.
    """

    entropy: tuple[str, ...] = ()


Action: TypeAlias = Play | Pass | NextDeal


class Played(msgspec.Struct, gc=False, frozen=True, tag="played"):
    """A play was made; ``kind`` and ``top`` are how it reads."""

    seat: int
    cards: list[str]
    kind: str
    top: str


class Passed(msgspec.Struct, gc=False, frozen=True, tag="passed"):
    """A seat passed."""

    seat: int


class TrickCleared(msgspec.Struct, gc=False, frozen=True, tag="trick_cleared"):
    """Two passes in a row cleared the table; ``leader`` leads anything."""

    leader: int


class LastCard(msgspec.Struct, gc=False, frozen=True, tag="last_card"):
    """``seat`` is down to one card (announced to everyone)."""

    seat: int


class BombPaid(msgspec.Struct, gc=False, frozen=True, tag="bomb_paid"):
    """A bomb paid: ``points`` per seat (+20 to ``seat``, -10 from each other)."""

    seat: int
    points: list[int]


class DealStarted(msgspec.Struct, gc=False, frozen=True, tag="deal_started"):
    """A new deal was dealt; ``leader`` plays first."""

    deal_no: int
    leader: int


class DealEnded(msgspec.Struct, gc=False, frozen=True, tag="deal_ended"):
    """``winner`` went out; ``totals`` are the deal's scores per seat."""

    winner: int
    totals: list[int]


class MatchEnded(msgspec.Struct, gc=False, frozen=True, tag="match_ended"):
    """The last deal ended; everyone tied for the most points won."""

    winners: list[int]
    totals: list[int]


Event: TypeAlias = (
    Played | Passed | TrickCleared | LastCard | BombPaid | DealStarted | DealEnded | MatchEnded
)
