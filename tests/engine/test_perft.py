"""The reference positions of ``data/perft.jsonl`` through the real conformance CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from server.engine.conformance import solve

from . import oracle
from .perft_cases import HAND_CHECKED, build, load

REPO_ROOT = Path(__file__).resolve().parents[2]
INPUT_FIELDS = ("id", "rules", "hand", "table", "next_has_one", "first_play")


def _run_cli(lines: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "server.engine.conformance"],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=True,
    )
    assert done.stderr == ""
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_reference_file_covers_every_preset_kind_and_error() -> None:
    positions = load()
    assert len(positions) >= 150
    assert {p["rules"] for p in positions} == {"classic", "sixteen", "kawu"}
    kinds = set()
    for p in positions:
        if "plays" in p["expect"]:
            for text in p["expect"]["plays"]:
                kinds |= {r.kind for r in oracle.readings(oracle.rank_counts(text))}
    assert kinds == {"single", "pair", "pair_run", "straight", "trio_two", "airplane", "bomb"}
    assert sum("error" in p["expect"] for p in positions) >= 10
    assert sum(p["expect"].get("pass", False) for p in positions) >= 10


def test_reference_file_is_what_the_cases_and_oracle_give() -> None:
    # Rebuilding checks every hand-worked answer against the oracle and recomputes
    # the random ones: the checked-in file must be exactly that.
    assert load() == build()


def test_hand_checked_answers_are_in_the_file_unchanged() -> None:
    by_id = {p["id"]: p for p in load()}
    for case in HAND_CHECKED:
        if case["expect"] is not None:
            assert by_id[case["id"]]["expect"] == case["expect"], case["id"]


def test_cli_answers_every_reference_position_exactly_and_goes_on_after_errors() -> None:
    positions = load()
    lines = []
    for p in positions:
        lines.append(json.dumps({k: p[k] for k in INPUT_FIELDS}))
    # Garbage between positions must give an error line and not stop the tool.
    lines.insert(5, "this is not json")
    lines.insert(9, json.dumps([1, 2, 3]))
    answers = _run_cli(lines)
    assert len(answers) == len(positions) + 2
    assert answers[5]["error"]
    assert answers[9]["error"]
    answers = answers[:5] + answers[6:9] + answers[10:]
    for p, got in zip(positions, answers, strict=True):
        if "error" in p["expect"]:
            assert set(got) == {"id", "error"}, p["id"]
            assert got["id"] == p["id"]
            assert isinstance(got["error"], str)
            assert got["error"]
        else:
            assert got == {"id": p["id"], **p["expect"]}, p["why"]


def test_cli_echoes_any_json_id_and_skips_blank_lines() -> None:
    position: dict[str, Any] = {"rules": "classic", "hand": ["3S", "3H"], "table": ["AH"]}
    position.update(next_has_one=False, first_play=False)
    ids: list[Any] = [7, "x", None, [1, "a"], {"k": 2}, 1.5]
    lines = [json.dumps({**position, "id": i}) for i in ids]
    lines.insert(2, "")
    answers = _run_cli(lines)
    assert answers == [{"id": i, "plays": [], "pass": True} for i in ids]


def test_solve_gives_an_error_for_every_invalid_reference_position() -> None:
    invalid = [p for p in load() if "error" in p["expect"]]
    for p in invalid:
        got = solve({k: p[k] for k in INPUT_FIELDS})
        assert set(got) == {"id", "error"}, p["id"]
        assert got["id"] == p["id"]
