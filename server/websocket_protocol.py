"""The game socket's WebSocket protocol: websockets' public sans-I/O ``ServerProtocol``
(bytes in, events out) served to the ASGI app, in uvicorn's ``ws=`` slot.

uvicorn's own sans-I/O protocol is private and its state has changed shape in
patch releases; this one is ours, built only on websockets' public API and on
what uvicorn hands every ``ws=`` class: ``config`` (the loaded app, root path,
frame size, ping interval and timeout), ``server_state`` (the set of
connections its graceful shutdown walks, calling ``shutdown``, and the set of
tasks it waits for) and ``app_state``.  The bounds a public server needs are
added by ``server.transport``'s subclass.
"""

from __future__ import annotations

import asyncio
import logging
import os
from http import HTTPStatus
from typing import Any, Literal, cast
from urllib.parse import unquote

from websockets.exceptions import InvalidState
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol

from server.inbox import Inbox

__all__ = ["ClientDisconnected", "WebSocketProtocol"]

log = logging.getLogger(__name__)


class ClientDisconnected(OSError):
    """ASGI ``send`` after the client went away."""


def _addr(info: Any) -> tuple[str, int] | None:
    if isinstance(info, tuple) and len(info) >= 2:
        return str(info[0]), int(info[1])
    return None


class WebSocketProtocol(asyncio.Protocol):
    """One game socket from its upgrade request to its close, as an ASGI ``websocket``."""

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        if not config.loaded:
            config.load()
        self.app = config.loaded_app
        self.loop = _loop or asyncio.get_event_loop()
        self.root_path: str = config.root_path
        self.app_state = app_state
        self.connections: set[Any] = server_state.connections
        self.tasks: set[asyncio.Task[None]] = server_state.tasks
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.server: tuple[str, int] | None = None
        self.client: tuple[str, int] | None = None
        self.scope: dict[str, Any] = {}
        self.request: Request | None = None
        self.response: Response | None = None
        # One message at a time: reading pauses until the app has taken it.
        self.queue: Inbox[dict[str, Any]] = Inbox()
        self.handshake_initiated = False
        self.handshake_complete = False
        self.close_sent = False
        self.disconnected = False
        self.close_timer: asyncio.TimerHandle | None = None
        self.close_timeout = 10.0
        # Kept for ``DirectText``: this protocol never answers the handshake with a body.
        self.initial_response: tuple[int, list[tuple[str, str]], bytes] | None = None
        # No extensions: permessage-deflate would let a client make us inflate far more
        # than it sent.
        self.conn = ServerProtocol(extensions=[], max_size=config.ws_max_size, logger=log)
        self.read_paused = False
        self.writable = asyncio.Event()
        self.writable.set()
        self.ping_interval: float | None = config.ws_ping_interval
        self.ping_timeout: float | None = config.ws_ping_timeout
        self.ping_timer: asyncio.TimerHandle | None = None
        self.pong_timer: asyncio.TimerHandle | None = None
        self.pending_ping: bytes | None = None
        self.frames: list[bytes] = []
        self.curr_msg_data_type: Literal["text", "bytes"] = "bytes"

    # --- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Not an isinstance check: uvloop's transports do not subclass asyncio's.
        self.transport = cast(asyncio.Transport, transport)
        self.connections.add(self)
        self.server = _addr(transport.get_extra_info("sockname"))
        self.client = _addr(transport.get_extra_info("peername"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.stop_keepalive()
        code = 1005 if self.handshake_complete else 1006
        self.queue.put_nowait({"type": "websocket.disconnect", "code": code})
        self.connections.discard(self)
        self.handshake_complete = True
        self.disconnected = True
        # A send waiting for the buffer to drain must not wait forever now.
        self.writable.set()
        self._cancel_close_timer()
        if exc is None:
            self.transport.close()

    def _cancel_close_timer(self) -> bool:
        """Stop waiting for the peer's close frame; False if nothing was waiting."""
        if self.close_timer is None:
            return False
        self.close_timer.cancel()
        self.close_timer = None
        return True

    def eof_received(self) -> None:
        pass

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    def data_received(self, data: bytes) -> None:
        self.conn.receive_data(data)
        if self.conn.parser_exc is not None:
            self.handle_parser_exception()
            return
        for event in self.conn.events_received():
            if isinstance(event, Request):
                self.handle_connect(event)
            elif isinstance(event, Frame):
                self._handle_frame(event)

    # --- uvicorn's graceful shutdown -------------------------------------------------

    def shutdown(self) -> None:
        self.stop_keepalive()
        if self.close_sent:
            self._cancel_close_timer()
            self.transport.close()
            return
        if self.handshake_complete:
            self.queue.put_nowait({"type": "websocket.disconnect", "code": 1012})
            self.conn.send_close(1012)
            self._flush()
        else:
            self._reject(500)
        self.transport.close()

    # --- events ----------------------------------------------------------------------

    def handle_connect(self, event: Request) -> None:
        self.request = event
        self.response = self.conn.accept(event)
        self.handshake_initiated = True
        if self.response.status_code != 101:
            self.handshake_complete = self.close_sent = True
            self.conn.send_response(self.response)
            self._flush()
            self.transport.close()
            return
        raw_path, _, query = event.path.partition("?")
        subprotocols = [
            token.strip()
            for header in event.headers.get_all("Sec-WebSocket-Protocol")
            for token in header.split(",")
        ]
        self.scope = {
            "type": "websocket",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "scheme": "ws",
            "server": self.server,
            "client": self.client,
            "root_path": self.root_path,
            "path": self.root_path + unquote(raw_path),
            "raw_path": (self.root_path + raw_path).encode("ascii"),
            "query_string": query.encode("ascii"),
            "headers": [
                (name.lower().encode("latin-1"), value.encode("latin-1", "surrogateescape"))
                for name, value in event.headers.raw_items()
            ],
            "subprotocols": subprotocols,
            "state": self.app_state.copy(),
            "extensions": {},
        }
        self.queue.put_nowait({"type": "websocket.connect"})
        task = self.loop.create_task(self.run_asgi())
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)

    def _handle_frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        if opcode is Opcode.TEXT or opcode is Opcode.BINARY:
            self.curr_msg_data_type = "text" if opcode is Opcode.TEXT else "bytes"
            self.frames = [bytes(frame.data)]
            if frame.fin:
                self.send_receive_event_to_app()
        elif opcode is Opcode.CONT:
            self.frames.append(bytes(frame.data))
            if frame.fin:
                self.send_receive_event_to_app()
        elif opcode is Opcode.PING:
            self._flush()  # the protocol queued the pong
        elif opcode is Opcode.PONG:
            if self.pending_ping is not None and bytes(frame.data) == self.pending_ping:
                self.pending_ping = None
                if self.pong_timer is not None:
                    self.pong_timer.cancel()
                    self.pong_timer = None
                self._schedule_ping()
        elif opcode is Opcode.CLOSE:
            self._handle_close()

    def _handle_close(self) -> None:
        if self.close_sent:
            # The peer answered our close frame: the closing handshake is done.
            if self._cancel_close_timer():
                self.transport.close()
            return
        if not self.transport.is_closing():
            received = self.conn.close_rcvd
            code, reason = (received.code, received.reason) if received else (1005, "")
            self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
            self._flush()  # the protocol queued the echo
            self.transport.close()

    def handle_parser_exception(self) -> None:
        close = self.conn.close_sent
        code, reason = (close.code, close.reason) if close is not None else (1002, "")
        self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
        self._flush()
        self.close_sent = True
        self.transport.close()

    def send_receive_event_to_app(self) -> None:
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        if self.close_sent:
            return  # past our close frame: read and dropped until the peer's
        if self.curr_msg_data_type == "text":
            self.queue.put_nowait({"type": "websocket.receive", "text": data.decode()})
        else:
            self.queue.put_nowait({"type": "websocket.receive", "bytes": data})
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

    # --- keep-alive pings ------------------------------------------------------------

    def start_keepalive(self) -> None:
        self._schedule_ping()

    def stop_keepalive(self) -> None:
        for timer in (self.ping_timer, self.pong_timer):
            if timer is not None:
                timer.cancel()
        self.ping_timer = self.pong_timer = None
        self.pending_ping = None

    def _schedule_ping(self) -> None:
        if self.ping_interval:
            self.ping_timer = self.loop.call_later(self.ping_interval, self._ping)

    def _ping(self) -> None:
        self.ping_timer = None
        if self.close_sent or self.transport.is_closing():
            return
        self.pending_ping = os.urandom(4)
        self.conn.send_ping(self.pending_ping)
        self._flush()
        if self.ping_timeout:
            self.pong_timer = self.loop.call_later(self.ping_timeout, self._pong_missing)
        else:
            self._schedule_ping()

    def _pong_missing(self) -> None:
        self.pong_timer = None
        if self.close_sent or self.transport.is_closing():
            return
        self.conn.fail(1011, "keepalive ping timeout")
        self._flush()
        self.close_sent = True
        self.transport.close()

    # --- ASGI ------------------------------------------------------------------------

    async def run_asgi(self) -> None:
        try:
            await self.app(self.scope, self.receive, self.send)
        except ClientDisconnected:
            pass
        except BaseException:
            log.exception("Exception in ASGI application")
            self._reject(500)
        else:
            if not self.handshake_complete:
                log.error("the app returned without accepting or refusing the WebSocket")
                self._reject(500)
        if self.close_timer is None:
            self.transport.close()

    def _reject(self, status: int) -> None:
        if self.handshake_complete:
            return
        self.conn.send_response(self.conn.reject(status, HTTPStatus(status).phrase))
        self._flush()
        self.handshake_complete = self.close_sent = True

    def _flush(self) -> None:
        output = self.conn.data_to_send()
        if output:
            self.transport.write(b"".join(output))

    async def receive(self) -> dict[str, Any]:
        message = await self.queue.get()
        if self.read_paused and self.queue.empty():
            self.read_paused = False
            self.transport.resume_reading()
        return message

    async def send(self, message: dict[str, Any]) -> None:
        await self.writable.wait()
        if self.disconnected:
            raise ClientDisconnected
        kind = message["type"]
        if not self.handshake_complete:
            if kind == "websocket.accept":
                assert self.response is not None
                headers = [
                    (name.decode("latin-1"), value.decode("latin-1"))
                    for name, value in message.get("headers", [])
                ]
                if message.get("subprotocol"):
                    headers.append(("Sec-WebSocket-Protocol", message["subprotocol"]))
                self.response.headers.update(headers)
                if not self.transport.is_closing():
                    self.handshake_complete = True
                    self.conn.send_response(self.response)
                    self._flush()
                    self.start_keepalive()
            elif kind == "websocket.close":
                # Refused before the handshake: an HTTP 403, no socket.
                self.queue.put_nowait({"type": "websocket.disconnect", "code": 1006})
                self._reject(403)
                self.transport.close()
            else:
                raise RuntimeError(f"expected websocket.accept or websocket.close, not {kind!r}")
            return
        if self.close_sent:
            raise RuntimeError(f"unexpected {kind!r} after websocket.close")
        try:
            if kind == "websocket.send":
                if message.get("bytes") is not None:
                    self.conn.send_binary(message["bytes"])
                elif message.get("text") is not None:
                    self.conn.send_text(message["text"].encode())
                self._flush()
            elif kind == "websocket.close":
                if not self.transport.is_closing():
                    code = message.get("code", 1000)
                    reason = message.get("reason", "") or ""
                    self.queue.put_nowait(
                        {"type": "websocket.disconnect", "code": code, "reason": reason}
                    )
                    self.conn.send_close(code, reason)
                    self._flush()
                    self.close_sent = True
                    if self.read_paused:
                        self.read_paused = False
                        self.transport.resume_reading()
                    self.close_timer = self.loop.call_later(
                        self.close_timeout, self.transport.close
                    )
            else:
                raise RuntimeError(f"expected websocket.send or websocket.close, not {kind!r}")
        except InvalidState:
            raise ClientDisconnected from None
