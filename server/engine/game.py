"""State transitions: ``apply(state, action) -> events``, the only way a match changes.

``apply`` checks everything before it touches anything, so a refused action
leaves the state exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterable

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
from .cards import RANKS, THREE_OF_SPADES, Card, card_codes, deal_hands, parse_cards
from .combos import (
    BOMB,
    BOMB_CARDS,
    KIND_NAMES,
    SINGLE,
    TOP_BOMB_RANK,
    UNIT,
    Counts,
    Reading,
    best_reading,
    classify,
    count_at,
    counts_of,
    rank_mask,
)
from .errors import IllegalActionError, InvalidActionError, Reason
from .moves import legal_plays, locked_ranks
from .rankdeal import RankDeal, bomb_payment
from .rules import Rules
from .state import SEATS, DealResult, DealState, MatchState, Move

__all__ = [
    "MATCH_LENGTHS",
    "apply",
    "check_play",
    "legal_for",
    "move_reading",
    "new_match",
    "rank_deal",
    "replay",
    "table_reading",
]

MATCH_LENGTHS = (1, 5, 10)


def new_match(rules: Rules, seed: int, deals: int = 1, entropy: tuple[str, ...] = ()) -> MatchState:
    """The first deal of a new match of ``deals`` deals, dealt from ``seed`` and the seats'
    client seeds ``entropy`` (none: from ``seed`` alone)."""
    if deals not in MATCH_LENGTHS:
        raise ValueError(f"a match is 1, 5 or 10 deals, not {deals}")
    hands = deal_hands(rules.removed_ace, seed, 1, entropy)
    leader = _holder(hands, THREE_OF_SPADES)
    deal = DealState(
        deal_no=1,
        hands=hands,
        turn=leader,
        leader=leader,
        needs_three_of_spades=rules.first_play_three_spades,
    )
    return MatchState(rules=rules, seed=seed, deals=deals, deal=deal, entropy=[entropy])


def replay(
    rules: Rules, seed: int, deals: int, actions: Iterable[Action], entropy: tuple[str, ...] = ()
) -> MatchState:
    """The match that ``actions`` made, rebuilt from its rules, seed and first deal's entropy."""
    state = new_match(rules, seed, deals, entropy)
    for action in actions:
        apply(state, action)
    return state


def _holder(hands: list[list[Card]], card: Card) -> int:
    return next(seat for seat, hand in enumerate(hands) if card in hand)


_READINGS: dict[tuple[str, int, str], Reading] = {}


def move_reading(move: Move) -> Reading:
    """How a public play reads (the reading it was played as)."""
    key = (move.kind, move.length, move.top)
    reading = _READINGS.get(key)
    if reading is None:
        reading = Reading(KIND_NAMES.index(move.kind), move.length, RANKS.index(move.top))
        _READINGS[key] = reading
    return reading


def table_reading(deal: DealState) -> Reading | None:
    """The reading to beat, or None when the table is empty."""
    return None if deal.table is None else move_reading(deal.table)


def rank_deal(state: MatchState) -> RankDeal:
    """The current deal as a ``RankDeal``: what decides how play goes on from here."""
    deal = state.deal
    return RankDeal(
        [counts_of(h) for h in deal.hands],
        deal.turn,
        split=state.rules.split_bombs,
        pay_immediately=state.rules.bomb_payment == "immediate",
        leader=deal.leader,
        table=table_reading(deal),
        passes=deal.passes,
        played_any=deal.played_any,
        bomb=deal.bomb_points,
        pending=deal.pending_bomb,
        needs_three=deal.needs_three_of_spades,
    )


def _next_has_one(deal: DealState, seat: int) -> bool:
    return len(deal.hands[(seat + 1) % SEATS]) == 1


def legal_for(state: MatchState, seat: int) -> tuple[Counts, ...]:
    """The legal plays of ``seat`` as Counts (empty when it is not that seat's turn)."""
    deal = state.deal
    if deal.result is not None or deal.turn != seat:
        return ()
    # Only the seat's own hand and the table matter: no whole ``RankDeal`` to build.
    return legal_plays(
        counts_of(deal.hands[seat]),
        table_reading(deal),
        _next_has_one(deal, seat),
        deal.needs_three_of_spades,
        state.rules.split_bombs,
    )


def apply(state: MatchState, action: Action) -> list[Event]:
    """Check ``action`` and, if it is allowed, make it: the only way a match changes.

    Raises an ``EngineError`` (and changes nothing) when the action is refused.
    """
    if isinstance(action, Play):
        events = _play(state, action)
    elif isinstance(action, Pass):
        events = _pass(state, action)
    elif isinstance(action, NextDeal):
        events = _next_deal(state, action.entropy)
    else:
        raise InvalidActionError(Reason.INVALID_POSITION, f"unknown action {action!r}")
    # The log must not share the caller's card list: it is what replays the match.
    state.log.append(Play(action.seat, list(action.cards)) if isinstance(action, Play) else action)
    return events


def _check_turn(state: MatchState, seat: int) -> DealState:
    if not isinstance(seat, int) or not 0 <= seat < SEATS:
        raise InvalidActionError(Reason.INVALID_SEAT, f"seat {seat!r} does not exist")
    deal = state.deal
    if deal.result is not None:
        raise InvalidActionError(Reason.DEAL_OVER, "this deal is over")
    if deal.turn != seat:
        raise IllegalActionError(Reason.NOT_YOUR_TURN, f"it is seat {deal.turn}'s turn")
    return deal


def check_play(state: MatchState, seat: int, codes: list[str]) -> tuple[list[Card], Counts]:
    """Why ``seat`` may not play ``codes`` now (raises), or the cards and their rank counts."""
    deal = _check_turn(state, seat)
    cards = parse_cards(codes)
    if not cards:
        raise IllegalActionError(Reason.NOT_A_COMBINATION, "a play needs at least one card")
    hand = deal.hands[seat]
    if not set(cards).issubset(hand):
        raise IllegalActionError(Reason.CARDS_NOT_IN_HAND, "those cards are not all in your hand")
    play = counts_of(cards)
    if play in legal_for(state, seat):
        if deal.needs_three_of_spades and THREE_OF_SPADES not in cards:
            raise IllegalActionError(
                Reason.MUST_INCLUDE_THREE_OF_SPADES, "the first play must include the 3 of spades"
            )
        return cards, play
    final = len(cards) == len(hand)
    raise _why_illegal(state, deal, seat, cards, play, counts_of(hand), final, table_reading(deal))


def _why_illegal(
    state: MatchState,
    deal: DealState,
    seat: int,
    cards: list[Card],
    play: Counts,
    hand: Counts,
    final: bool,
    table: Reading | None,
) -> IllegalActionError:
    readings = classify(play)
    if not readings:
        return IllegalActionError(Reason.NOT_A_COMBINATION, "those cards are not a combination")
    usable = [r for r in readings if final or not r.short]
    if not usable:
        return IllegalActionError(
            Reason.SHORT_FORM_ONLY_LAST,
            "a trio with fewer than two extras, or an airplane short of wings, "
            "is allowed only as your last cards",
        )
    locked = locked_ranks(hand, state.rules.split_bombs)
    touches_locked = rank_mask(play) & rank_mask(locked) != 0
    if touches_locked and not (play in _bombs(locked) and readings[0].kind == BOMB):
        return IllegalActionError(
            Reason.MAY_NOT_SPLIT_BOMB, "a four of a kind may only be played whole, as a bomb"
        )
    if deal.needs_three_of_spades and THREE_OF_SPADES not in cards:
        return IllegalActionError(
            Reason.MUST_INCLUDE_THREE_OF_SPADES, "the first play must include the 3 of spades"
        )
    if table is not None and best_reading(play, final=final, table=table) is None:
        return IllegalActionError(Reason.DOES_NOT_BEAT, "that does not beat the play on the table")
    if usable[0].kind == SINGLE and _next_has_one(deal, seat):
        return IllegalActionError(
            Reason.MUST_PLAY_HIGHEST_SINGLE,
            "the next player has one card left: a single must be your highest",
        )
    raise AssertionError(f"play {cards} refused without a reason")  # pragma: no cover


def _bombs(locked: Counts) -> set[Counts]:
    return {
        BOMB_CARDS * UNIT[r] for r in range(TOP_BOMB_RANK + 1) if count_at(locked, r) == BOMB_CARDS
    }


def _take_over(deal: DealState, core: RankDeal) -> None:
    """Copy what the rank-space deal decided back into the match state."""
    deal.turn = core.turn
    deal.leader = core.leader
    deal.passes = core.passes
    deal.played_any = core.played_any
    deal.bomb_points = core.bomb
    deal.pending_bomb = core.pending
    deal.needs_three_of_spades = core.needs_three


def _play(state: MatchState, action: Play) -> list[Event]:
    seat = action.seat
    cards, play = check_play(state, seat, action.cards)
    deal = state.deal
    core = rank_deal(state)
    reading = core.play(play)
    hand = deal.hands[seat]
    for c in cards:
        hand.remove(c)
    codes = card_codes(sorted(cards))
    kind = KIND_NAMES[reading.kind]
    move = Move(
        seat=seat, cards=tuple(codes), kind=kind, top=RANKS[reading.top], length=reading.length
    )
    events: list[Event] = [Played(seat=seat, cards=list(codes), kind=kind, top=move.top)]
    deal.table = move
    deal.trick.append(move)
    deal.moves.append(move)
    _take_over(deal, core)
    if core.paid >= 0:
        events.append(BombPaid(seat=core.paid, points=bomb_payment(core.paid)))
    if len(hand) == 1:
        events.append(LastCard(seat=seat))
    if core.winner >= 0:
        events.extend(_end_deal(state, core))
    return events


def _pass(state: MatchState, action: Pass) -> list[Event]:
    seat = action.seat
    deal = _check_turn(state, seat)
    if deal.table is None:
        raise IllegalActionError(Reason.LEADER_MAY_NOT_PASS, "the leader must play")
    core = rank_deal(state)
    if core.legal():
        raise IllegalActionError(Reason.MUST_BEAT, "you hold a play that beats the table")
    cleared = core.pass_()
    move = Move(seat=seat, cards=(), kind="pass")
    deal.trick.append(move)
    deal.moves.append(move)
    _take_over(deal, core)
    events: list[Event] = [Passed(seat=seat)]
    if core.paid >= 0:
        events.append(BombPaid(seat=core.paid, points=bomb_payment(core.paid)))
    if cleared:
        deal.table = None
        deal.trick = []
        events.append(TrickCleared(leader=deal.leader))
    return events


def _end_deal(state: MatchState, core: RankDeal) -> list[Event]:
    deal = state.deal
    winner = core.winner
    cards_left = list(core.sizes)
    shut_out, card_points = core.card_points()
    deal_totals = core.scores()
    for s in range(SEATS):
        state.totals[s] += deal_totals[s]
    result = DealResult(
        deal_no=deal.deal_no,
        winner=winner,
        cards_left=tuple(cards_left),
        shut_out=tuple(shut_out),
        bomb_points=tuple(deal.bomb_points),
        card_points=tuple(card_points),
        deal_totals=tuple(deal_totals),
        match_totals=tuple(state.totals),
    )
    deal.result = result
    deal.turn = -1
    state.results.append(result)
    events: list[Event] = [DealEnded(winner=winner, totals=list(deal_totals))]
    if deal.deal_no == state.deals:
        best = max(state.totals)
        state.winners = [s for s in range(SEATS) if state.totals[s] == best]
        events.append(MatchEnded(winners=list(state.winners), totals=list(state.totals)))
    return events


def _next_deal(state: MatchState, entropy: tuple[str, ...]) -> list[Event]:
    prev = state.deal
    if prev.result is None:
        raise InvalidActionError(Reason.DEAL_IN_PROGRESS, "the current deal is not over yet")
    if state.winners is not None:
        raise InvalidActionError(Reason.MATCH_OVER, "the match is over; start a new one")
    deal_no = prev.deal_no + 1
    hands = deal_hands(state.rules.removed_ace, state.seed, deal_no, entropy)
    state.entropy.append(entropy)
    if state.rules.later_leader == "winner":
        leader = prev.result.winner
    else:
        leader = _holder(hands, THREE_OF_SPADES)
    state.deal = DealState(deal_no=deal_no, hands=hands, turn=leader, leader=leader)
    return [DealStarted(deal_no=deal_no, leader=leader)]
