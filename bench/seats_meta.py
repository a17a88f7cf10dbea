"""What the seats add to each committed action: ``turns.meta_after``, encoding the meta
it may write with the entry, and the spectators' ``public_view``.

    python -m bench.seats_meta [runs]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import msgspec

from server import engine
from server.engine import Play
from server.rooms.seating import mark_joined
from server.rooms.tables import CreateTableRequest, build_table
from server.rooms.turns import meta_after

NOW = 1.8e9


def per_call_us(runs: int, call: Callable[[], object]) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        call()
    return (time.perf_counter() - started) / runs * 1e6


def main(runs: int = 20_000) -> None:
    # Three friends, a 30 s clock: every move starts a human turn with a new clock.
    meta, _ = build_table(CreateTableRequest(humans=3, bots=[], seed=1, turn_seconds=30))
    for seat in range(3):
        meta = mark_joined(meta, seat)
    state = engine.new_match(meta.rules, 1)
    mover = state.deal.turn
    move = Play(seat=mover, cards=engine.seat_view(state, mover).hints[0])
    engine.apply(state, move)
    after = meta_after(meta, move, state, 1, NOW)
    assert after.clock is not None
    assert after.clock.seat == state.deal.turn
    encoder = msgspec.json.Encoder()
    rows = [
        (
            "meta_after, the next turn's clock",
            per_call_us(runs, lambda: meta_after(meta, move, state, 1, NOW)),
        ),
        (
            "meta_after, clock already stored",
            per_call_us(runs, lambda: meta_after(after, move, state, 1, NOW)),
        ),
        (
            f"meta JSON ({len(encoder.encode(after))} bytes)",
            per_call_us(runs, lambda: encoder.encode(after)),
        ),
        ("public_view", per_call_us(runs, lambda: engine.public_view(state))),
    ]
    for name, us in rows:
        print(f"{name:36} {us:6.1f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
