"""Check that the cards you were dealt came from the seat the server committed to.

    python -m server.verify frames.jsonl

``frames.jsonl`` holds the ``state`` frames one seat received (one JSON object
per line, or one JSON array), as the browser client's "save game record"
would keep them or as any WebSocket client can log them.  For every match in
the file whose last frame reveals the seed and salt (sent once the match is
over), the check is:

1. every deal's commitment, as published while the deal was played, equals
   ``sha256("paodekuai-deal/v1/{salt}/{seed}/{deal_no}")``;
2. in every frame, the seat's hand plus the cards it had played in that deal
   are exactly the 16 cards that ``seed`` deals to that seat.

It prints one line per deal and exits 0 when everything matches, 1 when
anything does not (saying what), 2 when the file cannot be used.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from server.fairness import commitment, dealt_hand

__all__ = ["main", "verify_frames"]


def _load(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8").strip()
    if text.startswith("["):
        frames: list[dict[str, Any]] = json.loads(text)
    else:
        frames = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [f for f in frames if f.get("type") == "state"]


def verify_frames(frames: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(lines of what was checked, lines of what did not match)."""
    checked: list[str] = []
    problems: list[str] = []
    matches: dict[int, list[dict[str, Any]]] = {}
    for frame in frames:
        matches.setdefault(frame["table"]["match_no"], []).append(frame)
    for match_no, seen in sorted(matches.items()):
        fairness = [f["table"].get("fairness") or {} for f in seen]
        reveal = next((x for x in reversed(fairness) if x.get("seed") is not None), None)
        if reveal is None:
            checked.append(f"match {match_no}: not over in this record (no seed revealed yet)")
            continue
        seed, salt = int(reveal["seed"]), str(reveal["salt"])
        published: dict[int, set[str]] = {}
        for info in fairness:
            for deal_no, value in enumerate(info.get("commitments", []), start=1):
                published.setdefault(deal_no, set()).add(value)
        for deal_no, values in sorted(published.items()):
            expected = commitment(seed, salt, deal_no)
            if values != {expected}:
                problems.append(
                    f"match {match_no} deal {deal_no}: published {sorted(values)}, "
                    f"but the revealed seed commits to {expected}"
                )
        hands_ok: dict[int, int] = {}
        for frame in seen:
            view = frame["view"]
            seat, deal_no = view["seat"], view["deal_no"]
            dealt = set(dealt_hand(view["rules"]["removed_ace"], seed, deal_no, seat))
            played = {c for m in view["moves"] if m["seat"] == seat for c in m.get("cards") or []}
            held = set(view["hand"]) | played
            if held != dealt:
                problems.append(
                    f"match {match_no} deal {deal_no} version {frame['version']}: seat {seat} "
                    f"held {sorted(held)} but the seed deals it {sorted(dealt)}"
                )
            else:
                hands_ok[deal_no] = hands_ok.get(deal_no, 0) + 1
        for deal_no in sorted(published):
            same = commitment(seed, salt, deal_no) in published[deal_no]
            checked.append(
                f"match {match_no} deal {deal_no}: commitment "
                f"{'matches' if same else 'DIFFERS'}, "
                f"hand checked in {hands_ok.get(deal_no, 0)} frame(s)"
            )
    return checked, problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m server.verify",
        description="Check a seat's recorded state frames against the revealed deal seeds.",
    )
    parser.add_argument("frames", type=Path, help="state frames, one JSON object per line")
    args = parser.parse_args(argv)
    try:
        frames = _load(args.frames)
    except (OSError, ValueError) as exc:
        print(f"cannot read {args.frames}: {exc}", file=sys.stderr)
        return 2
    if not frames:
        print(f"{args.frames} holds no state frames", file=sys.stderr)
        return 2
    try:
        checked, problems = verify_frames(frames)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"{args.frames} is not a record of state frames: {exc!r}", file=sys.stderr)
        return 2
    for line in checked:
        print(line)
    for line in problems:
        print(f"MISMATCH: {line}")
    if problems:
        return 1
    revealed = any("commitment" in line for line in checked)
    print("OK: every deal matches its commitment" if revealed else "nothing to check yet")
    return 0 if revealed else 2


if __name__ == "__main__":
    sys.exit(main())
