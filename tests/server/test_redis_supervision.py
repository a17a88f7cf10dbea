"""The embedded Redis heals itself: SIGKILL it mid-game and the game goes on.

A real ``paodekuai serve`` with its embedded redis-server; a player plays over a
real WebSocket, the test kills the redis-server process (not the server), and
the player reconnects and finishes the deal.  Every version the player saw
acknowledged is still in the stored log afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import redis
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from wire import http_json

from tests.conftest import SCRIPTED_PACE

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

GUARD = 30.0


def redis_pid(data_dir: Path) -> int:
    return int((data_dir / "redis.pid").read_text().strip())


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Player:
    """One human seat that reconnects whenever its socket is closed."""

    def __init__(self, srv: ServerProcess, table: str, token: str) -> None:
        self.srv = srv
        self.table = table
        self.token = token
        self.acknowledged = 0  # highest version the server told us about
        self.reconnects = 0
        self.ws: ClientConnection | None = None
        self._stack = contextlib.ExitStack()

    def state(self) -> dict[str, Any]:
        """The next state frame, reconnecting (with a pause) until one arrives."""
        deadline = time.monotonic() + GUARD
        while time.monotonic() < deadline:
            try:
                if self.ws is None:
                    self._stack = contextlib.ExitStack()
                    self.ws = self._stack.enter_context(connect(self.srv.ws_url, open_timeout=5))
                    self.ws.send(
                        json.dumps({"type": "join", "table": self.table, "token": self.token})
                    )
                while True:
                    frame = json.loads(self.ws.recv(timeout=GUARD))
                    if frame["type"] == "state":
                        assert frame["version"] >= self.acknowledged, "the table went back"
                        self.acknowledged = frame["version"]
                        return frame
            except (ConnectionClosed, OSError, TimeoutError):
                self.close()
                self.reconnects += 1
                time.sleep(0.2)
        raise AssertionError("no state within the guard time")

    def act(self, frame: dict[str, Any]) -> None:
        if self.ws is None:
            return
        view = frame["view"]
        message: dict[str, Any] = {"type": "pass", "version": frame["version"]}
        if view["hints"]:
            message = {"type": "play", "version": frame["version"], "cards": view["hints"][0]}
        try:
            self.ws.send(json.dumps(message))
        except ConnectionClosed:
            self.close()

    def close(self) -> None:
        self._stack.close()
        self.ws = None


def test_killing_the_embedded_redis_mid_game_loses_nothing_and_the_game_goes_on(
    server_process: ServerFactory, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    srv = server_process(embedded=True, data_dir=data_dir, args=SCRIPTED_PACE)
    status, table = http_json("POST", f"{srv.url}/api/tables", {"seed": 4, "bot_speed_ms": 0})
    assert status == 201
    player = Player(srv, table["table"], table["seats"][0]["token"])
    kills = 0
    try:
        frame = player.state()
        while frame["view"]["result"] is None:
            if frame["view"]["turn"] == frame["view"]["seat"]:
                if kills < 2 and frame["version"] >= 2 + 6 * kills:
                    first = redis_pid(data_dir)
                    os.kill(first, signal.SIGKILL)
                    kills += 1
                    if kills == 2:
                        # Act at once, while Redis is down: the write is retried or the
                        # room closes and the player reconnects; either way nothing is lost.
                        time.sleep(0.05)
                        player.act(frame)
                    # The supervisor restarts it from its AOF, and /healthz recovers.
                    wait_for(
                        lambda first=first: (
                            (data_dir / "redis.pid").exists()
                            and redis_pid(data_dir) != first
                            and srv.healthy()
                        ),
                        GUARD,
                        "the embedded redis to come back",
                    )
                    if kills == 2:
                        frame = player.state()
                        continue
                player.act(frame)
            frame = player.state()
    finally:
        player.close()
    assert kills == 2
    assert srv.log_text().count("embedded redis restarted") == 2
    # Everything the player saw acknowledged is in the stored log.
    client = redis.Redis(unix_socket_path=str(data_dir / "redis.sock"))
    try:
        stored = client.llen(f"pdk:{{{table['table']}}}:log")
    finally:
        client.close()
    assert stored >= player.acknowledged
    metrics = srv_metrics(srv)
    assert "pdk_redis_restarts_total 2.0" in metrics


def srv_metrics(srv: ServerProcess) -> str:
    import urllib.request

    with urllib.request.urlopen(f"{srv.url}/metrics", timeout=10) as response:
        text: str = response.read().decode()
        return text
