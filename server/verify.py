"""Check a seat's whole game record against what the server committed to.

    python -m server.verify record.jsonl

``record.jsonl`` holds what one seat's socket received (one JSON object per
line, or one JSON array): its ``state`` frames, and its ``error`` frames, plus
the ``entropy`` messages the seat itself sent (a client keeps its own; the
server never sends that type).  For every match whose seed and salt are revealed
(once the match is over) the record is checked whole:

1. every deal's commitment was visible no later than the first frame showing the
   deal's cards, never changed, and equals
   ``sha256("paodekuai-deal/v1/{salt}/{seed}/{deal_no}")`` (server.fairness);
2. every client seed this seat sent (bound to the commitment it saw) was mixed
   into that deal, unless the server refused it in an ``error`` frame; a seed sent
   before the first frame (a creator's, right after its join, answering the
   create answer's commitment) is the table's first deal's, whose frames must
   publish that very commitment;
3. each deal is rebuilt from the seed and the published client seeds
   (``engine.cards.deal_key``), and the moves every frame shows are replayed
   through the engine: every move must be legal, this seat's hand in every
   frame, and at the end of the deal every seat's revealed cards and the result,
   must be what the replay gives.

Checks 1 and 2 run for unfinished matches too.  It prints one line per deal,
one ``MISMATCH [code]`` line per problem, and exits 0 when everything matches,
1 when anything does not, 2 when the file cannot be used.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import msgspec

from server import engine
from server.engine.state import DealResult, DealState
from server.fairness import ENTROPY_REFUSALS, commitment

__all__ = ["Problem", "ProblemCode", "Report", "main", "verify_frames"]


class ProblemCode(StrEnum):
    """What a record can get wrong, one code per kind of lie."""

    # A deal's cards were shown before (or without) its commitment.
    COMMITMENT_LATE = "commitment_late"
    # Two frames published different commitments for one deal (or the first deal's
    # is not the one the creator's seed answered, from the create answer).
    COMMITMENT_CHANGED = "commitment_changed"
    # A commitment is not what the revealed seed and salt give.
    COMMITMENT_MISMATCH = "commitment_mismatch"
    # Two frames revealed different seeds or salts for one match.
    REVEAL_CHANGED = "reveal_changed"
    # Two frames published different client seeds for one deal.
    ENTROPY_CHANGED = "entropy_changed"
    # This seat sent a client seed for a deal, and the deal does not mix it.
    ENTROPY_IGNORED = "entropy_ignored"
    # The record is not one seat's (its seat changes).
    SEAT_CHANGED = "seat_changed"
    # A frame's moves are not the ones an earlier frame of the deal showed, continued.
    MOVES_DIVERGE = "moves_diverge"
    # A move the engine refuses on the deal the seed makes.
    ILLEGAL_MOVE = "illegal_move"
    # This seat's hand is not what the seed dealt it minus what it played.
    HAND_MISMATCH = "hand_mismatch"
    # The cards shown at the end of a deal are not what each seat still held.
    REVEALED_MISMATCH = "revealed_mismatch"
    # A deal's result (or a frame's counts) is not what the replayed moves give.
    RESULT_MISMATCH = "result_mismatch"
    # A deal cannot be rebuilt (the results before it are missing from the record).
    UNREPLAYABLE = "unreplayable"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing the record gets wrong: a code, and where and how in words."""

    code: ProblemCode
    message: str

    def __str__(self) -> str:
        return f"[{self.code.value}] {self.message}"


@dataclass(slots=True)
class Report:
    """What was checked (one line per deal) and what did not match."""

    checked: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def add(self, code: ProblemCode, message: str) -> None:
        self.problems.append(Problem(code, message))


_Key = tuple[int, int]  # (match_no, deal_no)


@dataclass(slots=True)
class _Deal:
    """What the record shows of one deal."""

    commitments: dict[str, int] = field(default_factory=dict)  # value -> first line
    entropy: dict[tuple[str, ...], int] = field(default_factory=dict)
    first_commitment: int | None = None
    first_shown: int | None = None
    frames: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def _load(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8").strip()
    if text.startswith("["):
        lines: list[dict[str, Any]] = json.loads(text)
    else:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [x for x in lines if x.get("type") in ("state", "error", "entropy")]


def _deal(deals: dict[_Key, _Deal], key: _Key) -> _Deal:
    return deals.setdefault(key, _Deal())


def _publish(deal: _Deal, value: str, index: int) -> None:
    deal.commitments.setdefault(value, index)
    if deal.first_commitment is None:
        deal.first_commitment = index


def _where(key: _Key) -> str:
    return f"match {key[0]} deal {key[1]}"


def verify_frames(lines: Sequence[dict[str, Any]]) -> Report:
    """Check a record (state and error frames received, entropy messages sent), in order."""
    report = Report()
    deals: dict[_Key, _Deal] = {}
    reveals: dict[int, dict[tuple[int, str], int]] = {}
    seats: set[int] = set()
    for index, line in enumerate(lines):
        if line.get("type") != "state":
            continue
        match_no, view = line["table"]["match_no"], line["view"]
        seats.add(view["seat"])
        info = line["table"].get("fairness") or {}
        for deal_no, value in enumerate(info.get("commitments") or [], start=1):
            _publish(_deal(deals, (match_no, deal_no)), value, index)
        upcoming = info.get("next")
        if upcoming is not None:
            key = (upcoming["match_no"], upcoming["deal_no"])
            _publish(_deal(deals, key), upcoming["commitment"], index)
        for deal_no, seeds in enumerate(info.get("entropy") or [], start=1):
            _deal(deals, (match_no, deal_no)).entropy.setdefault(tuple(seeds), index)
        if info.get("seed") is not None:
            reveals.setdefault(match_no, {}).setdefault((int(info["seed"]), info["salt"]), index)
        deal = _deal(deals, (match_no, view["deal_no"]))
        if deal.first_shown is None:
            deal.first_shown = index
        deal.frames.append((index, line))
    if len(seats) > 1:
        report.add(ProblemCode.SEAT_CHANGED, f"the record mixes seats {sorted(seats)}")
        return report
    seat = seats.pop() if seats else 0
    for key, deal in sorted(deals.items()):
        _check_publication(report, key, deal)
    _check_sent_seeds(report, lines, deals, seat)
    for match_no in sorted({k[0] for k in deals}):
        revealed = reveals.get(match_no, {})
        if len(revealed) > 1:
            report.add(
                ProblemCode.REVEAL_CHANGED,
                f"match {match_no}: frames reveal different seeds or salts {sorted(revealed)}",
            )
            continue
        mine = sorted((k, d) for k, d in deals.items() if k[0] == match_no)
        if not revealed:
            report.checked.append(f"match {match_no}: not over in this record (no seed revealed)")
            continue
        ((seed, salt),) = revealed
        for key, deal in mine:
            _check_commitment(report, key, deal, seed, salt)
            if deal.frames:
                _replay_deal(report, key, deal, seed, seat)
    return report


def _check_publication(report: Report, key: _Key, deal: _Deal) -> None:
    if len(deal.commitments) > 1:
        report.add(
            ProblemCode.COMMITMENT_CHANGED,
            f"{_where(key)}: frames published different commitments {sorted(deal.commitments)}",
        )
    if deal.first_shown is not None and (
        deal.first_commitment is None or deal.first_commitment > deal.first_shown
    ):
        report.add(
            ProblemCode.COMMITMENT_LATE,
            f"{_where(key)}: its cards were shown (line {deal.first_shown + 1}) before its "
            "commitment was published"
            + ("" if deal.first_commitment is None else f" (line {deal.first_commitment + 1})"),
        )
    if len(deal.entropy) > 1:
        report.add(
            ProblemCode.ENTROPY_CHANGED,
            f"{_where(key)}: frames published different client seeds {sorted(deal.entropy)}",
        )


def _check_sent_seeds(
    report: Report, lines: Sequence[dict[str, Any]], deals: dict[_Key, _Deal], seat: int
) -> None:
    """Every seed this seat sent is in the deal whose commitment it answered, or refused."""
    by_commitment = {v: k for k, d in deals.items() for v in d.commitments}
    first_frame = next((i for i, x in enumerate(lines) if x.get("type") == "state"), len(lines))
    for index, line in enumerate(lines):
        if line.get("type") != "entropy":
            continue
        key = by_commitment.get(line.get("commitment", ""))
        first = deals.get((0, 1))
        if index < first_frame and key != (0, 1) and first is not None and first.commitments:
            # Sent with the join, it answered the create answer's commitment: a server
            # that publishes another one for the first deal chose its seed after ours.
            report.add(
                ProblemCode.COMMITMENT_CHANGED,
                f"match 0 deal 1: this seat's seed answered commitment "
                f"{line.get('commitment', '')[:16]}... (the create answer's), but the frames "
                f"publish {sorted(first.commitments)}",
            )
            continue
        deal = deals.get(key) if key is not None else None
        if key is None or deal is None or not deal.entropy:
            continue  # a deal this record never shows dealt: nothing to hold it to
        if _refused(lines, index):
            report.checked.append(f"{_where(key)}: the server refused this seat's seed (said so)")
            continue
        seeds = next(iter(deal.entropy))
        mixed = seeds[seat] if seat < len(seeds) else ""
        if mixed != line.get("seed"):
            report.add(
                ProblemCode.ENTROPY_IGNORED,
                f"{_where(key)}: this seat sent client seed {line.get('seed')!r} for commitment "
                f"{line.get('commitment', '')[:16]}..., but the deal mixes {mixed!r}",
            )


def _refused(lines: Sequence[dict[str, Any]], sent: int) -> bool:
    """Whether an ``error`` frame refusing a seed answers the message sent at ``sent``."""
    for line in lines[sent + 1 :]:
        if line.get("type") == "entropy":
            return False
        if line.get("type") == "error" and line.get("code") in ENTROPY_REFUSALS:
            return True
    return False


def _check_commitment(report: Report, key: _Key, deal: _Deal, seed: int, salt: str) -> None:
    expected = commitment(seed, salt, key[1])
    if deal.commitments and set(deal.commitments) != {expected}:
        report.add(
            ProblemCode.COMMITMENT_MISMATCH,
            f"{_where(key)}: published {sorted(deal.commitments)}, but the revealed seed and "
            f"salt commit to {expected}",
        )


def _start(view: dict[str, Any], seed: int, deal_no: int, seeds: tuple[str, ...]) -> Any:
    """The match as deal ``deal_no`` starts, rebuilt through the engine, or None."""
    rules = msgspec.convert(view["rules"], engine.Rules)
    if deal_no == 1:
        return engine.new_match(rules, seed, view["deals"], seeds)
    results = [msgspec.convert(r, DealResult) for r in view["results"][: deal_no - 1]]
    if len(results) < deal_no - 1:
        return None
    state = engine.new_match(rules, seed, view["deals"])
    # The deal before, as it ended: the engine itself then deals the next one (and
    # picks its leader) from the seed and the seats' client seeds.
    state.deal = DealState(
        deal_no=deal_no - 1, hands=[[], [], []], turn=-1, leader=0, result=results[-1]
    )
    state.results = results
    state.totals = list(results[-1].match_totals)
    state.entropy = []
    engine.apply(state, engine.NextDeal(entropy=seeds))
    return state


def _codes(cards: Iterable[int]) -> list[str]:
    return sorted(engine.card_code(c) for c in cards)


def _replay_deal(report: Report, key: _Key, deal: _Deal, seed: int, seat: int) -> None:
    """Replay the deal's moves through the engine and hold every frame to the replay."""
    frames = sorted(deal.frames, key=lambda f: f[1]["version"])
    seeds = next(iter(deal.entropy), ())
    state = _start(frames[-1][1]["view"], seed, key[1], seeds)
    where = _where(key)
    if state is None:
        report.add(ProblemCode.UNREPLAYABLE, f"{where}: the results before it are not recorded")
        return
    played: list[dict[str, Any]] = []
    for _, frame in frames:
        view, version = frame["view"], frame["version"]
        moves = view["moves"]
        if moves[: len(played)] != played:
            report.add(
                ProblemCode.MOVES_DIVERGE,
                f"{where} version {version}: the moves shown are not those shown before, continued",
            )
            return
        for move in moves[len(played) :]:
            action: engine.Action
            if move.get("cards"):
                action = engine.Play(move["seat"], list(move["cards"]))
            else:
                action = engine.Pass(move["seat"])
            try:
                engine.apply(state, action)
            except engine.EngineError as exc:
                report.add(
                    ProblemCode.ILLEGAL_MOVE,
                    f"{where} version {version}: seat {move['seat']} "
                    f"{'played ' + ' '.join(move['cards']) if move.get('cards') else 'passed'}, "
                    f"which the deal the seed makes does not allow ({exc.reason.value}: {exc})",
                )
                return
            played.append(move)
        if not _frame_matches(report, f"{where} version {version}", state, view, seat):
            return
    entropy_note = "with client seeds" if any(seeds) else "from the server seed alone"
    report.checked.append(
        f"{where}: commitment matches, dealt {entropy_note}, "
        f"{len(played)} moves replayed legally, {len(frames)} frame(s) checked"
    )


def _frame_matches(report: Report, where: str, state: Any, view: dict[str, Any], seat: int) -> bool:
    deal = state.deal
    held = _codes(deal.hands[seat])
    if sorted(view["hand"]) != held:
        report.add(
            ProblemCode.HAND_MISMATCH,
            f"{where}: seat {seat} held {sorted(view['hand'])}, but the seed and the moves "
            f"leave it {held}",
        )
        return False
    if view["counts"] != [len(h) for h in deal.hands]:
        report.add(
            ProblemCode.RESULT_MISMATCH,
            f"{where}: card counts {view['counts']}, the replay gives "
            f"{[len(h) for h in deal.hands]}",
        )
        return False
    # Through JSON, as the frame came: tuples read back as lists.
    expected = None if deal.result is None else json.loads(msgspec.json.encode(deal.result))
    if view["result"] != expected:
        report.add(
            ProblemCode.RESULT_MISMATCH, f"{where}: result {view['result']}, replay {expected}"
        )
        return False
    revealed = [sorted(h) for h in view.get("revealed") or []]
    left = [] if deal.result is None else [_codes(h) for h in deal.hands]
    if revealed != left:
        report.add(
            ProblemCode.REVEALED_MISMATCH,
            f"{where}: cards revealed {revealed}, but the seats still held {left}",
        )
        return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m server.verify",
        description="Check a seat's recorded frames against the revealed deal seeds.",
    )
    parser.add_argument("frames", type=Path, help="the record, one JSON object per line")
    args = parser.parse_args(argv)
    try:
        lines = _load(args.frames)
    except (OSError, ValueError, AttributeError) as exc:
        print(f"cannot read {args.frames}: {exc}", file=sys.stderr)
        return 2
    if not any(line.get("type") == "state" for line in lines):
        print(f"{args.frames} holds no state frames", file=sys.stderr)
        return 2
    try:
        report = verify_frames(lines)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        print(f"{args.frames} is not a record of state frames: {exc!r}", file=sys.stderr)
        return 2
    for line in report.checked:
        print(line)
    for problem in report.problems:
        print(f"MISMATCH {problem}")
    if report.problems:
        return 1
    revealed = any("commitment matches" in line for line in report.checked)
    print("OK: every deal matches its commitment" if revealed else "nothing to check yet")
    return 0 if revealed else 2


if __name__ == "__main__":
    sys.exit(main())
