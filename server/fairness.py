"""Provably fair shuffles: commit to every deal before it is played, reveal after the match.

Every deal is a shuffle of the deck by ``engine.deal_hands(removed_ace, seed,
deal_no)``, where ``seed`` is the match's seed.  The server chooses that seed
(from a per-table secret, ``rooms.log.match_seed``) and nobody sees it while the
match is played.  Instead each ``state`` frame carries, for every deal of the
match so far, a **commitment**:

    sha256("paodekuai-deal/v1/{salt}/{seed}/{deal_no}")   (hex)

published when the deal starts.  ``salt`` is 32 random hex digits per match,
so the commitment cannot be searched for the seed.  When the match ends the
frames also carry the seed and the salt.  Anyone can then check, with
``python -m server.verify``, that each commitment matches and that the hand
they were dealt is the one that seed deals: the server could not have chosen
the cards after seeing who sits where or how play went.

The hashing lives here rather than in the engine: commitments are about what
the table publishes, not about the rules, and the engine stays a pure
function of its seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from server.engine.cards import CardCode, card_code, deal_hands
from server.errors import ServerError

__all__ = [
    "CLIENT_SEED_PATTERN",
    "COMMITMENT_FORMAT",
    "ENTROPY_REFUSALS",
    "EntropyError",
    "EntropyReason",
    "Reveal",
    "Upcoming",
    "commitment",
    "dealt_hand",
    "match_salt",
]

COMMITMENT_FORMAT = "paodekuai-deal/v1/{salt}/{seed}/{deal_no}"


@dataclass(frozen=True, slots=True)
class Reveal:
    """What the end of a match discloses: its seed and salt."""

    seed: int
    salt: str


# A client seed: 128 bits as 32 lowercase hex digits, nothing else (server.protocol).
CLIENT_SEED_PATTERN = "^[0-9a-f]{32}$"


class EntropyReason(StrEnum):
    """Why a room refused a client seed (the wire codes of ``EntropyError``)."""

    # No deal awaits a seed now, or the commitment answered is not the upcoming deal's.
    ENTROPY_CLOSED = "entropy_closed"
    # This seat already gave another seed for the upcoming deal.
    ENTROPY_GIVEN = "entropy_given"
    # Anything but a seed while the table's first deal waits for its players' seeds
    # (nothing is dealt yet, so there is nothing to act on).
    NOT_DEALT = "not_dealt"


class EntropyError(ServerError[EntropyReason]):
    """A client seed the room refused; the deal will not mix it."""


# The error codes that tell a seat its seed was not taken (``server.verify`` accepts a
# deal without a seed the record shows refused with one of these).
ENTROPY_REFUSALS = frozenset(
    {EntropyReason.ENTROPY_CLOSED.value, EntropyReason.ENTROPY_GIVEN.value, "rate_limited"}
)


@dataclass(frozen=True, slots=True)
class Upcoming:
    """The deal about to be dealt: its commitment, published before any seat sends its
    client seed, and which seats' seeds the room holds for it."""

    match_no: int
    deal_no: int
    commitment: str
    received: tuple[bool, ...]


def match_salt(root: str | int, match_no: int) -> str:
    """The salt of a table's ``match_no``-th match, derived from its secret (or seed)."""
    return hashlib.sha256(f"paodekuai-salt/{root}/{match_no}".encode()).hexdigest()[:32]


def commitment(seed: int, salt: str, deal_no: int) -> str:
    """The published commitment to deal ``deal_no`` of the match dealt from ``seed``."""
    text = COMMITMENT_FORMAT.format(salt=salt, seed=seed, deal_no=deal_no)
    return hashlib.sha256(text.encode()).hexdigest()


def dealt_hand(
    removed_ace: CardCode, seed: int, deal_no: int, seat: int, entropy: Sequence[str] = ()
) -> list[str]:
    """The cards (codes, sorted) that ``seat`` was dealt in deal ``deal_no`` from ``seed``
    and the seats' client seeds ``entropy``."""
    return [card_code(card) for card in deal_hands(removed_ace, seed, deal_no, entropy)[seat]]
