"""What a seat, or someone watching, may know: the only projection of game state.

``public_view`` is what anyone around the table may see (counts, plays, scores,
last-card flags); ``seat_view`` adds one seat's own hand and aids on top of it.
Nothing else serialises game state for a client, a spectator or a bot.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .cards import RANKS, THREE_OF_SPADES, Card, card_code, card_codes, card_rank, parse_card
from .combos import Counts, counts_of, counts_string, counts_tuple
from .errors import Reason
from .game import legal_for
from .hints import MAX_HINTS, rank_hints
from .memo import memo
from .moves import sort_key
from .rules import Rules
from .state import SEATS, DealResult, MatchState, Move

__all__ = [
    "BOT_HINTS",
    "PublicView",
    "SeatView",
    "hints_for",
    "pick_cards",
    "public_view",
    "seat_view",
]

# A bot's view carries no hints: bots rank their own plays, and a failed bot falls
# back on the view's legal list (``server.bots.fallback_action``).
BOT_HINTS = 0


class _Public(msgspec.Struct, gc=False, frozen=True):
    """The fields every view shares: nothing here depends on whose eyes read it."""

    rules: Rules
    deal_no: int
    deals: int
    counts: list[int]
    last_card: list[bool]
    turn: int | None
    leader: int
    table: Move | None
    trick: list[Move]
    moves: list[Move]
    bomb_points: list[int]
    totals: list[int]
    result: DealResult | None
    results: list[DealResult]
    match_over: bool
    winners: list[int]


class PublicView(_Public, gc=False, frozen=True):
    """What a spectator sees: never a card that is still in someone's hand."""


class SeatView(_Public, gc=False, frozen=True):
    """One seat's view: the public part plus its own hand and the aids built from it.

    Not a ``PublicView`` (siblings, not parent and child), so a seat's view can never
    be passed where a spectator's is expected.
    """

    seat: int
    hand: list[str]
    legal: list[str]
    must_include: str | None
    can_pass: bool
    pass_reason: str | None
    # The first few legal plays as concrete cards, the most sensible first (none in
    # a bot's view: see ``seat_view``).
    hints: list[list[str]]
    counter: dict[str, int]
    # Once the deal is over (never before): the cards each seat still held, by seat.
    revealed: list[list[str]]


def public_view(state: MatchState) -> PublicView:
    """Everything anyone at or around the table may know: the spectators' projection."""
    return PublicView(*_public_values(state))


def _public_values(state: MatchState) -> tuple[Any, ...]:
    """The fields of ``_Public`` in their declared order, built afresh (a view shares no
    list with the state).

    Positional, because a view is built for every seat after every action and
    keyword arguments cost a dict and a name match per field;
    tests/engine/test_view.py reads every field back by name.
    """
    deal = state.deal
    counts = [len(h) for h in deal.hands]
    return (
        state.rules,
        deal.deal_no,
        state.deals,
        counts,
        [n == 1 for n in counts],
        deal.turn if deal.result is None else None,
        deal.leader,
        deal.table,
        list(deal.trick),
        list(deal.moves),
        list(deal.bomb_points),
        list(state.totals),
        # Results are immutable: shared, not copied.
        deal.result,
        list(state.results),
        state.winners is not None,
        list(state.winners or ()),
    )


# Read once: an enum member's ``.value`` is a Python-level property, and every view
# names one of these.
_DEAL_OVER = Reason.DEAL_OVER.value
_NOT_YOUR_TURN = Reason.NOT_YOUR_TURN.value
_LEADER_MAY_NOT_PASS = Reason.LEADER_MAY_NOT_PASS.value
_MUST_BEAT = Reason.MUST_BEAT.value
_THREE_OF_SPADES_CODE = card_code(THREE_OF_SPADES)


def seat_view(state: MatchState, seat: int, *, hints: int = MAX_HINTS) -> SeatView:
    """Everything ``seat`` may know, and nothing more: the public view plus its own hand.

    ``hints`` caps the ranked plays the view carries.  A person's screen gets
    ``MAX_HINTS``; a bot ranks its own plays, so its view carries ``BOT_HINTS``
    (none): ranking every legal play is the costliest part of a view.
    """
    if not 0 <= seat < SEATS:
        raise ValueError(f"seat {seat} does not exist")
    deal = state.deal
    my_turn = deal.result is None and deal.turn == seat
    legal = legal_for(state, seat) if my_turn else ()
    must_include = _THREE_OF_SPADES_CODE if my_turn and deal.needs_three_of_spades else None
    can_pass = False
    pass_reason: str | None
    if not my_turn:
        pass_reason = _DEAL_OVER if deal.result is not None else _NOT_YOUR_TURN
    elif deal.table is None:
        pass_reason = _LEADER_MAY_NOT_PASS
    elif legal:
        pass_reason = _MUST_BEAT
    else:
        can_pass, pass_reason = True, None
    # Built afresh per seat: views are handed to bots in-process and must share no list.
    # Positional, in SeatView's field order (see ``_public_values``).
    values = (
        *_public_values(state),
        seat,
        card_codes(deal.hands[seat]),
        list(_legal_strings(legal)),
        must_include,
        can_pass,
        pass_reason,
        _hints(state, seat, legal, hints) if hints else [],
        _counter(state, seat),
        _revealed(state),
    )
    return SeatView(*values)


def _revealed(state: MatchState) -> list[list[str]]:
    """Every seat's remaining cards once the deal is over; empty while it is played."""
    deal = state.deal
    if deal.result is None:
        return []
    return [card_codes(hand) for hand in deal.hands]


def hints_for(state: MatchState, seat: int, *, limit: int | None = None) -> list[list[str]]:
    """Every legal play of ``seat`` as concrete cards, the most sensible first.

    The view carries the first ``MAX_HINTS``; a hint request cycles through all.
    """
    return _hints(state, seat, legal_for(state, seat), limit)


def _hints(
    state: MatchState, seat: int, legal: tuple[Counts, ...], limit: int | None
) -> list[list[str]]:
    # ``legal``: ``legal_for(state, seat)``, which the seat view has already listed.
    if not legal:
        return []
    deal = state.deal
    hand = deal.hands[seat]
    by_rank = _by_rank(hand, THREE_OF_SPADES if deal.needs_three_of_spades else None)
    ranked = rank_hints(counts_of(hand), legal, leading=deal.table is None)
    return [_pick(by_rank, counts_tuple(p)) for p in ranked[:limit]]


@memo(1 << 14)
def _legal_strings(legal: tuple[Counts, ...]) -> tuple[str, ...]:
    # ``legal`` comes from the legal-play memo, so equal positions share it and this.
    return tuple(counts_string(p) for p in sorted(legal, key=sort_key))


def _by_rank(hand: list[Card], must_include: Card | None) -> list[list[Card]]:
    """The hand's cards per rank, lowest first, ``must_include`` first of its rank."""
    by_rank: list[list[Card]] = [[] for _ in RANKS]
    for card in sorted(hand, key=lambda c: (c != must_include, c)):
        by_rank[card_rank(card)].append(card)
    return by_rank


def _pick(by_rank: list[list[Card]], wanted: tuple[int, ...] | list[int]) -> list[str]:
    """Concrete cards for a play of ``wanted[r]`` cards of each rank r: the first ones
    of each rank in ``by_rank``, in order."""
    cards: list[Card] = []
    for rank, take in enumerate(wanted):
        if take:
            have = by_rank[rank]
            if len(have) < take:
                named = "".join(RANKS[r] * n for r, n in enumerate(wanted))
                raise ValueError(f"the hand holds too few {RANKS[rank]!r} for {named!r}")
            cards += have[:take]
    cards.sort()
    return card_codes(cards)


def _counter(state: MatchState, seat: int) -> dict[str, int]:
    """Per rank, what the two opponents still hold together.

    Public knowledge: the deck less the seat's own hand and every card played so
    far, since each card of the deck was dealt and is either in a hand or on the
    record.  That is the opponents' two hands added up, and adding those is a
    fraction of the cost of reading the record (this runs for every view);
    tests/engine/test_view.py pins the two equal for every preset and seat.
    """
    hands = state.deal.hands
    together = counts_of(hands[(seat + 1) % SEATS]) + counts_of(hands[(seat + 2) % SEATS])
    return dict(zip(RANKS, counts_tuple(together), strict=True))


def pick_cards(hand: list[str], ranks: str, must_include: str | None = None) -> list[str]:
    """Concrete cards from ``hand`` for a rank string, holding ``must_include`` if it can."""
    must = None if must_include is None else parse_card(must_include)
    wanted = [0] * len(RANKS)
    for ch in ranks:
        if ch not in RANKS:
            raise ValueError(f"the hand holds too few {ch!r} for {ranks!r}")
        wanted[RANKS.index(ch)] += 1
    return _pick(_by_rank([parse_card(c) for c in hand], must), wanted)
