"""Engine speed: legal-play listing and random self-play, on one core.

    python bench/engine.py [--positions 10000] [--deals 2000] [--seed 1]

(a) mean microseconds to list the legal plays over positions taken from seeded
random self-play across the three presets, measured cold (the position cache
cleared before each call) and warm; (b) complete random self-play deals per
second through the public ``apply``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.engine import PRESETS, Pass, Play, apply, card_code, new_match
from server.engine.combos import counts_of
from server.engine.game import legal_for, table_reading
from server.engine.moves import Position, legal_plays
from server.engine.state import MatchState

PRESET_NAMES = ("classic", "sixteen", "kawu")


def _cards_for(hand: list[int], play: int, needs_three: bool) -> list[str]:
    """Concrete cards for a Counts play, holding the 3 of spades first if needed."""
    need = [(play >> (4 * r)) & 15 for r in range(13)]
    out: list[str] = []
    for card in hand:  # hands are sorted, the 3 of spades (0) comes first
        r = card >> 2
        if need[r]:
            need[r] -= 1
            out.append(card_code(card))
    return out


def random_deal(state: MatchState, rng: random.Random, positions: list[Position] | None) -> None:
    deal = state.deal
    while deal.result is None:
        seat = deal.turn
        if positions is not None:
            hand = deal.hands[seat]
            positions.append(
                (
                    counts_of(hand),
                    table_reading(deal),
                    len(deal.hands[(seat + 1) % 3]) == 1,
                    deal.needs_three_of_spades,
                    state.rules.split_bombs,
                )
            )
        plays = legal_for(state, seat)
        if not plays:  # must-beat: passing is legal only when nothing beats
            apply(state, Pass(seat=seat))
            continue
        play = plays[rng.randrange(len(plays))]
        apply(
            state,
            Play(seat=seat, cards=_cards_for(deal.hands[seat], play, deal.needs_three_of_spades)),
        )


def collect_positions(count: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    positions: list[Position] = []
    game = 0
    while len(positions) < count:
        rules = PRESETS[PRESET_NAMES[game % 3]]
        random_deal(new_match(rules, seed * 100_000 + game), rng, positions)
        game += 1
    return positions[:count]


def bench_listing(positions: list[Position]) -> tuple[float, float, float]:
    raw = legal_plays.__wrapped__
    cold: list[float] = []
    clock = time.perf_counter_ns
    for pos in positions:
        t0 = clock()
        raw(*pos)
        cold.append((clock() - t0) / 1000)
    legal_plays.cache_clear()
    for pos in positions:
        legal_plays(*pos)
    t0 = clock()
    for pos in positions:
        legal_plays(*pos)
    warm = (clock() - t0) / 1000 / len(positions)
    cold.sort()
    return statistics.fmean(cold), cold[int(len(cold) * 0.99)], warm


def bench_deals(deals: int, seed: int) -> float:
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for i in range(deals):
        rules = PRESETS[PRESET_NAMES[i % 3]]
        random_deal(new_match(rules, seed * 1_000_000 + i), rng, None)
    return deals / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=10_000)
    parser.add_argument("--deals", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    positions = collect_positions(args.positions, args.seed)
    leads = sum(1 for p in positions if p[1] is None)
    mean, p99, warm = bench_listing(positions)
    print(f"(a) legal plays over {len(positions)} self-play positions ({leads} leads):")
    print(f"    cold mean {mean:.1f} us, cold p99 {p99:.1f} us, warm (cached) mean {warm:.2f} us")
    rate = bench_deals(args.deals, args.seed)
    print(f"(b) random self-play: {rate:.0f} deals/s over {args.deals} deals")


if __name__ == "__main__":
    main()
