"""Strong bot cost: CPU per searched decision and per simulated move, on one core.

    python bench/strong.py [--deals 6] [--warmup 2] [--budget 0.3] [--seed 1] [--rules classic]

Plays ``--deals`` deals with a strong seat against normal and easy (the strong
seat rotates), with the strong bot's clock standing still, so every search ends
on its work budget (``budget * --work-rate`` simulated moves) and
the same code always makes the same choices.  Prints CPU seconds per searched
decision, simulated moves per CPU second, searched decisions per CPU second,
and a digest of every strong choice: two versions of the search that print the
same digest made the same decisions, so they are equally strong.  ``--warmup``
deals (other seeds, not measured) are played first, as a worker process that
has served a few tables would have.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.bots import make_bot
from server.bots.search import MOVES_PER_SECOND
from server.bots.strong import StrongBot
from server.engine import BOT_HINTS, PRESETS, Play, apply, new_match, seat_view


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deals", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--budget", type=float, default=0.3)
    ap.add_argument(
        "--work-rate",
        type=float,
        default=MOVES_PER_SECOND,
        help="simulated moves per second of budget (40000 before 0.1 s became the default)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rules", default="classic", choices=sorted(PRESETS))
    args = ap.parse_args()
    rules = PRESETS[args.rules]
    digest = hashlib.sha256()
    searched = 0
    cpu = 0.0
    moves = 0
    for d in range(-args.warmup, args.deals):
        measured = d >= 0
        seed = args.seed * 1000 + d if measured else args.seed * 1000 + 500 - d
        state = new_match(rules, seed, 1)
        strong_seat = abs(d) % 3
        bots = [
            StrongBot(seed, args.budget, clock=lambda: 0.0, moves_per_second=args.work_rate)
            if s == strong_seat
            else make_bot("normal" if s == (strong_seat + 1) % 3 else "easy", seed)
            for s in range(3)
        ]
        while state.deal.result is None:
            turn = state.deal.turn
            view = seat_view(state, turn, hints=BOT_HINTS)
            bot = bots[turn]
            t0 = time.process_time()
            action = bot.choose(view)
            spent = time.process_time() - t0
            if isinstance(bot, StrongBot) and measured:
                digest.update(repr(action.cards if isinstance(action, Play) else "pass").encode())
                if bot.last_stats.samples:
                    searched += 1
                    cpu += spent
                    moves += bot.last_stats.moves
                    bot.last_stats.samples = 0
            apply(state, action)
        gc.collect()
    load = os.getloadavg()
    print(
        f"rules={args.rules} deals={args.deals} warmup={args.warmup} seed={args.seed} "
        f"budget={args.budget}s work-rate={args.work_rate:.0f} "
        f"python={platform.python_version()} load={load[0]:.2f},{load[1]:.2f},{load[2]:.2f}"
    )
    print(f"searched decisions      {searched}")
    print(f"CPU ms per decision     {cpu / max(1, searched) * 1000:.1f}")
    print(f"simulated moves per s   {moves / max(cpu, 1e-9):.0f}  (CPU time)")
    print(f"decisions per CPU s     {searched / max(cpu, 1e-9):.2f}")
    print(f"choices digest          {digest.hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
