"""``apply`` agrees, action by action, with an independent referee over random matches."""

from __future__ import annotations

import random

import pytest

from server import engine
from server.engine import MatchState, NextDeal, Play

from .playout import random_action
from .referee import Referee

RULE_SETS = [
    *engine.PRESETS.values(),
    engine.Rules(preset="winning-split", bomb_payment="winning"),
    engine.Rules(preset="immediate-locked", split_bombs=False, later_leader="three_of_spades"),
]


def _compare(state: MatchState, referee: Referee) -> None:
    book = referee.book
    assert book is not None
    deal = state.deal
    hands = [[engine.card_code(c) for c in h] for h in deal.hands]
    assert hands == book.hands
    assert deal.bomb_points == book.bombs
    assert deal.played_any == book.played
    if book.winner is None:
        assert deal.turn == book.turn
        assert (list(deal.table.cards) if deal.table else None) == (
            sorted(book.table, key=engine.parse_card) if book.table else None
        )
        if deal.table is not None:
            assert book.table_reading is not None
            assert (deal.table.kind, deal.table.length, deal.table.top) == (
                book.table_reading.kind,
                book.table_reading.length,
                "3456789TJQKA2"[book.table_reading.top],
            )
    else:
        result = deal.result
        assert result is not None
        assert result.winner == book.winner
        assert list(result.cards_left) == book.cards_left
        assert list(result.shut_out) == book.shut_out
        assert list(result.bomb_points) == book.bombs
        assert list(result.card_points) == book.card_points
        assert list(result.deal_totals) == book.deal_totals
        assert list(result.match_totals) == state.totals == referee.totals
        assert state.winners == referee.winners


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: r.preset)
def test_apply_agrees_with_the_referee_over_random_matches(rules: engine.Rules) -> None:
    rng = random.Random(f"referee/{rules.preset}")
    bombs = 0
    for seed in range(3):
        state = engine.new_match(rules, seed, 5)
        referee = Referee(rules, 5)
        hands = [[engine.card_code(c) for c in h] for h in state.deal.hands]
        assert referee.start_deal(hands) == state.deal.turn
        while state.winners is None:
            action = random_action(state, rng)
            engine.apply(state, action)
            if isinstance(action, NextDeal):
                hands = [[engine.card_code(c) for c in h] for h in state.deal.hands]
                assert referee.start_deal(hands) == state.deal.turn
            elif isinstance(action, Play):
                referee.play(action.seat, action.cards)
                bombs += state.deal.moves[-1].kind == "bomb"
            else:
                referee.pass_(action.seat)
            _compare(state, referee)
    assert bombs > 0
