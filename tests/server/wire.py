"""Raw sockets for hostile-client tests: HTTP by hand and WebSocket frames by hand.

The ``websockets`` client is polite (it reads, it encodes valid UTF-8, it
answers pings); the attacks these tests reproduce are not, so they speak the
wire format themselves.  Every socket has a timeout; nothing here can hang.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import urllib.error
import urllib.request
from typing import Any

__all__ = [
    "RawWebSocket",
    "http_json",
    "open_tcp",
    "read_until_closed",
    "server_side_socket_open",
]

TIMEOUT = 10.0


def open_tcp(port: int, source: str = "127.0.0.1", *, rcvbuf: int | None = None) -> socket.socket:
    """A TCP connection to 127.0.0.1:``port`` from the loopback address ``source``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(TIMEOUT)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def read_until_closed(sock: socket.socket, timeout: float) -> bool:
    """Read and discard until the peer closes (True) or ``timeout`` passes (False)."""
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def http_json(
    method: str,
    url: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    *,
    data: bytes | None = None,
) -> tuple[int, Any]:
    """Status and decoded JSON body of one request (error statuses included)."""
    payload = data if data is not None else None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=payload, method=method, headers=headers or {})
    if body is not None and "Content-Type" not in (headers or {}):
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def server_side_socket_open(server_port: int, client_port: int) -> bool:
    """Whether the server still holds its end of the connection from ``client_port``."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as table:
                next(table)
                for line in table:
                    local, remote = line.split()[1:3]
                    if (
                        int(local.rsplit(":", 1)[1], 16) == server_port
                        and int(remote.rsplit(":", 1)[1], 16) == client_port
                    ):
                        return True
        except FileNotFoundError:
            continue
    return False


class RawWebSocket:
    """A WebSocket client that sends exactly the frames it is told to."""

    def __init__(
        self,
        port: int,
        *,
        origin: str | None = None,
        source: str = "127.0.0.1",
        rcvbuf: int | None = None,
        extensions: str | None = None,
        path: str = "/ws",
    ) -> None:
        self.sock = open_tcp(port, source, rcvbuf=rcvbuf)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
        if origin is not None:
            lines.append(f"Origin: {origin}")
        if extensions is not None:
            lines.append(f"Sec-WebSocket-Extensions: {extensions}")
        head = b""
        try:
            self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            while b"\r\n\r\n" not in head:
                chunk = self.sock.recv(1)
                if not chunk:
                    break
                head += chunk
        except OSError:
            self.sock.close()  # refused by the server: nothing left open here
            raise
        self.response_head = head.decode("latin-1")
        self.status = int(self.response_head.split(" ", 2)[1]) if head else 0
        self._buffer = b""

    @property
    def local_port(self) -> int:
        port: int = self.sock.getsockname()[1]
        return port

    def send_frame(self, payload: bytes, opcode: int = 1) -> None:
        mask = os.urandom(4)
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send_json(self, message: Any) -> None:
        self.send_frame(json.dumps(message).encode())

    def _read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            self._buffer += chunk
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def recv_frame(self) -> tuple[int, bytes]:
        """(opcode, payload) of the next frame from the server (never masked)."""
        first, second = self._read(2)
        size = second & 0x7F
        if size == 126:
            (size,) = struct.unpack("!H", self._read(2))
        elif size == 127:
            (size,) = struct.unpack("!Q", self._read(8))
        return first & 0x0F, self._read(size)

    def recv_json(self, kind: str | None = None) -> dict[str, Any]:
        """The next JSON message (of type ``kind``), skipping pings; ConnectionError on close."""
        while True:
            opcode, payload = self.recv_frame()
            if opcode == 8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                raise ConnectionError(f"closed with code {code}", code)
            if opcode != 1:
                continue
            message: dict[str, Any] = json.loads(payload)
            if kind is None or message["type"] == kind:
                return message

    def close_code(self) -> int | None:
        """Read until the server's close frame; its code (None if the TCP connection just ended)."""
        try:
            while True:
                opcode, payload = self.recv_frame()
                if opcode == 8:
                    return int(struct.unpack("!H", payload[:2])[0]) if payload else 1005
        except (ConnectionError, OSError):
            return None

    def close(self) -> None:
        self.sock.close()
