"""Spectator frames, made by the presenter from the engine's public view, never hold a
hidden card: a property over many random deals, and the seat frames for contrast."""

from __future__ import annotations

import random
import re

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server import engine, presenter
from server.rooms.clock import TurnClock
from server.rooms.tables import CreateTableRequest, build_table
from server.rooms.updates import StateUpdate, TableSnapshot, WatchUpdate
from tests.engine.playout import play_match

QUOTED_CARD = re.compile(r'"([3-9TJQKA2][SHDC])"')


def hidden(state: engine.MatchState) -> set[str]:
    return {engine.card_code(c) for hand in state.deal.hands for c in hand}


def snapshot(preset: str, seed: int) -> TableSnapshot:
    meta, _ = build_table(
        CreateTableRequest(rules=preset, humans=2, bots=["easy"], seed=seed, turn_seconds=30)
    )
    clock = TurnClock(seat=1, version=3, deadline=1_800_000_030.0)
    return TableSnapshot(
        meta=msgspec.structs.replace(meta, clock=clock),
        connected=(True, False, True),
        bot_speed_ms=0,
        match_no=0,
        spectators=2,
        now=1_800_000_000.0,
    )


@settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    preset=st.sampled_from(["classic", "sixteen", "kawu"]),
    seed=st.integers(min_value=0, max_value=2**32),
    deals=st.sampled_from([1, 5]),
)
def test_no_spectator_frame_ever_holds_a_card_still_in_a_hand(
    preset: str, seed: int, deals: int
) -> None:
    table = snapshot(preset, seed)
    rng = random.Random(seed)
    for version, (state, _) in enumerate(play_match(engine.PRESETS[preset], seed, deals, rng)):
        frame = presenter.frame(
            WatchUpdate(version=version, table=table, view=engine.public_view(state), events=[])
        )
        assert not set(QUOTED_CARD.findall(frame)) & hidden(state)
        assert '"hand"' not in frame


def test_the_same_check_catches_a_seat_frame_which_holds_a_hand() -> None:
    state = engine.new_match(engine.PRESETS["classic"], 7)
    frame = presenter.frame(
        StateUpdate(
            version=0, table=snapshot("classic", 7), view=engine.seat_view(state, 0), events=[]
        )
    )
    assert set(QUOTED_CARD.findall(frame)) & hidden(state)
