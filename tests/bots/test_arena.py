"""The duplicate-deal arena: what its strength figures rest on."""

from __future__ import annotations

import pytest

from server.bots.arena import play_deal
from server.engine import PRESETS


@pytest.mark.parametrize("deal", range(3))
def test_kawu_deals_play_exactly_as_classic_deals_with_the_clock_frozen(deal: int) -> None:
    # docs/bots.md reports kawu's strength by classic's figures: the presets differ
    # only in which ace is out of the deck, so each deal is the same in rank space
    # and every level, the strong search included, must choose the same plays.
    levels = ("strong", "normal", "easy")
    classic, kawu = (
        play_deal(PRESETS[name], 1, deal, levels, 0.02, work_rate=20_000, clock=False)
        for name in ("classic", "kawu")
    )
    assert kawu.points == classic.points
    assert kawu.wins == classic.wins
    assert kawu.shut_outs == classic.shut_outs
    assert {lv: len(t) for lv, t in kawu.times.items()} == {
        lv: len(t) for lv, t in classic.times.items()
    }


def test_a_frozen_clock_makes_the_strong_bots_deals_repeat_exactly() -> None:
    first, again = (
        play_deal(PRESETS["sixteen"], 2, 5, ("strong", "normal", "easy"), 0.02, 20_000, False)
        for _ in range(2)
    )
    assert first.points == again.points
