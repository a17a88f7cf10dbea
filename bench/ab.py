"""A/B: this checkout's server against a base commit's, in interleaved pairs of runs.

On a shared or virtual machine the same code runs up to twice as fast at one
minute as at the next, so absolute figures from different hours do not
compare.  This runs ``bench/server.py`` alternately on the base (A) and on this
checkout (B), A then B, then B then A, ..., and prints each pair's figures and
their ratio B/A with the load average of each run: a ratio within one pair is
the figure to read, and the spread of the ratios over the pairs says how far to
trust it.

    python bench/ab.py                      # 3 pairs at 200 and 1,000 tables, ~15 min
    python bench/ab.py --quick              # 1 pair each, short runs, < 5 min
    python bench/ab.py --capacity           # also the largest table count at p99 < 100 ms
    python bench/ab.py --base /path/to/tree --pairs 5 --tables 500

Both sides are played by this checkout's ``bench/server.py`` client (the
base's server runs from its own tree through ``--server-root``), so the client
and its measuring are the same for both.  The base (``--base``, a commit, by
default b9f181a: main when issue 25 began) is a ``git worktree`` made under
/tmp if missing, or a path to any checkout.  Its server runs under this
interpreter when the two trees' ``pyproject.toml`` name the same dependencies;
otherwise (or with ``--base-venv``) under a venv made in the base tree.

Per run (``--steady``: counted once every table has joined, so a thousand joins are
not in the figures): server CPU per accepted action without the bots' thinking ("the
rest": ``bench/server.py`` times each bot decision on its thread and subtracts
it), the bots' own, p99 latency from a human's action to the state showing it,
accepted actions per second.  ``--humans 1`` tables are one scripted human and
two bots; ``--humans 3`` tables are three scripted humans and no bot, the CPU
per action with no bot in the process at all (``--humans 1,3`` runs both).

``--capacity`` bisects, for each side, over table counts for the largest one
whose p99 stays under ``--p99-ms`` (default 100): the two sides' probes
alternate, each run at that side's next count, so both searches share the hour.

A benchmark, not a test: it prints figures and asserts nothing about them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH = REPO_ROOT / "bench" / "server.py"
DEFAULT_BASE = "b9f181a"

# The figures compared, as (key in bench/server.py's JSON, label, unit).
FIGURES = [
    ("server_cpu_ms_per_action_excluding_bots", "CPU/action without bots", "ms"),
    ("bot_cpu_ms_per_action", "bots' CPU/action", "ms"),
    ("p99_ms", "p99", "ms"),
    ("actions_per_s", "actions/s", ""),
]


@dataclass
class Side:
    """One side of the comparison: a checkout and the interpreter its server runs on."""

    name: str
    root: Path
    python: str
    # More arguments for this side's runs of bench/server.py.
    extra: tuple[str, ...] = ()


@dataclass
class Run:
    side: str
    tables: int
    humans: int
    load: float
    result: dict[str, Any] | None
    error: str = ""

    def figure(self, key: str) -> float | None:
        value = None if self.result is None else self.result.get(key)
        return float(value) if isinstance(value, int | float) else None


def git(*args: str, cwd: Path = REPO_ROOT) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def base_tree(base: str) -> Path:
    """The base checkout: ``base`` itself if it is a directory, else a worktree of that
    commit under /tmp (made once, reused)."""
    path = Path(base)
    if path.is_dir():
        if not (path / "server" / "__main__.py").is_file():
            raise SystemExit(f"--base {base}: not a checkout of this project")
        return path.resolve()
    commit = git("rev-parse", "--verify", f"{base}^{{commit}}")
    tree = Path("/tmp") / f"pdk-ab-base-{commit[:10]}"
    if not (tree / "server" / "__main__.py").is_file():
        print(f"making a worktree of {commit[:10]} at {tree}", flush=True)
        git("worktree", "add", "--detach", str(tree), commit)
    elif git("rev-parse", "HEAD", cwd=tree) != commit:
        raise SystemExit(f"{tree} is not at {commit[:10]}: remove it or pass --base {tree}")
    return tree


def dependencies(root: Path) -> list[str]:
    with open(root / "pyproject.toml", "rb") as file:
        project = tomllib.load(file).get("project", {})
    return sorted(project.get("dependencies", []))


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in requirements}


def base_python(tree: Path, force_venv: bool) -> str:
    """This interpreter if it has what the base's server needs (every package the base
    names is one this tree names too: a base from before a new dependency runs here),
    else a venv in the base tree (made with the base's own pyproject.toml if missing:
    needs the package index)."""
    if not force_venv and _names(dependencies(tree)) <= _names(dependencies(REPO_ROOT)):
        return sys.executable
    venv = tree / ".venv"
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"making a venv for the base at {venv} (its dependencies differ)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(tree)], check=True)
    return str(python)


def base_extra(args: argparse.Namespace, tree: Path) -> tuple[str, ...]:
    """The base side's extra bench arguments: ``--bench-args-a``, and whole state frames
    when this bench's client can take deltas and the base's server cannot (a base from
    before them)."""
    extra = shlex.split(args.bench_args_a)
    # A module before the wire form, a package since.
    has_deltas = (tree / "server" / "deltas.py").is_file() or (tree / "server" / "deltas").is_dir()
    if '"--frames"' in BENCH.read_text() and "--frames" not in extra and not has_deltas:
        extra += ["--frames", "full"]
    return tuple(extra)


def run_bench(side: Side, tables: int, humans: int, args: argparse.Namespace) -> Run:
    """One ``bench/server.py`` run of ``side``; a failed run is reported, not fatal."""
    command = [
        sys.executable, str(BENCH), "--json", "--steady",
        "--tables", str(tables), "--humans", str(humans),
        "--duration", str(args.duration), "--think-ms", str(args.think_ms),
        "--server-root", str(side.root), "--server-python", side.python, *side.extra,
    ]  # fmt: skip
    load = os.getloadavg()[0]
    timeout = 300 + 3 * args.duration + tables / 10
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Run(side.name, tables, humans, load, None, f"no result in {timeout:.0f} s")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return Run(side.name, tables, humans, load, None, done.stderr.strip()[-600:])
    return Run(side.name, tables, humans, load, json.loads(lines[-1]))


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or a == 0 else b / a


def _num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    text = f"{value:.3f}" if abs(value) < 10 else f"{value:.0f}"
    return text + (f" {unit}" if unit else "")


# What a seat received, from bench/server.py's byte counts (absent from a base's runs
# only if the base's server sends nothing the client can count: never so far).
BYTES = [
    ("bytes_per_action_per_seat", "per action"),
    ("bytes_p99_action_frame", "p99 frame"),
    ("bytes_join_frame", "join frame"),
]

REST = "server_cpu_ms_per_action_excluding_bots"
BOTS = "bot_cpu_ms_per_action"


def machine_corrected(a: Run, b: Run) -> float | None:
    """The CPU-without-bots ratio divided by the bots' own ratio.

    The bots run the same code on both sides, so their CPU per action moves only
    with the machine (another tenant's burst, a colder cache): on a busy host
    that ratio is the pair's control, and dividing by it takes out what the
    minute did to both.  None without bots (``--humans 3``).
    """
    rest, bots = ratio(a.figure(REST), b.figure(REST)), ratio(a.figure(BOTS), b.figure(BOTS))
    if rest is None or bots is None or (a.figure(BOTS) or 0) < 0.01:
        return None
    return rest / bots


def describe_pair(index: int, first: str, a: Run, b: Run) -> str:
    """One line: the pair's figures, A then B, their ratio, each run's load average."""
    if a.result is None or b.result is None:
        failed = a if a.result is None else b
        return f"  pair {index} ({first} first): {failed.side} failed: {failed.error}"
    parts = []
    for key, label, unit in FIGURES:
        fa, fb = a.figure(key), b.figure(key)
        r = ratio(fa, fb)
        parts.append(
            f"{label} {_num(fa)} / {_num(fb, unit)} (B/A {'-' if r is None else f'{r:.2f}'})"
        )
    corrected = machine_corrected(a, b)
    if corrected is not None:
        parts.append(f"without bots / bots {corrected:.2f}")
    # What a seat received (the same in every run of the same seeds: no ratio of the
    # machine's, A whole frames, B deltas when the bench gives A --frames full).
    sizes = [
        f"{label} {_num(a.figure(key))} / {_num(b.figure(key), 'B')}"
        for key, label in BYTES
        if a.figure(key) is not None or b.figure(key) is not None
    ]
    if sizes:
        parts.append("bytes a seat received: " + ", ".join(sizes))
    errors = f"; errors A {a.result['errors']} B {b.result['errors']}"
    speed = (
        f"engine deals/s A {a.result['machine_deals_per_s']} B {b.result['machine_deals_per_s']}"
    )
    return (
        f"  pair {index} ({first} first): " + ", ".join(parts)
        + f"; load A {a.load:.2f} B {b.load:.2f}; {speed}{errors}"
    )  # fmt: skip


def summarise(pairs: list[tuple[Run, Run]]) -> str:
    """The median and range of each figure's per-pair ratio."""
    parts = []
    for key, label, _unit in FIGURES:
        ratios = [r for a, b in pairs if (r := ratio(a.figure(key), b.figure(key))) is not None]
        if ratios:
            parts.append(
                f"{label} B/A median {statistics.median(ratios):.2f} "
                f"({min(ratios):.2f}-{max(ratios):.2f})"
            )
    corrected = [r for a, b in pairs if (r := machine_corrected(a, b)) is not None]
    if corrected:
        parts.append(
            f"(CPU without bots B/A) / (bots' B/A) median {statistics.median(corrected):.2f} "
            f"({min(corrected):.2f}-{max(corrected):.2f})"
        )
    return "  ratios over the pairs: " + ("; ".join(parts) if parts else "none (runs failed)")


def ab_pairs(
    base: Side, head: Side, tables: int, humans: int, args: argparse.Namespace
) -> list[tuple[Run, Run]]:
    mode = "1 scripted human + 2 bots" if humans == 1 else "3 scripted humans, no bot"
    print(f"\n{tables} tables ({mode} each), {args.duration:g} s runs:", flush=True)
    pairs = []
    for index in range(1, args.pairs + 1):
        # The order alternates, so a machine that speeds up or slows down over the
        # hour favours neither side.
        order = (base, head) if index % 2 else (head, base)
        runs = {side.name: run_bench(side, tables, humans, args) for side in order}
        pair = (runs["A"], runs["B"])
        pairs.append(pair)
        print(describe_pair(index, order[0].name, *pair), flush=True)
    print(summarise(pairs), flush=True)
    return pairs


@dataclass
class Search:
    """One side's search for the largest table count at p99 under the bound: doubling
    from the bottom of the range until a count fails, then halving the gap
    (geometrically: the counts span a factor of ten)."""

    side: Side
    bottom: int
    top: int
    step: int
    passed: int = 0  # the largest count seen under the bound (0: none yet)
    failed: int | None = None  # the smallest count seen over it

    def next_count(self) -> int | None:
        """The count to try next, or None when the search is over."""
        if self.failed is None:
            count = self.bottom if self.passed == 0 else min(self.top, 2 * self.passed)
            return None if self.passed >= self.top else count
        if self.passed == 0:
            return None  # the bottom of the range is already over the bound
        middle = round(math.sqrt(self.passed * self.failed) / self.step) * self.step
        return middle if self.passed < middle < self.failed else None

    def record(self, count: int, ok: bool) -> None:
        if ok:
            self.passed = max(self.passed, count)
        else:
            self.failed = count if self.failed is None else min(self.failed, count)


def capacity(base: Side, head: Side, args: argparse.Namespace) -> list[Search]:
    """Search each side for the largest table count at p99 < ``args.p99_ms`` (and no
    errors), the two sides' probes alternating."""
    bottom, top = args.capacity_range
    searches = [Search(side, bottom, top, args.capacity_step) for side in (base, head)]
    print(
        f"\ncapacity: the largest table count in {bottom}-{top} at p99 < {args.p99_ms:g} ms, "
        f"at most {args.capacity_probes} runs a side of {args.duration:g} s, 1 human + 2 bots",
        flush=True,
    )
    for probe in range(args.capacity_probes):
        for search in searches if probe % 2 == 0 else searches[::-1]:
            count = search.next_count()
            if count is None:
                continue
            run = run_bench(search.side, count, 1, args)
            p99 = run.figure("p99_ms")
            errors = 0 if run.result is None else int(run.result["errors"])
            ok = p99 is not None and p99 < args.p99_ms and errors == 0
            search.record(count, ok)
            why = run.error if run.result is None else f"p99 {_num(p99, 'ms')}, errors {errors}"
            print(
                f"  {search.side.name} at {count} tables: {why} -> "
                f"{'under' if ok else 'over'} the bound; load {run.load:.2f}",
                flush=True,
            )
    for search in searches:
        found = str(search.passed) if search.passed else f"none from {bottom}"
        over = f", the smallest over it {search.failed}" if search.failed else ""
        print(f"  {search.side.name}: the largest count under the bound {found}{over}")
    a, b = searches
    if a.passed and b.passed:
        print(f"  B/A {b.passed / a.passed:.2f} (each side's count is as close as its probes got)")
    return searches


def parse_counts(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or any(not 1 <= n <= 2000 for n in counts):
        raise argparse.ArgumentTypeError("table counts are 1..2000, comma-separated")
    return counts


def parse_range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    counts = (int(low), int(high))
    if not 1 <= counts[0] < counts[1] <= 2000:
        raise argparse.ArgumentTypeError("a range low-high within 1..2000")
    return counts


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--base",
        default=DEFAULT_BASE,
        help="commit or checkout path of side A (default %(default)s)",
    )
    parser.add_argument(
        "--base-venv",
        action="store_true",
        help="run the base's server in a venv of its own (made in its tree if missing)",
    )
    parser.add_argument("--pairs", type=int, default=3, help="A/B pairs per table count")
    parser.add_argument("--tables", type=parse_counts, default=[200, 1000], help="e.g. 200,1000")
    parser.add_argument(
        "--humans",
        type=lambda text: [int(h) for h in text.split(",")],
        default=[1],
        help="1 (one human, two bots), 3 (three humans, no bot) or 1,3",
    )
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of play per run")
    parser.add_argument("--think-ms", type=float, default=1000.0, help="the humans' mean pause")
    parser.add_argument("--capacity", action="store_true", help="also bisect for capacity")
    parser.add_argument("--capacity-range", type=parse_range, default=(250, 2000))
    parser.add_argument("--capacity-probes", type=int, default=5, help="runs per side, at most")
    parser.add_argument("--capacity-step", type=int, default=50, help="counts are multiples")
    parser.add_argument("--p99-ms", type=float, default=100.0)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one pair at each table count, 10 s runs, capacity (if asked) in 2 probes: "
        "a check that the harness and both sides work, in under five minutes",
    )
    parser.add_argument(
        "--bench-args-a",
        default="",
        help="more bench/server.py arguments for A's runs (e.g. '--frames full', added by "
        "itself when the bench has that option and the base's server has no deltas)",
    )
    parser.add_argument("--bench-args-b", default="", help="the same for B's runs")
    parser.add_argument("--json", metavar="PATH", help="also write every run's figures to PATH")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.quick:
        args.pairs, args.duration, args.capacity_probes = 1, 10.0, 2
    if any(h not in (1, 3) for h in args.humans) or args.pairs < 1:
        raise SystemExit("--humans takes 1 and/or 3; --pairs at least 1")
    started = time.monotonic()
    tree = base_tree(args.base)
    base = Side("A", tree, base_python(tree, args.base_venv), base_extra(args, tree))
    head = Side("B", REPO_ROOT, sys.executable, tuple(shlex.split(args.bench_args_b)))
    describe = {
        side.name: git("log", "-1", "--format=%h %s", cwd=side.root) for side in (base, head)
    }
    dirty = git("status", "--porcelain", "--untracked-files=no")
    print(f"A (base): {base.root} at {describe['A'][:70]} {' '.join(base.extra)}")
    print(
        f"B (this): {head.root} at {describe['B'][:70]}{' + uncommitted changes' if dirty else ''}"
    )
    print("each figure: A / B (B/A); lower is better for CPU and p99, higher for actions/s")
    every: list[Run] = []
    for humans in args.humans:
        for tables in args.tables:
            for a, b in ab_pairs(base, head, tables, humans, args):
                every += [a, b]
    if args.capacity:
        capacity(base, head, args)
    print(f"\nfinished in {time.monotonic() - started:.0f} s; load average now "
          f"{[round(x, 2) for x in os.getloadavg()]}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps([run.__dict__ for run in every], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
