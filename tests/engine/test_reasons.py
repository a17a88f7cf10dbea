"""Every refusal carries its own reason code and leaves the state exactly as it was."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pytest

from server import engine
from server.engine import Action, MatchState, NextDeal, Pass, Play, Reason

from .helpers import make_state, pass_, play, snapshot

Case = Callable[[], tuple[MatchState, Action]]

MALFORMED = {
    Reason.INVALID_CARD,
    Reason.DUPLICATE_CARD,
    Reason.INVALID_SEAT,
    Reason.DEAL_OVER,
    Reason.DEAL_IN_PROGRESS,
    Reason.MATCH_OVER,
    Reason.INVALID_POSITION,
}


def _lead() -> MatchState:
    return make_state(["3S 5S 5H 8D 9C", "6S 7H", "JS QH"], played_any=[True] * 3)


def _after(cards: str, hands: list[str], rules: str = "classic") -> MatchState:
    """Seat 0 has played ``cards``; seat 1 is to follow."""
    state = make_state([cards + " 3C", *hands], rules=rules, played_any=[True] * 3)
    play(state, 0, cards)
    return state


def _deal_over() -> MatchState:
    state = make_state(["5S", "7S 8S", "TS JS"], deals=5)
    play(state, 0, "5S")
    return state


def _match_over() -> MatchState:
    state = make_state(["5S", "7S 8S", "TS JS"], deals=1)
    play(state, 0, "5S")
    return state


CASES: dict[str, tuple[Reason, Case]] = {
    "unknown card code": (Reason.INVALID_CARD, lambda: (_lead(), Play(seat=0, cards=["5X"]))),
    "card code not a string": (Reason.INVALID_CARD, lambda: (_lead(), Play(0, [5]))),  # type: ignore[list-item]
    "card named twice": (
        Reason.DUPLICATE_CARD,
        lambda: (_lead(), Play(seat=0, cards=["5S", "5S"])),
    ),
    "seat 3 plays": (Reason.INVALID_SEAT, lambda: (_lead(), Play(seat=3, cards=["3S"]))),
    "seat -1 passes": (Reason.INVALID_SEAT, lambda: (_lead(), Pass(seat=-1))),
    "play after the deal": (Reason.DEAL_OVER, lambda: (_deal_over(), Play(seat=1, cards=["7S"]))),
    "pass after the deal": (Reason.DEAL_OVER, lambda: (_deal_over(), Pass(seat=1))),
    "next deal too soon": (Reason.DEAL_IN_PROGRESS, lambda: (_lead(), NextDeal())),
    "next deal after the match": (Reason.MATCH_OVER, lambda: (_match_over(), NextDeal())),
    "not an action": (Reason.INVALID_POSITION, lambda: (_lead(), cast(Action, "undo"))),
    "out of turn play": (Reason.NOT_YOUR_TURN, lambda: (_lead(), Play(seat=1, cards=["6S"]))),
    "out of turn pass": (Reason.NOT_YOUR_TURN, lambda: (_lead(), Pass(seat=2))),
    "card held by another seat": (
        Reason.CARDS_NOT_IN_HAND,
        lambda: (_lead(), Play(seat=0, cards=["6S"])),
    ),
    "card held by nobody": (
        Reason.CARDS_NOT_IN_HAND,
        lambda: (_lead(), Play(seat=0, cards=["KD"])),
    ),
    "no cards": (Reason.NOT_A_COMBINATION, lambda: (_lead(), Play(seat=0, cards=[]))),
    "two singles": (
        Reason.NOT_A_COMBINATION,
        lambda: (_lead(), Play(seat=0, cards=["3S", "9C"])),
    ),
    "lower single": (
        Reason.DOES_NOT_BEAT,
        lambda: (_after("9C", ["6S 7H KD", "JS"]), Play(seat=1, cards=["7H"])),
    ),
    "other kind": (
        Reason.DOES_NOT_BEAT,
        lambda: (_after("9C", ["6S 6H KD", "JS"]), Play(seat=1, cards=["6S", "6H"])),
    ),
    "first play without the 3 of spades": (
        Reason.MUST_INCLUDE_THREE_OF_SPADES,
        lambda: (make_state(["3S 3H 9D", "5S", "7S"], needs_three=True), Play(0, ["9D"])),
    ),
    "not the highest single": (
        Reason.MUST_PLAY_HIGHEST_SINGLE,
        lambda: (_after("9D", ["TS KH 2S", "4H"]), Play(seat=1, cards=["KH"])),
    ),
    "short trio with cards left": (
        Reason.SHORT_FORM_ONLY_LAST,
        lambda: (make_state(["8S 8H 8D 3H 4H", "5S", "6S"]), Play(0, ["8S", "8H", "8D"])),
    ),
    "short airplane with cards left": (
        Reason.SHORT_FORM_ONLY_LAST,
        lambda: (
            make_state(["8S 8H 8D 9S 9H 9D TS QS", "5S", "6S"]),
            Play(0, ["8S", "8H", "8D", "9S", "9H", "9D", "TS"]),
        ),
    ),
    "single from a locked bomb": (
        Reason.MAY_NOT_SPLIT_BOMB,
        lambda: (make_state(["7S 7H 7D 7C 3H", "5S", "6S"], rules="sixteen"), Play(0, ["7S"])),
    ),
    "trio from a locked bomb": (
        Reason.MAY_NOT_SPLIT_BOMB,
        lambda: (
            make_state(["7S 7H 7D 7C 3H 4H", "5S", "6S"], rules="sixteen"),
            Play(0, ["7S", "7H", "7D", "3H", "4H"]),
        ),
    ),
    "leader passes": (Reason.LEADER_MAY_NOT_PASS, lambda: (_lead(), Pass(seat=0))),
    "pass holding a beating single": (
        Reason.MUST_BEAT,
        lambda: (_after("9C", ["6S TH", "JS"]), Pass(seat=1)),
    ),
    "pass holding only a bomb": (
        Reason.MUST_BEAT,
        lambda: (_after("2S", ["6S 6H 6D 6C", "JS"], rules="sixteen"), Pass(seat=1)),
    ),
    "pass holding only a short final form": (
        Reason.MUST_BEAT,
        lambda: (_after("5S 5H 5D 6S 7S", ["9S 9H 9D", "JS"]), Pass(seat=1)),
    ),
}


def test_every_reason_code_has_a_case() -> None:
    assert {reason for reason, _ in CASES.values()} == set(Reason)


@pytest.mark.parametrize("name", list(CASES))
def test_refusal_gives_its_reason_and_leaves_state_untouched(name: str) -> None:
    reason, case = CASES[name]
    state, action = case()
    before = snapshot(state)
    log_length = len(state.log)
    with pytest.raises(engine.EngineError) as err:
        engine.apply(state, action)
    assert err.value.reason is reason
    assert err.value.message
    expected_class = engine.InvalidActionError if reason in MALFORMED else engine.IllegalActionError
    assert isinstance(err.value, expected_class)
    assert snapshot(state) == before
    assert len(state.log) == log_length


def test_a_refused_action_leaves_the_state_playable() -> None:
    state = _after("9D", ["TS KH 2S", "4H"])
    for action in (Play(seat=1, cards=["TS"]), Pass(seat=1), Play(seat=2, cards=["4H"])):
        with pytest.raises(engine.EngineError):
            engine.apply(state, action)
    play(state, 1, "2S")
    assert pass_(state, 2)[0] == engine.Passed(seat=2)
