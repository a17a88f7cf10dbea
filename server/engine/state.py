"""The game state: plain msgspec data, mutated only by ``game.apply``.

The seed lives in the state, so a match replays exactly from its seed, rules
and action log.  Hands hold card ints; everything else that a seat may see is
kept in public form (card codes) so projection is cheap.
"""

from __future__ import annotations

import msgspec

from .actions import Action
from .rules import Rules

# Engine data is acyclic by construction (lists of codes and ints, structs of
# those), so its structs stay out of the cyclic collector (gc=False): with
# hundreds of live tables, scanning them made every full collection pause the
# server for tens of milliseconds.

__all__ = ["SEATS", "DealResult", "DealState", "MatchState", "Move"]

SEATS = 3


class Move(msgspec.Struct, gc=False, frozen=True):
    """One public move: a play (``cards`` non-empty) or a pass (``kind == "pass"``).

    Immutable through and through (a tuple of codes), so every seat view can share
    the deal's moves without a bot being able to edit the game through its view.
    """

    seat: int
    cards: tuple[str, ...]
    kind: str
    top: str = ""
    length: int = 0


class DealResult(msgspec.Struct, gc=False, frozen=True):
    """How a deal ended: per seat cards left, shut-out, bomb/card/deal points, match totals.

    Immutable through and through (tuples), like ``Move``: a finished deal never
    changes, so every view shares the match's results instead of copying each.
    """

    deal_no: int
    winner: int
    cards_left: tuple[int, ...]
    shut_out: tuple[bool, ...]
    bomb_points: tuple[int, ...]
    card_points: tuple[int, ...]
    deal_totals: tuple[int, ...]
    match_totals: tuple[int, ...]


class DealState(msgspec.Struct, gc=False):
    """The deal in progress: hands (card ints), whose turn, the table and trick, bombs, result."""

    deal_no: int
    hands: list[list[int]]
    turn: int
    # Seat whose play is on the table, or who leads an empty table.
    leader: int
    table: Move | None = None
    passes: int = 0
    trick: list[Move] = msgspec.field(default_factory=list)
    moves: list[Move] = msgspec.field(default_factory=list)
    played_any: list[bool] = msgspec.field(default_factory=lambda: [False] * SEATS)
    bomb_points: list[int] = msgspec.field(default_factory=lambda: [0] * SEATS)
    # Under "winning" bomb payment: the seat whose bomb is on the table, else -1.
    pending_bomb: int = -1
    # The next play must contain the 3 of spades (rule B, first play of the match).
    needs_three_of_spades: bool = False
    result: DealResult | None = None


class MatchState(msgspec.Struct, gc=False):
    """A whole match: rules, seed, the current deal, totals, past results and the action log."""

    rules: Rules
    seed: int
    deals: int
    deal: DealState
    totals: list[int] = msgspec.field(default_factory=lambda: [0] * SEATS)
    results: list[DealResult] = msgspec.field(default_factory=list)
    log: list[Action] = msgspec.field(default_factory=list)
    # Set when the last deal of the match ends: every seat tied for the most.
    winners: list[int] | None = None
    # The seats' client seeds mixed into each deal so far (``cards.deal_key``), one per deal.
    entropy: list[tuple[str, ...]] = msgspec.field(default_factory=list)
