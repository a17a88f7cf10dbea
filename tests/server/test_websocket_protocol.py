"""The game socket's own WebSocket protocol (server.websocket_protocol) on the wire:
fragments, pings, refused handshakes, against a real server process."""

from __future__ import annotations

import json
import struct
from typing import TYPE_CHECKING, Any

from wire import RawWebSocket, http_json, open_tcp, read_until_closed

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess


def create_table(srv: ServerProcess) -> dict[str, Any]:
    status, answer = http_json("POST", f"{srv.url}/api/tables", {"seed": 4, "bot_speed_ms": 0})
    assert status == 201, answer
    table: dict[str, Any] = answer
    return table


def send_raw_frame(ws: RawWebSocket, payload: bytes, opcode: int, fin: bool) -> None:
    """A masked frame with the given FIN bit (wire.RawWebSocket always sets it)."""
    header = struct.pack("!BB", (0x80 if fin else 0) | opcode, 0x80 | len(payload))
    mask = b"\x01\x02\x03\x04"
    ws.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def test_a_message_in_fragments_is_one_message_and_a_ping_gets_its_pong(
    server_process: ServerFactory,
) -> None:
    srv = server_process()
    table = create_table(srv)
    ws = RawWebSocket(srv.port)
    try:
        join = json.dumps(
            {"type": "join", "table": table["table"], "token": table["seats"][0]["token"]}
        ).encode()
        send_raw_frame(ws, join[:10], 0x1, fin=False)
        send_raw_frame(ws, join[10:30], 0x0, fin=False)
        send_raw_frame(ws, join[30:], 0x0, fin=True)
        assert ws.recv_json("state")["type"] == "state"
        send_raw_frame(ws, b"are you there", 0x9, fin=True)
        while True:
            opcode, payload = ws.recv_frame()
            if opcode == 0xA:
                break
        assert payload == b"are you there"
    finally:
        ws.close()


def test_a_handshake_the_protocol_refuses_is_an_http_error_not_a_socket(
    server_process: ServerFactory,
) -> None:
    srv = server_process()
    with open_tcp(srv.port) as sock:
        sock.sendall(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n"  # no Sec-WebSocket-Key
        )
        head = sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 400"), head
        assert read_until_closed(sock, 10)
    assert srv.healthy()
    assert "Traceback" not in srv.log_text()
