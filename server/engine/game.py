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
from .cards import RANKS, THREE_OF_SPADES, Card, card_code, deal_hands, parse_cards
from .combos import (
    BOMB,
    KIND_NAMES,
    SINGLE,
    Counts,
    Reading,
    best_reading,
    classify,
    count_at,
    counts_of,
)
from .errors import IllegalActionError, InvalidActionError, Reason
from .moves import legal_plays, locked_ranks
from .rules import Rules
from .state import SEATS, DealResult, DealState, MatchState, Move

__all__ = [
    "BOMB_POINTS",
    "MATCH_LENGTHS",
    "apply",
    "check_play",
    "legal_for",
    "new_match",
    "replay",
    "table_reading",
]

MATCH_LENGTHS = (1, 5, 10)
BOMB_POINTS = 10


def new_match(rules: Rules, seed: int, deals: int = 1) -> MatchState:
    if deals not in MATCH_LENGTHS:
        raise ValueError(f"a match is 1, 5 or 10 deals, not {deals}")
    hands = deal_hands(rules.removed_ace, seed, 1)
    leader = _holder(hands, THREE_OF_SPADES)
    deal = DealState(
        deal_no=1,
        hands=hands,
        turn=leader,
        leader=leader,
        needs_three_of_spades=rules.first_play_three_spades,
    )
    return MatchState(rules=rules, seed=seed, deals=deals, deal=deal)


def replay(rules: Rules, seed: int, deals: int, actions: Iterable[Action]) -> MatchState:
    state = new_match(rules, seed, deals)
    for action in actions:
        apply(state, action)
    return state


def _holder(hands: list[list[Card]], card: Card) -> int:
    return next(seat for seat, hand in enumerate(hands) if card in hand)


_READINGS: dict[tuple[str, int, str], Reading] = {}


def table_reading(deal: DealState) -> Reading | None:
    t = deal.table
    if t is None:
        return None
    key = (t.kind, t.length, t.top)
    reading = _READINGS.get(key)
    if reading is None:
        reading = _READINGS[key] = Reading(KIND_NAMES.index(t.kind), t.length, RANKS.index(t.top))
    return reading


def _next_has_one(deal: DealState, seat: int) -> bool:
    return len(deal.hands[(seat + 1) % SEATS]) == 1


def legal_for(state: MatchState, seat: int) -> tuple[Counts, ...]:
    """The legal plays of ``seat`` as Counts (empty when it is not that seat's turn)."""
    deal = state.deal
    if deal.result is not None or deal.turn != seat:
        return ()
    return _legal(state, deal, seat, counts_of(deal.hands[seat]))


def _legal(state: MatchState, deal: DealState, seat: int, hand: Counts) -> tuple[Counts, ...]:
    return legal_plays(
        hand,
        table_reading(deal),
        _next_has_one(deal, seat),
        deal.needs_three_of_spades,
        state.rules.split_bombs,
    )


def apply(state: MatchState, action: Action) -> list[Event]:
    if isinstance(action, Play):
        events = _play(state, action)
    elif isinstance(action, Pass):
        events = _pass(state, action)
    elif isinstance(action, NextDeal):
        events = _next_deal(state)
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


def check_play(state: MatchState, seat: int, codes: list[str]) -> tuple[list[Card], Reading]:
    """Why ``seat`` may not play ``codes`` now (raises), or the cards and their reading."""
    deal = _check_turn(state, seat)
    cards = parse_cards(codes)
    if not cards:
        raise IllegalActionError(Reason.NOT_A_COMBINATION, "a play needs at least one card")
    hand = deal.hands[seat]
    if not set(cards).issubset(hand):
        raise IllegalActionError(Reason.CARDS_NOT_IN_HAND, "those cards are not all in your hand")
    play = counts_of(cards)
    hand_counts = counts_of(hand)
    final = len(cards) == len(hand)
    table = table_reading(deal)
    if play in _legal(state, deal, seat, hand_counts):
        if deal.needs_three_of_spades and THREE_OF_SPADES not in cards:
            raise IllegalActionError(
                Reason.MUST_INCLUDE_THREE_OF_SPADES, "the first play must include the 3 of spades"
            )
        reading = best_reading(play, final=final, table=table)
        assert reading is not None
        return cards, reading
    raise _why_illegal(state, deal, seat, cards, play, hand_counts, final, table)


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
    touches_locked = any(count_at(play, r) and count_at(locked, r) for r in range(11))
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
    return {4 << (4 * r) for r in range(11) if count_at(locked, r) == 4}


def _pay_bomb(deal: DealState, seat: int) -> BombPaid:
    points = [-BOMB_POINTS] * SEATS
    points[seat] = BOMB_POINTS * (SEATS - 1)
    for s in range(SEATS):
        deal.bomb_points[s] += points[s]
    return BombPaid(seat=seat, points=points)


def _play(state: MatchState, action: Play) -> list[Event]:
    seat = action.seat
    cards, reading = check_play(state, seat, action.cards)
    deal = state.deal
    hand = deal.hands[seat]
    for c in cards:
        hand.remove(c)
    codes = [card_code(c) for c in sorted(cards)]
    kind = KIND_NAMES[reading.kind]
    move = Move(
        seat=seat, cards=tuple(codes), kind=kind, top=RANKS[reading.top], length=reading.length
    )
    events: list[Event] = [Played(seat=seat, cards=list(codes), kind=kind, top=move.top)]
    deal.table = move
    deal.leader = seat
    deal.passes = 0
    deal.trick.append(move)
    deal.moves.append(move)
    deal.played_any[seat] = True
    deal.needs_three_of_spades = False
    if reading.kind == BOMB:
        if state.rules.bomb_payment == "immediate":
            events.append(_pay_bomb(deal, seat))
        else:
            # A higher bomb takes over; the beaten one never pays.
            deal.pending_bomb = seat
    elif deal.pending_bomb >= 0:  # pragma: no cover - only a bomb beats a bomb
        deal.pending_bomb = -1
    if len(hand) == 1:
        events.append(LastCard(seat=seat))
    if not hand:
        if deal.pending_bomb == seat:
            events.append(_pay_bomb(deal, seat))
            deal.pending_bomb = -1
        events.extend(_end_deal(state, seat))
    else:
        deal.turn = (seat + 1) % SEATS
    return events


def _pass(state: MatchState, action: Pass) -> list[Event]:
    seat = action.seat
    deal = _check_turn(state, seat)
    if deal.table is None:
        raise IllegalActionError(Reason.LEADER_MAY_NOT_PASS, "the leader must play")
    if legal_for(state, seat):
        raise IllegalActionError(Reason.MUST_BEAT, "you hold a play that beats the table")
    move = Move(seat=seat, cards=(), kind="pass")
    deal.trick.append(move)
    deal.moves.append(move)
    deal.passes += 1
    events: list[Event] = [Passed(seat=seat)]
    if deal.passes == SEATS - 1:
        if deal.pending_bomb >= 0:
            events.append(_pay_bomb(deal, deal.pending_bomb))
            deal.pending_bomb = -1
        deal.table = None
        deal.trick = []
        deal.passes = 0
        deal.turn = deal.leader
        events.append(TrickCleared(leader=deal.leader))
    else:
        deal.turn = (seat + 1) % SEATS
    return events


def _end_deal(state: MatchState, winner: int) -> list[Event]:
    deal = state.deal
    cards_left = [len(h) for h in deal.hands]
    shut_out = [s != winner and not deal.played_any[s] for s in range(SEATS)]
    card_points = [0] * SEATS
    for s in range(SEATS):
        if s != winner:
            pay = cards_left[s] * (2 if shut_out[s] else 1)
            card_points[s] -= pay
            card_points[winner] += pay
    deal_totals = [card_points[s] + deal.bomb_points[s] for s in range(SEATS)]
    for s in range(SEATS):
        state.totals[s] += deal_totals[s]
    result = DealResult(
        deal_no=deal.deal_no,
        winner=winner,
        cards_left=cards_left,
        shut_out=shut_out,
        bomb_points=list(deal.bomb_points),
        card_points=card_points,
        deal_totals=deal_totals,
        match_totals=list(state.totals),
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


def _next_deal(state: MatchState) -> list[Event]:
    prev = state.deal
    if prev.result is None:
        raise InvalidActionError(Reason.DEAL_IN_PROGRESS, "the current deal is not over yet")
    if state.winners is not None:
        raise InvalidActionError(Reason.MATCH_OVER, "the match is over; start a new one")
    deal_no = prev.deal_no + 1
    hands = deal_hands(state.rules.removed_ace, state.seed, deal_no)
    if state.rules.later_leader == "winner":
        leader = prev.result.winner
    else:
        leader = _holder(hands, THREE_OF_SPADES)
    state.deal = DealState(deal_no=deal_no, hands=hands, turn=leader, leader=leader)
    return [DealStarted(deal_no=deal_no, leader=leader)]
