"""A room's engine work per action, on one core: apply, the views, the frame's JSON.

    python bench/views.py [--matches 60] [--deals 10] [--repeats 2] [--seed 1] [--flush-mib 0]
                          [--seats 1]

Normal bots play ``--matches`` seeded matches of ``--deals`` deals (classic),
and for every action the work a room does in ``bench/server.py``'s table is
timed on its own: the bot's view of the seat to act (no hints), ``apply``,
the person's view of seat 0 (hints on their turn), and encoding that view; then
what a socket taking deltas costs instead ("delta": seat 0's frame as
``server.presenter`` makes it, the view's wire form, its ops from the last one, the
digest and the frame; the table info unchanged), with the mean bytes of each.
``--seats N`` (2 or 3): seats 0 to N-1 each take deltas, as at a table of N humans:
"delta" then times all N seats' frames of an action (the other seats' views are made
untimed), each action with a snapshot of its own that shows those N seats connected,
as the room makes one per broadcast.  The bots' own thinking is not timed.  Prints
mean microseconds per action for each; the first repeat runs with cold caches (memos
empty), later ones warm.
Same seeds, same actions: two versions of the engine that print the same
action count played the same games.

``--flush-mib N`` writes over an N MiB buffer before each of seat 0's turns
(untimed), as the server's lightly loaded process finds its CPU caches after
sleeping between chains while other processes ran: a model of the server's
"cold" cost at 200 tables, which is three to five times the warm one.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec

from server import bots, presenter
from server.engine import BOT_HINTS, PRESETS, NextDeal, apply, new_match, seat_view
from server.rooms.log import SeatMeta, TableMeta
from server.rooms.updates import StateUpdate, TableSnapshot

_encoder = msgspec.json.Encoder()
_SNAPSHOT = TableSnapshot(
    meta=TableMeta(
        id="Bench0001",
        rules=PRESETS["classic"],
        seed=1,
        deals=1,
        seats=[SeatMeta(seat=0, kind="human", name="P0", token_hash="x" * 64)]
        + [SeatMeta(seat=s, kind="bot", name=f"B{s}", level="normal") for s in (1, 2)],
        bot_speed_ms=0,
        created_at=0.0,
    ),
    connected=(True, False, False),
    bot_speed_ms=0,
    match_no=0,
)


def play(
    matches: int,
    deals: int,
    seed: int,
    flush_mib: int = 0,
    sizes: dict[str, int] | None = None,
    seats: int = 1,
) -> tuple[int, dict[str, float]]:
    """Actions played, and seconds spent on each part of the room's work (``sizes``,
    when given, adds up the bytes of each view's JSON and of each delta; ``seats``: see
    the module)."""
    snapshot = _SNAPSHOT
    if seats > 1:
        snapshot = dataclasses.replace(
            _SNAPSHOT, connected=tuple(s < seats for s in range(3)), frames={}
        )
    scratch = bytearray(flush_mib << 20)
    spent = dict.fromkeys(("bot view", "apply", "person's view", "encode", "delta"), 0.0)
    actions = 0
    clock = time.process_time if os.environ.get("BENCH_CPU_CLOCK") else time.perf_counter
    for match in range(matches):
        state = new_match(PRESETS["classic"], seed * 1_000_003 + match, deals)
        feeds = [presenter.Feed(deltas=True) for _ in range(seats)]
        for s, feed in enumerate(feeds):
            presenter.frame(StateUpdate(0, snapshot, seat_view(state, s), []), feed)
        while state.winners is None:
            deal = state.deal
            if deal.result is not None:
                apply(state, NextDeal())
                continue
            if scratch and deal.turn == 0:
                _flush(scratch)
            t0 = clock()
            view = seat_view(state, deal.turn, hints=BOT_HINTS)
            t1 = clock()
            action = bots.decide_now("normal", actions, view)
            t2 = clock()
            events = apply(state, action)
            t3 = clock()
            person = seat_view(state, 0)
            t4 = clock()
            whole = _encoder.encode(person)
            t5 = clock()
            others = [seat_view(state, s) for s in range(1, seats)]
            if seats > 1:
                # A snapshot per broadcast, its table info made before the frames are
                # timed (its digest's prefix and its compare with the last are timed).
                snapshot = dataclasses.replace(snapshot, frames={})
                presenter.full_frame(StateUpdate(actions + 1, snapshot, person, events))
            # The same table info as the last frame (made once per snapshot, for every
            # seat): what is timed is the seats' own part of the frame.
            t5b = clock()
            ops = (
                presenter.frame(StateUpdate(actions + 1, snapshot, person, events), feeds[0]) or ""
            )
            for s, view in enumerate(others, 1):
                presenter.frame(StateUpdate(actions + 1, snapshot, view, events), feeds[s])
            t6 = clock()
            spent["bot view"] += t1 - t0
            spent["apply"] += t3 - t2
            spent["person's view"] += t4 - t3
            spent["encode"] += t5 - t4
            spent["delta"] += t6 - t5b
            if sizes is not None:
                sizes["view"] += len(whole)
                sizes["delta"] += len(ops)
            actions += 1
    return actions, spent


def _flush(scratch: bytearray) -> None:
    """Touch every cache line of ``scratch``, pushing everything else out of the caches."""
    scratch[::64] = bytes(len(scratch) // 64 + (len(scratch) % 64 > 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=60)
    parser.add_argument("--deals", type=int, default=10, choices=(1, 5, 10))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--flush-mib", type=int, default=0, help="see above (0: none)")
    parser.add_argument("--seats", type=int, default=1, choices=(1, 2, 3), help="see above")
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; {args.matches} matches of {args.deals} deals, "
        f"{args.seats} seat(s) taking deltas"
    )
    for repeat in range(args.repeats):
        sizes = dict.fromkeys(("view", "delta"), 0)
        actions, spent = play(
            args.matches, args.deals, args.seed, args.flush_mib, sizes, args.seats
        )
        parts = ", ".join(f"{name} {1e6 * s / actions:.1f}" for name, s in spent.items())
        total = 1e6 * sum(spent.values()) / actions
        label = "cold" if repeat == 0 else "warm"
        print(f"{label}: {actions} actions; us per action: {parts}; all {total:.1f}")
        print(
            f"  bytes per action: the view {sizes['view'] / actions:.0f}, its delta frame "
            f"(no table info) {sizes['delta'] / actions:.0f}"
        )


if __name__ == "__main__":
    main()
