"""No token material in the logs (server.log_redaction), even at --log-level debug."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING

import pytest
import websockets

from server.log_redaction import REDACTED, RedactTokens, redact

if TYPE_CHECKING:
    from conftest import ServerFactory

TOKEN = "Zk3_pQ9-aB7cD1eF2gH3iJ4kL5mN6oP7"


@pytest.mark.parametrize(
    "text",
    [
        # The websockets library's frame dump, cut at 75 characters.
        f'< TEXT \'{{"type":"join","table":"abcdefghij","token":"{TOKEN[:21]}...',
        f'> TEXT \'{{"type":"invite","seat":1,"token":"{TOKEN}"}}\' [60 bytes]',
        f"/#table=abcdefghij&token={TOKEN}",
        f"/#table=abcdefghij&watch={TOKEN}",
        f"Authorization: Bearer {TOKEN}",
        f"{{'token': '{TOKEN}'}}",
    ],
)
def test_every_shape_a_token_travels_in_is_redacted(text: str) -> None:
    cleaned = redact(text)
    assert TOKEN[:6] not in cleaned
    assert REDACTED in cleaned


def test_the_filter_redacts_the_arguments_too() -> None:
    record = logging.LogRecord("x", logging.DEBUG, "f", 1, "< %s", (f'"token":"{TOKEN}"',), None)
    assert RedactTokens().filter(record)
    assert TOKEN[:6] not in record.getMessage()


async def test_a_debug_log_of_a_whole_game_socket_holds_no_token(
    server_process: ServerFactory,
) -> None:
    server = server_process(args=["--log-level", "debug"])
    created = await asyncio.to_thread(_create, server.url)
    token = created["seats"][0]["token"]
    async with websockets.connect(server.ws_url) as ws:
        await ws.send(json.dumps({"type": "join", "table": created["table"], "token": token}))
        while json.loads(await asyncio.wait_for(ws.recv(), 30))["type"] != "state":
            pass
        await ws.send(json.dumps({"type": "ping"}))
        while json.loads(await asyncio.wait_for(ws.recv(), 30))["type"] != "pong":
            pass
    log = server.log_text()
    assert "DEBUG" in log  # the level really was debug
    assert "bytes, not logged]" in log  # and frames were logged, without their text
    for start in range(len(token) - 6):
        assert token[start : start + 6] not in log


def _create(url: str) -> dict[str, object]:
    import urllib.request

    request = urllib.request.Request(
        f"{url}/api/tables", data=b"{}", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        created: dict[str, object] = json.loads(response.read())
        return created
