"""The bots' play-outs and the engine agree move by move.

A strong bot plays deals out on a ``RankDeal`` built from what its seat
observes (``Observation.sim``) and moved on by ``play``/``pass_`` alone; the
room moves the real game with ``engine.apply``.  Random deals go through
both side by side, for every preset, comparing table, turn, hand sizes, bomb
points, pending bomb and who has played after every move, and the scores at
the end.  Each seat's observation of the real game is compared too.
"""

from __future__ import annotations

import random

import pytest

from server.bots import make_bot
from server.bots.observe import observe
from server.engine import (
    PRESETS,
    MatchState,
    Pass,
    Play,
    apply,
    new_match,
    parse_cards,
    seat_view,
)
from server.engine.players import RankDeal, Reading, counts_of, move_reading
from tests.engine.playout import random_action

PRESET_NAMES = sorted(PRESETS)


def assert_same(state: MatchState, sim: RankDeal) -> None:
    deal = state.deal
    assert sim.hands == [counts_of(h) for h in deal.hands]
    assert sim.sizes == [len(h) for h in deal.hands]

    # A public move does not record that it was a short form (legal only as a
    # last play, so the deal is over); everything that is compared is.
    def shape(r: Reading | None) -> tuple[int, int, int] | None:
        return None if r is None else (r.kind, r.length, r.top)

    assert shape(sim.table) == shape(move_reading(deal.table) if deal.table else None)
    assert sim.passes == deal.passes
    assert sim.bomb == deal.bomb_points
    assert sim.pending == deal.pending_bomb
    assert sim.played_any == deal.played_any
    assert sim.needs_three == deal.needs_three_of_spades
    if deal.result is None:
        assert (sim.turn, sim.leader, sim.winner) == (deal.turn, deal.leader, -1)
        # The seat to move sees the same position the simulator holds.
        obs = observe(seat_view(state, deal.turn))
        assert obs.sizes == tuple(sim.sizes)
        assert obs.table == sim.table
        assert (obs.leader, obs.passes, obs.pending) == (sim.leader, sim.passes, sim.pending)
        assert obs.played_any == tuple(sim.played_any)
        assert obs.bomb == tuple(sim.bomb)
        assert obs.sim(sim.hands).legal() == sim.legal()
    else:
        result = deal.result
        assert sim.winner == result.winner
        assert sim.scores() == list(result.deal_totals)
        assert sim.card_points() == (list(result.shut_out), list(result.card_points))


def lockstep_deal(preset: str, seed: int) -> tuple[int, int]:
    """One deal through both; returns (bombs, shut-out seats) seen.

    Seats play at random (any legal action, passing when allowed) or as the
    normal bot, which finishes deals fast enough to shut players out.
    """
    rng = random.Random(seed)
    state = new_match(PRESETS[preset], seed, 1)
    players = [make_bot("normal", seed) if rng.random() < 0.6 else None for _ in range(3)]
    sim = observe(seat_view(state, state.deal.turn)).sim([counts_of(h) for h in state.deal.hands])
    assert_same(state, sim)
    while state.deal.result is None:
        bot = players[state.deal.turn]
        action = (
            random_action(state, rng)
            if bot is None
            else bot.choose(seat_view(state, state.deal.turn))
        )
        apply(state, action)
        if isinstance(action, Play):
            sim.play(counts_of(parse_cards(action.cards)))
        else:
            assert isinstance(action, Pass)
            sim.pass_()
        assert_same(state, sim)
    result = state.deal.result
    bombs = sum(m.kind == "bomb" for m in state.deal.moves)
    return bombs, sum(result.shut_out)


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_simulator_and_engine_agree_after_every_move_of_random_deals(preset: str) -> None:
    bombs = shut_outs = 0
    for seed in range(200):
        b, s = lockstep_deal(preset, seed)
        bombs += b
        shut_outs += s
    # The deals must reach what the scoring rules are about.
    print(preset, bombs, shut_outs)
    assert bombs > 0
    assert shut_outs > 0
