"""Provably fair shuffles: commitments while the match is played, the seed once it is over,
and ``python -m server.verify`` confirms (or refutes) a seat's recorded frames."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wire import RawWebSocket, http_json

from server.fairness import commitment, dealt_hand

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

REPO_ROOT = Path(__file__).resolve().parents[2]
# These scripted seats act as fast as the bots answer, far above a person's pace.
FAST = ["--actions-per-second", "1000"]


def play_match(srv: ServerProcess, **body: Any) -> list[dict[str, Any]]:
    """Seat 0 plays its first hint (or passes) until the match is over; its state frames."""
    status, table = http_json("POST", f"{srv.url}/api/tables", {"bot_speed_ms": 0, **body})
    assert status == 201, table
    ws = RawWebSocket(srv.port)
    ws.send_json({"type": "join", "table": table["table"], "token": table["seats"][0]["token"]})
    frames: list[dict[str, Any]] = []
    acted = -1
    try:
        while True:
            frame = ws.recv_json("state")
            frames.append(frame)
            view = frame["view"]
            if view["match_over"]:
                return frames
            if view["result"] is not None and frame["version"] > acted:
                acted = frame["version"]
                ws.send_json({"type": "next_deal", "version": frame["version"]})
            elif view["turn"] == view["seat"] and frame["version"] > acted:
                acted = frame["version"]
                if view["hints"]:
                    move = {"type": "play", "version": frame["version"], "cards": view["hints"][0]}
                else:
                    move = {"type": "pass", "version": frame["version"]}
                ws.send_json(move)
    finally:
        ws.close()


def verify(tmp_path: Path, frames: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    record = tmp_path / "frames.jsonl"
    record.write_text("\n".join(json.dumps(f) for f in frames))
    return subprocess.run(
        [sys.executable, "-m", "server.verify", str(record)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_each_deal_is_committed_before_play_and_the_seed_revealed_after_the_match(
    server_process: ServerFactory, tmp_path: Path
) -> None:
    srv = server_process(args=FAST)
    frames = play_match(srv, deals=5)
    first = frames[0]["table"]["fairness"]
    assert len(first["commitments"]) == 1
    assert first["seed"] is None
    assert first["salt"] is None
    for frame in frames[:-1]:
        fairness = frame["table"]["fairness"]
        assert fairness["seed"] is None, "the seed showed before the match was over"
        assert len(fairness["commitments"]) == frame["view"]["deal_no"]
    last = frames[-1]["table"]["fairness"]
    assert len(last["commitments"]) == 5
    for deal_no, published in enumerate(last["commitments"], start=1):
        assert published == commitment(last["seed"], last["salt"], deal_no)
    # The first frame's hand is what the revealed seed dealt seat 0.
    removed_ace = frames[0]["view"]["rules"]["removed_ace"]
    assert sorted(frames[0]["view"]["hand"]) == sorted(dealt_hand(removed_ace, last["seed"], 1, 0))

    checked = verify(tmp_path, frames)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "OK" in checked.stdout
    assert checked.stdout.count("commitment matches") == 5


def test_the_verifier_catches_a_hand_or_a_commitment_that_does_not_match(
    server_process: ServerFactory, tmp_path: Path
) -> None:
    srv = server_process(args=FAST)
    frames = play_match(srv)
    swapped = json.loads(json.dumps(frames))
    hand = swapped[0]["view"]["hand"]
    hand[0] = next(c for c in ("3S", "3H", "3D", "3C", "4S", "4H") if c not in hand)
    refused = verify(tmp_path, swapped)
    assert refused.returncode == 1
    assert "MISMATCH" in refused.stdout
    forged = json.loads(json.dumps(frames))
    forged[0]["table"]["fairness"]["commitments"][0] = "0" * 64
    refused = verify(tmp_path, forged)
    assert refused.returncode == 1
    assert "published" in refused.stdout
