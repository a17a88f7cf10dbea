"""End of a deal and scoring (RULES.md "End of a deal and scoring", house rule E)."""

from __future__ import annotations

import random

import msgspec
import pytest

from server import engine
from server.engine import BombPaid, DealEnded, DealState, MatchEnded, Passed, TrickCleared

from .helpers import make_state, pass_, play
from .playout import random_action

SEAT1_16 = "4H 4D 4C 5H 5D 5C 6H 6D 6C 7H 7D 7C 8H 8D 8C 9H"
SEAT2_16 = "TH TD TC JH JD JC QH QD QC KH KD KC AH AD AC 9D"


def test_each_loser_pays_the_winner_a_point_per_card_left() -> None:
    state = make_state(["5S", "7S 8S 9S", "TS JS QS KS 3H"], played_any=[True, True, True])
    play(state, 0, "5S")
    result = state.deal.result
    assert result is not None
    assert result.winner == 0
    assert result.cards_left == (0, 3, 5)
    assert result.shut_out == (False, False, False)
    assert result.card_points == (8, -3, -5)
    assert result.bomb_points == (0, 0, 0)
    assert result.deal_totals == (8, -3, -5)
    assert result.match_totals == tuple(state.totals) == (8, -3, -5)


def test_losers_who_never_played_are_shut_out_and_pay_double() -> None:
    # Seat 0 leads the 2, nobody can beat it, and seat 0 goes out with the 3:
    # the others passed but never played a card, 16 cards each: 32 points each.
    state = make_state(["2S 3S", SEAT1_16, SEAT2_16])
    play(state, 0, "2S")
    pass_(state, 1)
    pass_(state, 2)
    events = play(state, 0, "3S")
    assert events[-2] == DealEnded(winner=0, totals=[64, -32, -32])
    result = state.deal.result
    assert result is not None
    assert result.cards_left == (0, 16, 16)
    assert result.shut_out == (False, True, True)
    assert result.card_points == (64, -32, -32)


def test_a_loser_who_played_once_is_not_shut_out() -> None:
    state = make_state(["3S", "4S " + SEAT1_16, SEAT2_16], played_any=[True, True, False])
    play(state, 0, "3S")
    result = state.deal.result
    assert result is not None
    assert result.shut_out == (False, False, True)
    assert result.card_points == (17 + 32, -17, -32)


def test_immediate_bombs_pay_when_played_even_if_beaten() -> None:
    state = make_state(
        ["5S 5H 5D 5C 3S", "8S 8H 8D 8C 4S", "9S 3H"], rules="classic", played_any=[True] * 3
    )
    events = play(state, 0, "5S 5H 5D 5C")
    assert BombPaid(seat=0, points=[20, -10, -10]) in events
    assert state.deal.bomb_points == [20, -10, -10]
    events = play(state, 1, "8S 8H 8D 8C")
    assert BombPaid(seat=1, points=[-10, 20, -10]) in events
    assert state.deal.bomb_points == [10, 10, -20]
    pass_(state, 2)
    events = pass_(state, 0)
    assert not any(isinstance(e, BombPaid) for e in events)
    play(state, 1, "4S")
    result = state.deal.result
    assert result is not None
    assert result.bomb_points == (10, 10, -20)
    assert result.card_points == (-1, 3, -2)
    assert result.deal_totals == (9, 13, -22)
    assert sum(result.deal_totals) == 0


def test_bomb_points_count_once_in_the_deal_and_match_totals_at_deal_and_match_end() -> None:
    # Deal 1 (classic: bombs pay when played): 5555 by seat 0, 8888 by seat 1, seat 1
    # goes out.  Bombs: seat 0 +20-10 = 10, seat 1 -10+20 = 10, seat 2 -20.  Cards
    # left: seat 0 one (3S), seat 2 two: card points (-1, 3, -2).  Deal totals
    # (9, 13, -22).
    state = make_state(
        ["5S 5H 5D 5C 3S", "8S 8H 8D 8C 4S", "9S 3H"], deals=2, played_any=[True] * 3
    )
    play(state, 0, "5S 5H 5D 5C")
    play(state, 1, "8S 8H 8D 8C")
    pass_(state, 2)
    pass_(state, 0)
    events = play(state, 1, "4S")
    assert DealEnded(winner=1, totals=[9, 13, -22]) in events
    first = state.deal.result
    assert first is not None
    assert (first.deal_totals, first.match_totals) == ((9, 13, -22), (9, 13, -22))
    assert state.totals == [9, 13, -22]
    # Deal 2: seat 0 goes out with the bomb 7777 (+20, -10, -10); cards left 2 and 3.
    # Deal totals (25, -12, -13); match totals (9 + 25, 13 - 12, -22 - 13) = (34, 1, -35).
    hands = [sorted(engine.parse_cards(h.split())) for h in ("7S 7H 7D 7C", "4S 5S", "9S 3H 6D")]
    state.deal = DealState(deal_no=2, hands=hands, turn=0, leader=0, played_any=[True] * 3)
    events = play(state, 0, "7S 7H 7D 7C")
    assert DealEnded(winner=0, totals=[25, -12, -13]) in events
    assert events[-1] == MatchEnded(winners=[0], totals=[34, 1, -35])
    second = state.deal.result
    assert second is not None
    assert (second.deal_totals, second.match_totals) == ((25, -12, -13), (34, 1, -35))
    assert state.totals == [34, 1, -35]
    assert engine.seat_view(state, 2).totals == [34, 1, -35]


def test_winning_bombs_beaten_by_a_higher_bomb_pay_nothing() -> None:
    state = make_state(
        ["5S 5H 5D 5C 3S", "8S 8H 8D 8C 4S", "9S 3H"], rules="sixteen", played_any=[True] * 3
    )
    events = play(state, 0, "5S 5H 5D 5C")
    assert not any(isinstance(e, BombPaid) for e in events)
    events = play(state, 1, "8S 8H 8D 8C")
    assert not any(isinstance(e, BombPaid) for e in events)
    assert state.deal.bomb_points == [0, 0, 0]
    assert pass_(state, 2) == [Passed(seat=2)]
    events = pass_(state, 0)
    # The trick ends on the 8888 unbeaten: only it pays.
    assert events[0] == Passed(seat=0)
    assert BombPaid(seat=1, points=[-10, 20, -10]) in events
    assert TrickCleared(leader=1) in events
    assert state.deal.bomb_points == [-10, 20, -10]
    play(state, 1, "4S")
    result = state.deal.result
    assert result is not None
    assert result.bomb_points == (-10, 20, -10)
    assert result.deal_totals == (-11, 23, -12)


def test_winning_bomb_pays_when_its_player_goes_out_with_it() -> None:
    state = make_state(["7S 7H 7D 7C", "4S 5S", "9S 3H 6D"], rules="sixteen", played_any=[True] * 3)
    events = play(state, 0, "7S 7H 7D 7C")
    assert BombPaid(seat=0, points=[20, -10, -10]) in events
    result = state.deal.result
    assert result is not None
    assert result.bomb_points == (20, -10, -10)
    assert result.card_points == (5, -2, -3)
    assert result.deal_totals == (25, -12, -13)


def test_winning_bomb_that_goes_out_over_a_table_pays() -> None:
    state = make_state(["KS 3C", "7S 7H 7D 7C", "9S 3H 6D"], rules="sixteen")
    play(state, 0, "KS")
    events = play(state, 1, "7S 7H 7D 7C")
    assert BombPaid(seat=1, points=[-10, 20, -10]) in events
    assert isinstance(events[-1], engine.MatchEnded)


@pytest.mark.parametrize("payment", ["immediate", "winning"])
def test_bomb_payment_is_its_own_option(payment: str) -> None:
    rules = msgspec.structs.replace(engine.PRESETS["classic"], bomb_payment=payment)
    state = make_state(["5S 5H 5D 5C 3S", "8S 4S", "9S 3H"], rules=rules)
    events = play(state, 0, "5S 5H 5D 5C")
    paid_now = any(isinstance(e, BombPaid) for e in events)
    assert paid_now is (payment == "immediate")
    pass_(state, 1)
    events = pass_(state, 2)
    paid_at_clear = any(isinstance(e, BombPaid) for e in events)
    assert paid_at_clear is (payment == "winning")
    assert state.deal.bomb_points == [20, -10, -10]


@pytest.mark.parametrize("preset", ["classic", "sixteen", "kawu"])
def test_deal_scores_sum_to_zero_and_totals_run_over_the_match(preset: str) -> None:
    rng = random.Random(f"scores/{preset}")
    bombs_seen = 0
    for seed in range(4):
        state = engine.new_match(engine.PRESETS[preset], seed, 10)
        while state.winners is None:
            engine.apply(state, random_action(state, rng))
            if state.deal.result is not None and state.deal.moves:
                bombs_seen += sum(m.kind == "bomb" for m in state.deal.moves)
        running = [0, 0, 0]
        for r in state.results:
            assert sum(r.deal_totals) == 0
            assert sum(r.bomb_points) == 0
            assert all(p % 10 == 0 for p in r.bomb_points)
            assert r.cards_left[r.winner] == 0
            assert all(r.cards_left[s] > 0 for s in range(3) if s != r.winner)
            for s in range(3):
                if s != r.winner:
                    pay = r.cards_left[s] * (2 if r.shut_out[s] else 1)
                    assert r.card_points[s] == -pay
                    assert r.cards_left[s] == 16 or not r.shut_out[s]
            assert r.card_points[r.winner] == -sum(
                r.card_points[s] for s in range(3) if s != r.winner
            )
            assert r.deal_totals == tuple(r.card_points[s] + r.bomb_points[s] for s in range(3))
            running = [running[s] + r.deal_totals[s] for s in range(3)]
            assert list(r.match_totals) == running
        assert state.totals == running
    assert bombs_seen > 0


def test_immediate_bomb_points_are_ten_from_each_other_seat_per_bomb() -> None:
    rng = random.Random("bombs")
    for seed in range(6):
        state = engine.new_match(engine.PRESETS["classic"], seed, 1)
        while state.winners is None:
            engine.apply(state, random_action(state, rng))
        expected = [0, 0, 0]
        for move in state.deal.moves:
            if move.kind == "bomb":
                for s in range(3):
                    expected[s] += 20 if s == move.seat else -10
        assert state.results[0].bomb_points == tuple(expected)
