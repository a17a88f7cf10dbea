"""Operators can see it: /metrics in the Prometheus format, and JSON log lines."""

from __future__ import annotations

import json
import urllib.request
from typing import TYPE_CHECKING

from wire import RawWebSocket, http_json

if TYPE_CHECKING:
    from conftest import ServerFactory


def scrape(url: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def test_metrics_count_actions_refusals_sockets_and_latency(server_process: ServerFactory) -> None:
    srv = server_process()
    status, table = http_json("POST", f"{srv.url}/api/tables", {"seed": 4, "bot_speed_ms": 0})
    assert status == 201
    ws = RawWebSocket(srv.port)
    ws.send_json({"type": "join", "table": table["table"], "token": table["seats"][0]["token"]})
    state = ws.recv_json("state")
    while state["view"]["turn"] != 0:  # the bots play until it is the human's turn
        state = ws.recv_json("state")
    ws.send_frame(b"{not json")
    assert ws.recv_json("error")["code"] == "malformed_json"
    before = scrape(srv.url)
    assert before["pdk_open_game_sockets"] == 1
    assert before["pdk_live_tables"] == 1
    assert before['pdk_refusals_total{reason="malformed_json"}'] == 1
    assert before["pdk_open_connections"] >= 1
    assert before["process_open_fds"] > 0
    assert before['pdk_redis_latency_seconds_count{op="load"}'] >= 1
    # Bots played up to the human's turn; each bot move is an action.
    bot_moves = sum(
        v for k, v in before.items() if k.startswith("pdk_actions_total{") and 'by="bot"' in k
    )
    assert bot_moves == state["version"] > 0
    assert sum(v for k, v in before.items() if k.startswith("pdk_bot_decision_seconds_count")) > 0
    ws.close()


def test_json_log_format_writes_one_object_per_line(server_process: ServerFactory) -> None:
    srv = server_process(args=["--log-format", "json"])
    http_json("POST", f"{srv.url}/api/tables", {})
    srv.stop()
    lines = [line for line in srv.log_text().splitlines() if line.startswith("{")]
    entries = [json.loads(line) for line in lines]
    assert any(e["logger"] == "uvicorn.access" for e in entries)
    assert all({"time", "level", "logger", "message"} <= e.keys() for e in entries)
    # Only the test harness's own marker lines and the ready banner are not JSON.
    others = [
        line
        for line in srv.log_text().splitlines()
        if line and not line.startswith("{") and not line.startswith("---")
    ]
    assert all(line.startswith("Pao De Kuai is ready") for line in others), others
