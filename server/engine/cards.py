"""Cards, codes and the deck.

A card is an int ``rank * 4 + suit``: rank 0..12 is ``3456789TJQKA2`` (low to
high), suit 0..3 is ``SHDC``.  On the wire and in logs a card is its two-letter
code (``"3S"``, ``"TH"``, ``"2S"``), which reads the same to people and tools.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from typing import TypeAlias

from .errors import InvalidActionError, Reason

__all__ = [
    "ACE",
    "HAND_SIZE",
    "KING",
    "RANKS",
    "RANK_COUNT",
    "SUITS",
    "SUIT_COUNT",
    "THREE_OF_SPADES",
    "TWO",
    "Card",
    "CardCode",
    "Rank",
    "card_code",
    "card_codes",
    "card_rank",
    "deal_hands",
    "deal_key",
    "deck",
    "make_card",
    "parse_card",
    "parse_cards",
]

Card: TypeAlias = int
Rank: TypeAlias = int
CardCode: TypeAlias = str

RANKS = "3456789TJQKA2"
SUITS = "SHDC"
HAND_SIZE = 16

# Ranks by name (0 is the 3).  A rank holds one card per suit, so four of a kind
# is a whole rank; the deck keeps three aces and one 2 (see ``deck``).
RANK_COUNT = len(RANKS)
SUIT_COUNT = len(SUITS)
KING = RANKS.index("K")
ACE = RANKS.index("A")
TWO = RANKS.index("2")

_CODE_TO_CARD: dict[str, Card] = {
    r + s: ri * SUIT_COUNT + si for ri, r in enumerate(RANKS) for si, s in enumerate(SUITS)
}
_CARD_TO_CODE: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)


def make_card(rank: Rank, suit: int) -> Card:
    """The card of ``rank`` (0 = 3 .. 12 = 2) and ``suit`` (0..3 = SHDC)."""
    return rank * SUIT_COUNT + suit


THREE_OF_SPADES: Card = make_card(0, 0)


def card_rank(card: Card) -> Rank:
    """A card's rank, 0 (the 3) to 12 (the 2)."""
    return card // SUIT_COUNT


def card_code(card: Card) -> CardCode:
    """A card's two-letter code, e.g. ``"3S"``."""
    return _CARD_TO_CODE[card]


def card_codes(cards: Iterable[Card]) -> list[CardCode]:
    """The codes of ``cards``, in their order (a fresh list)."""
    return list(map(_CARD_TO_CODE.__getitem__, cards))


def parse_card(code: str) -> Card:
    """Parse a code such as ``"3S"`` or ``"th"``; ``"10H"`` is accepted for ``"TH"``."""
    # Our own client and the bots send exact codes: a lookup, before any normalising.
    card = _CODE_TO_CARD.get(code) if isinstance(code, str) else None
    if card is not None:
        return card
    key = code.strip().upper() if isinstance(code, str) else ""
    if key.startswith("10"):
        key = "T" + key[2:]
    card = _CODE_TO_CARD.get(key)
    if card is None:
        raise InvalidActionError(Reason.INVALID_CARD, f"{code!r} is not a card code")
    return card


def parse_cards(codes: Iterable[str]) -> list[Card]:
    """Parse codes into cards, refusing duplicates."""
    cards = [parse_card(c) for c in codes]
    if len(set(cards)) != len(cards):
        raise InvalidActionError(Reason.DUPLICATE_CARD, "the same card is named twice")
    return cards


def deck(removed_ace: CardCode) -> list[Card]:
    """The 48-card deck: no 2 but the 2 of spades, and one ace removed."""
    gone = {make_card(TWO, 1), make_card(TWO, 2), make_card(TWO, 3), parse_card(removed_ace)}
    return [c for c in range(52) if c not in gone]


def deal_key(seed: int, deal_no: int, entropy: Sequence[str] = ()) -> str:
    """The string the deck of deal ``deal_no`` is shuffled from.

    Without player entropy (none given, or a log written before there was any) it is
    ``paodekuai/{seed}/{deal_no}``.  With it (one client seed per seat, "" for a bot
    or a seat that gave none) the server's seed is mixed with every seat's:
    ``paodekuai/{sha256("paodekuai-mix/v1/{seed}/{deal_no}/{e0}/{e1}/{e2}")}/{deal_no}``,
    so no side alone chooses the cards (docs/protocol.md, "Provably fair shuffles").
    """
    if not any(entropy):
        return f"paodekuai/{seed}/{deal_no}"
    mixed = hashlib.sha256(
        f"paodekuai-mix/v1/{seed}/{deal_no}/{'/'.join(entropy)}".encode()
    ).hexdigest()
    return f"paodekuai/{mixed}/{deal_no}"


def deal_hands(
    removed_ace: CardCode, seed: int, deal_no: int, entropy: Sequence[str] = ()
) -> list[list[Card]]:
    """Deal the whole deck, 16 each, from ``seed``, the deal number and the seats' entropy."""
    cards = deck(removed_ace)
    # A string seed hashes the same way on every run and platform.
    random.Random(deal_key(seed, deal_no, entropy)).shuffle(cards)
    return [sorted(cards[i * HAND_SIZE : (i + 1) * HAND_SIZE]) for i in range(3)]
