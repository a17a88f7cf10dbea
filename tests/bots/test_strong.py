"""The strong bot's sampled deals: fixed by seed, deal and position, fresh at each turn."""

from __future__ import annotations

from server.bots import make_bot
from server.bots.strong import sampler_rng
from server.engine import PRESETS, apply, new_match, seat_view


def test_every_position_of_a_deal_draws_its_own_samples_and_the_same_one_the_same() -> None:
    state = new_match(PRESETS["classic"], 11, 5)
    bot = make_bot("normal", 11)
    draws: list[float] = []
    while state.deal.result is None:
        view = seat_view(state, state.deal.turn)
        first = sampler_rng(7, view).random()
        assert sampler_rng(7, view).random() == first
        draws.append(first)
        apply(state, bot.choose(view))
    assert len(draws) > 10
    assert len(set(draws)) == len(draws)


def test_the_samples_depend_on_the_bots_seed_and_a_replayed_position_draws_the_same() -> None:
    state = new_match(PRESETS["classic"], 11, 5)
    view = seat_view(state, state.deal.turn)
    assert sampler_rng(7, view).random() != sampler_rng(8, view).random()
    later = seat_view(new_match(PRESETS["classic"], 11, 5), state.deal.turn)
    assert sampler_rng(7, later).random() == sampler_rng(7, view).random()
