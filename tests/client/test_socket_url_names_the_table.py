"""The game socket's URL names its table, so a proxy in front of several replicas can
send every socket of a table to the process that runs it (deploy/nginx.conf hashes on it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from client_helpers import Live, wait_joined

pytestmark = pytest.mark.browser

RECORD_URLS_JS = """(() => {
  window.socketUrls = [];
  const Original = WebSocket;
  window.WebSocket = function (url, protocols) {
    window.socketUrls.push(String(url));
    return new Original(url, protocols);
  };
  window.WebSocket.prototype = Original.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
})()"""


def test_the_game_socket_url_carries_the_table_id_as_the_table_query_argument(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=3, bot_speed_ms=0)
    page = new_page()
    page.context.add_init_script(RECORD_URLS_JS)
    page.goto(live.seat_url(seat))
    joined = wait_joined(page)
    urls: list[str] = page.evaluate("window.socketUrls")
    assert urls, "the page opened no socket through the recorder"
    for url in urls:
        parts = urlsplit(url)
        assert parts.path == "/ws"
        assert parse_qs(parts.query) == {"table": [seat.table]}
    assert joined["table"]["id"] == seat.table
