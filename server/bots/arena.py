"""Duplicate-deal arena: how the bot levels score against each other.

    python -m server.bots.arena --seats strong,normal,easy --deals 2000 --seed 1 --rules classic

Every deal is played once for each distinct assignment of the listed levels to
the three seats, so the cards' luck cancels out; deals run in parallel on all
cores.  Per level it prints mean points per deal with a 95% confidence
interval, the deal win rate and the shut-out rate; then per level the wall
time of its decisions (from the moment ``choose`` is called until it returns:
p50, p95, p99, max), how many took longer than the strong bot's budget, and
decisions per second of decision time (per core: each deal runs on one); then
the per-deal margin between each pair of levels.  The load average at the end
is printed with the figures: timings on a busy machine say so.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

from ..engine import BOT_HINTS, PRESETS, Rules, apply, new_match, seat_view
from . import DEFAULT_BUDGET, LEVELS, Bot, make_bot
from .search import MOVES_PER_SECOND
from .strong import StrongBot

__all__ = ["DealRecord", "main", "play_deal", "summarise"]


class DealRecord(NamedTuple):
    """One duplicate deal's outcome per level, over every seat assignment."""

    # Per level: mean points over the seats and assignments it played this deal.
    points: dict[str, float]
    games: dict[str, int]
    wins: dict[str, int]
    shut_outs: dict[str, int]
    times: dict[str, list[float]]


def assignments(levels: Sequence[str]) -> list[tuple[str, ...]]:
    """Every distinct way to seat ``levels``."""

    return sorted(set(itertools.permutations(levels)))


def _frozen() -> float:
    return 0.0


def _bot(level: str, seed: int, budget: float, work_rate: float, clock: bool) -> Bot:
    if level == "strong":
        return StrongBot(
            seed, budget, clock=time.monotonic if clock else _frozen, moves_per_second=work_rate
        )
    return make_bot(level, seed)


def play_deal(
    rules: Rules,
    seed: int,
    deal: int,
    levels: tuple[str, ...],
    budget: float,
    work_rate: float = MOVES_PER_SECOND,
    clock: bool = True,
) -> DealRecord:
    """Play deal ``deal`` once per seat assignment of ``levels``; per-level outcomes."""
    totals: dict[str, float] = {lv: 0.0 for lv in levels}
    games = {lv: 0 for lv in levels}
    wins = {lv: 0 for lv in levels}
    shut = {lv: 0 for lv in levels}
    times: dict[str, list[float]] = {lv: [] for lv in levels}
    deal_seed = seed * 1_000_003 + deal
    for seats in assignments(levels):
        state = new_match(rules, deal_seed, 1)
        bots = [_bot(lv, deal_seed * 7 + s, budget, work_rate, clock) for s, lv in enumerate(seats)]
        while state.deal.result is None:
            turn = state.deal.turn
            view = seat_view(state, turn, hints=BOT_HINTS)
            t0 = time.perf_counter()
            action = bots[turn].choose(view)
            times[seats[turn]].append(time.perf_counter() - t0)
            apply(state, action)
        result = state.deal.result
        for s, lv in enumerate(seats):
            totals[lv] += result.deal_totals[s]
            games[lv] += 1
            wins[lv] += result.winner == s
            shut[lv] += result.shut_out[s]
    points = {lv: totals[lv] / games[lv] for lv in totals}
    return DealRecord(points, games, wins, shut, times)


def _mean_ci(xs: list[float]) -> tuple[float, float]:
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, float("nan")
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def summarise(records: list[DealRecord], levels: Sequence[str], budget: float) -> str:
    """The results table: per level points, rates and decision times; pairwise margins.

    "over" counts decisions that took longer than ``budget`` (strong only: the
    other levels have no budget); "dec/s" is decisions per second of the
    level's decision time, i.e. per core.
    """
    distinct = list(dict.fromkeys(levels))
    lines = [f"{'level':8} {'points/deal':>20} {'win rate':>9} {'shut-out':>9}"]
    for lv in distinct:
        mean, ci = _mean_ci([r.points[lv] for r in records])
        games = sum(r.games[lv] for r in records)
        wins = sum(r.wins[lv] for r in records)
        shut = sum(r.shut_outs[lv] for r in records)
        lines.append(f"{lv:8} {mean:+9.2f} ± {ci:<8.2f} {wins / games:9.3f} {shut / games:9.3f}")
    lines.append(
        f"{'level':8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8} "
        f"{'over':>6} {'decisions':>9} {'dec/s':>9}"
    )
    for lv in distinct:
        times = [t for r in records for t in r.times[lv]]
        spent = sum(times)
        over = f"{sum(t > budget for t in times):6d}" if lv == "strong" else f"{'-':>6}"
        rate = len(times) / spent if spent > 0 else float("nan")
        lines.append(
            f"{lv:8} {_pct(times, 0.5) * 1000:8.2f} {_pct(times, 0.95) * 1000:8.2f} "
            f"{_pct(times, 0.99) * 1000:8.2f} {max(times, default=0.0) * 1000:8.2f} "
            f"{over} {len(times):9d} {rate:9.1f}"
        )
    for a, b in itertools.combinations(distinct, 2):
        mean, ci = _mean_ci([r.points[a] - r.points[b] for r in records])
        lines.append(f"margin {a} - {b}: {mean:+.2f} ± {ci:.2f} points/deal")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the arena from the command line."""

    ap = argparse.ArgumentParser(
        prog="python -m server.bots.arena", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--seats", default="strong,normal,easy", help="three levels, comma-separated")
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--first-deal", type=int, default=0, help="play deals first..first+deals-1 of the seed"
    )
    ap.add_argument("--rules", default="classic", choices=sorted(PRESETS))
    ap.add_argument("--budget", type=float, default=DEFAULT_BUDGET, help="strong seconds/decision")
    ap.add_argument(
        "--work-rate",
        type=float,
        default=MOVES_PER_SECOND,
        help="strong work budget: simulated moves per second of budget",
    )
    ap.add_argument(
        "--no-clock",
        action="store_true",
        help="strong stops on its work budget only: results do not depend on machine load "
        "(and its decision times are not held to the budget)",
    )
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--save", help="write each deal's points per level to this JSON-lines file, as it ends"
    )
    ap.add_argument(
        "--against",
        help="a --save file of another run on the same deals: print the paired difference",
    )
    args = ap.parse_args(argv)
    levels = tuple(args.seats.split(","))
    if len(levels) != 3 or any(lv not in LEVELS for lv in levels):
        ap.error(f"--seats takes three of {', '.join(LEVELS)}")
    rules = PRESETS[args.rules]
    records: list[DealRecord] = []
    start = time.monotonic()
    step = max(1, args.deals // 20)
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = [
            pool.submit(
                play_deal,
                rules,
                args.seed,
                d,
                levels,
                args.budget,
                args.work_rate,
                not args.no_clock,
            )
            for d in range(args.first_deal, args.first_deal + args.deals)
        ]
        save = open(args.save, "w") if args.save else None  # noqa: SIM115 - closed below
        for fut in futures:
            records.append(fut.result())
            done = len(records)
            if save is not None:
                # Line by line, so a run stopped early still leaves its deals.
                deal_no = args.first_deal + done - 1
                save.write(json.dumps({"deal": deal_no, "points": records[-1].points}) + "\n")
                save.flush()
            if done % step == 0 or done == args.deals:
                spent = time.monotonic() - start
                eta = spent / done * (args.deals - done)
                print(
                    f"  {done}/{args.deals} deals, {spent:.0f}s, eta {eta:.0f}s",
                    file=sys.stderr,
                    flush=True,
                )
    print(
        f"rules={args.rules} seats={args.seats} deals={args.deals} seed={args.seed} "
        f"first-deal={args.first_deal} "
        f"assignments={len(assignments(levels))} budget={args.budget}s "
        f"work-rate={args.work_rate:.0f}{' no-clock' if args.no_clock else ''} "
        f"workers={args.workers} wall={time.monotonic() - start:.0f}s "
        f"load={' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(summarise(records, levels, args.budget))
    if save is not None:
        save.close()
    if args.against:
        print(paired(records, args.against, args.first_deal))
    return 0


def paired(records: list[DealRecord], path: str, first_deal: int = 0) -> str:
    """Per level, this run's points per deal minus those of the run saved in ``path``.

    The same deals with the same seats: the cards' luck cancels, so the
    interval is much tighter than comparing two runs' margins.
    """
    with open(path) as f:
        other = {row["deal"]: row["points"] for row in map(json.loads, f)}
    lines = []
    for lv in records[0].points:
        diffs = [
            r.points[lv] - other[d][lv]
            for d, r in enumerate(records, start=first_deal)
            if d in other
        ]
        if diffs:
            mean, ci = _mean_ci(diffs)
            lines.append(
                f"paired {lv} (this run - {path}): {mean:+.2f} ± {ci:.2f} points/deal "
                f"over {len(diffs)} deals"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
