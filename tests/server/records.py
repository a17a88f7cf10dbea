"""A seat's game record, as a client keeps it: every frame it received and every client
seed it sent (tests of ``server.fairness`` and ``server.verify`` share it)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wire import RawWebSocket, http_json

from server.protocol import CloseCode

__all__ = ["RecordingSeat", "create_and_play", "play_match", "run_verify"]

REPO_ROOT = Path(__file__).resolve().parents[2]
# The pause before joining again after close 4503 (a backoff, not a wait for an event).
RETRY_SECONDS = 0.2


Frame = dict[str, Any]


class RecordingSeat:
    """One seat's socket that plays (first hint, or pass; deals on) and keeps the record.

    With ``seed_rng`` it answers every published upcoming commitment with a client seed
    drawn from it, as the browser does (once per commitment, across reconnections), and
    ``first`` (the create answer's commitment, for a table created with ``sends_seeds``)
    right after its join."""

    def __init__(
        self,
        port: int,
        table: str,
        token: str,
        *,
        seed_rng: random.Random | None = None,
        record: list[Frame] | None = None,
        first: str | None = None,
    ) -> None:
        self.record: list[Frame] = [] if record is None else record
        self.seed_rng = seed_rng
        self.answered: set[str] = set()
        self.acted = -1
        self.join = (port, table, token)
        self.ws = RawWebSocket(port)
        self.ws.send_json({"type": "join", "table": table, "token": token})
        if first is not None:
            self._send_seed(first)

    def reconnect(self, port: int, table: str, token: str) -> None:
        """A new socket for the same seat (the server restarted), the record continued."""
        self.ws.close()
        self.acted = -1
        self.join = (port, table, token)
        self.ws = RawWebSocket(port)
        self.ws.send_json({"type": "join", "table": table, "token": token})

    def _answer(self, frame: Frame) -> None:
        upcoming = (frame["table"].get("fairness") or {}).get("next")
        if self.seed_rng is None or not upcoming or upcoming["commitment"] in self.answered:
            return
        self._send_seed(upcoming["commitment"])

    def _send_seed(self, commitment: str) -> None:
        assert self.seed_rng is not None, "a seat that sends seeds draws them from seed_rng"
        self.answered.add(commitment)
        sent = {
            "type": "entropy",
            "commitment": commitment,
            "seed": f"{self.seed_rng.getrandbits(128):032x}",
        }
        self.ws.send_json(sent)
        self.record.append(sent)

    def play(self, until: Callable[[Frame], bool] | None = None) -> Frame:
        """Play on until a state frame satisfies ``until`` (not acted on) or the match is
        over; that frame."""
        while True:
            try:
                frame = self.ws.recv_json()
            except ConnectionError as exc:
                # 4503: the table's last owner is gone and its lease not yet expired (a
                # restarted server): join again, after a pause as a browser would.
                if exc.args[1:] != (CloseCode.TABLE_UNAVAILABLE,):
                    raise
                time.sleep(RETRY_SECONDS)
                self.reconnect(*self.join)
                continue
            if frame["type"] not in ("state", "error"):
                continue
            self.record.append(frame)
            if frame["type"] == "error":
                continue
            self._answer(frame)
            view = frame["view"]
            if view["match_over"] or (until is not None and until(frame)):
                return frame
            if view["result"] is not None and frame["version"] > self.acted:
                self.acted = frame["version"]
                self.ws.send_json({"type": "next_deal", "version": frame["version"]})
            elif view["turn"] == view["seat"] and frame["version"] > self.acted:
                self.acted = frame["version"]
                if view["hints"]:
                    move = {"type": "play", "version": frame["version"], "cards": view["hints"][0]}
                else:
                    move = {"type": "pass", "version": frame["version"]}
                self.ws.send_json(move)

    def close(self) -> None:
        self.ws.close()


def play_match(
    port: int,
    table: str,
    token: str,
    *,
    seed_rng: random.Random | None = None,
    first: str | None = None,
) -> list[Frame]:
    """Seat ``token`` plays until the match is over; its record (state and error frames
    received, entropy messages sent)."""
    seat = RecordingSeat(port, table, token, seed_rng=seed_rng, first=first)
    try:
        seat.play()
    finally:
        seat.close()
    return seat.record


def create_and_play(
    url: str, port: int, seed_rng: random.Random | None = None, **body: Any
) -> list[dict[str, Any]]:
    """Create a table (seat 0 human, bots answering at once) and play one match on seat 0
    (with ``sends_seeds``, its seed for the first deal sent right after the join)."""
    status, table = http_json("POST", f"{url}/api/tables", {"bot_speed_ms": 0, **body})
    assert status == 201, table
    first = table["commitment"] if body.get("sends_seeds") else None
    token = table["seats"][0]["token"]
    return play_match(port, table["table"], token, seed_rng=seed_rng, first=first)


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
