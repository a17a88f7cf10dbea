"""A seat's game record, as a client keeps it: every frame it received and every client
seed it sent (tests of ``server.fairness`` and ``server.verify`` share it)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from wire import RawWebSocket, http_json

__all__ = ["FAST", "create_and_play", "play_match", "run_verify"]

REPO_ROOT = Path(__file__).resolve().parents[2]
# These scripted seats act as fast as the bots answer, far above a person's pace.
FAST = ["--actions-per-second", "1000"]


def play_match(
    port: int,
    table: str,
    token: str,
    *,
    seed_rng: random.Random | None = None,
    record: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Seat ``token`` plays its first hint (or passes), deals on, until the match is over.

    With ``seed_rng`` it answers every published upcoming commitment with a client
    seed drawn from it, as the browser does.  Returns the record (state and error
    frames received, entropy messages sent), appended to ``record`` if given.
    """
    lines: list[dict[str, Any]] = [] if record is None else record
    ws = RawWebSocket(port)
    ws.send_json({"type": "join", "table": table, "token": token})
    acted = -1
    answered: set[str] = set()
    try:
        while True:
            frame = ws.recv_json()
            if frame["type"] not in ("state", "error"):
                continue
            lines.append(frame)
            if frame["type"] == "error":
                continue
            view = frame["view"]
            upcoming = (frame["table"].get("fairness") or {}).get("next")
            if seed_rng is not None and upcoming and upcoming["commitment"] not in answered:
                answered.add(upcoming["commitment"])
                sent = {
                    "type": "entropy",
                    "commitment": upcoming["commitment"],
                    "seed": f"{seed_rng.getrandbits(128):032x}",
                }
                ws.send_json(sent)
                lines.append(sent)
            if view["match_over"]:
                return lines
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


def create_and_play(
    url: str, port: int, seed_rng: random.Random | None = None, **body: Any
) -> list[dict[str, Any]]:
    """Create a table (seat 0 human, bots answering at once) and play one match on seat 0."""
    status, table = http_json("POST", f"{url}/api/tables", {"bot_speed_ms": 0, **body})
    assert status == 201, table
    return play_match(port, table["table"], table["seats"][0]["token"], seed_rng=seed_rng)


def run_verify(tmp_path: Path, lines: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    """``python -m server.verify`` on ``lines`` written as a JSON-lines record."""
    path = tmp_path / "record.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    return subprocess.run(
        [sys.executable, "-m", "server.verify", str(path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
