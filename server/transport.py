"""The TCP and WebSocket layer under the app: what one client can make us hold.

uvicorn's HTTP protocol (h11) and our WebSocket protocol
(``server.websocket_protocol``, on websockets' public sans-I/O API) do the
parsing; the subclasses here add the bounds a public server needs:

- **Connection caps** (``server.connection_guard``).  At most
  ``max_connections`` open TCP connections, and ``max_connections_per_client``
  from one address.  When the total is full, a connection of an address that
  holds more than the newcomer's is closed to make room (unjoined game sockets
  first, then idle HTTP, then seated sockets of the address holding the most),
  so no handful of addresses can lock out ``/healthz`` and honest players.
  The total is lowered to fit the process's file-descriptor limit
  (``server.connection_limits``).
- **Request deadline.**  A connection has ``request_timeout_seconds`` to send a
  whole request from the moment it is opened or its last response was sent;
  slowloris trickles and silent sockets are closed then.  Idle keep-alives are
  closed after ``keepalive_timeout_seconds`` (uvicorn's timer).
- **Drain deadline.**  A socket whose output stays above the transport's high
  water mark for ``send_timeout_seconds`` (a client that does not read) is
  aborted: its buffers are freed at once, no close handshake is waited for.
  Kernel send buffers are ``send_buffer_bytes``, so a non-reader holds little.
- **WebSocket frames** are limited to ``max_frame_bytes`` by the transport and
  permessage-deflate is not offered: a compressed frame would let a client
  make us inflate far more than it sent.  A refused frame gets a close frame
  with the reason (1009 for size) and the usual close handshake, bounded by
  ``WS_CLOSE_TIMEOUT``, rather than a TCP reset that could hide the reason.
- **Invalid UTF-8** in a text frame reaches the app as bytes, which the
  decoder refuses as malformed JSON; it is logged once per connection.

The game socket's fast paths live in ``server.fast_paths``, the client address
behind proxies in ``server.proxies``; their names are re-exported here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
import time
from collections.abc import MutableMapping
from typing import Any, cast

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from websockets.protocol import State

from server import metrics
from server.config import Settings
from server.connection_guard import ConnectionGuard
from server.connection_limits import LISTEN_BACKLOG, Limits, raise_fd_limit
from server.fast_paths import (
    DirectReceive,
    DirectText,
    FrameSink,
    FrameTaker,
    frame_taker,
    text_sender,
)
from server.proxies import TrustedProxies, client_address
from server.websocket_protocol import WebSocketProtocol

__all__ = [
    "SEATED_EXTENSION",
    "DirectReceive",
    "DirectText",
    "FrameSink",
    "FrameTaker",
    "Limits",
    "TrustedProxies",
    "client_address",
    "frame_taker",
    "mark_seated",
    "protocol_classes",
    "raise_fd_limit",
    "text_sender",
    "uvicorn_config",
]

log = logging.getLogger(__name__)

# Seconds a closing WebSocket waits for the peer's close frame before the TCP close.
WS_CLOSE_TIMEOUT = 2.0
# The ASGI scope extension (``scope["extensions"]``) through which the session says
# its socket has joined a table: the guard then counts it as seated.
SEATED_EXTENSION = "paodekuai.seated"
# "Try again later": a seated socket closed to make room for a newcomer.
_EVICTED = 1013


def mark_seated(scope: MutableMapping[str, Any], table: str) -> None:
    """Tell the transport that the game socket of ``scope`` joined ``table`` (nothing
    under another server)."""
    seated = (scope.get("extensions") or {}).get(SEATED_EXTENSION)
    if seated is not None:
        seated(table)


def _reset(transport: asyncio.BaseTransport) -> None:
    """Drop the connection now: RST, not FIN, so the kernel frees its buffers too."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            # Linger 0: close() discards unsent data instead of keeping an orphan around.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    # Not an isinstance check: uvloop's transports do not subclass asyncio's.
    cast(asyncio.WriteTransport, transport).abort()


def _set_send_buffer(transport: asyncio.BaseTransport, size: int) -> None:
    sock = transport.get_extra_info("socket")
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)


class _DrainDeadline:
    """Aborts a transport whose writes stay paused (peer not reading) for too long."""

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float) -> None:
        self._loop = loop
        self._seconds = seconds
        self._timer: asyncio.TimerHandle | None = None

    def paused(self, transport: asyncio.BaseTransport) -> None:
        if self._timer is None:
            self._timer = self._loop.call_later(self._seconds, self._abort, transport)

    def resumed(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _abort(self, transport: asyncio.BaseTransport) -> None:
        self._timer = None
        metrics.rate_limited("send_timeout")
        log.info("aborting a connection that has not read its data for %.0fs", self._seconds)
        _reset(transport)


class _DrainOrAbort(asyncio.Protocol):
    """Mixin for a uvicorn protocol: output that stays paused too long aborts the socket."""

    transport: asyncio.Transport
    _drain: _DrainDeadline | None = None

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._drain is not None:
            self._drain.paused(self.transport)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._drain is not None:
            self._drain.resumed()


def protocol_classes(limits: Limits) -> tuple[type[asyncio.Protocol], type[asyncio.Protocol]]:
    """The HTTP and WebSocket protocol classes for uvicorn, sharing one guard."""
    guard = ConnectionGuard(
        limits.max_connections,
        limits.max_connections_per_client,
        limits.proxies.trusts,
        time.monotonic,
    )
    metrics.track(open_connections=lambda: len(guard))

    class GuardedHTTP(_DrainOrAbort, H11Protocol):
        _request_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            host = self.client[0] if self.client else None
            if not guard.admit(transport, self, host):
                transport.abort()
                return
            _set_send_buffer(transport, limits.send_buffer_bytes)
            self._drain = _DrainDeadline(self.loop, limits.send_timeout)
            self._arm_request_deadline()

        def evict(self) -> None:
            _reset(self.transport)

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_request_deadline()
            if self._drain is not None:
                self._drain.resumed()
            guard.release(self.transport)
            super().connection_lost(exc)

        def waiting_for_request(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm_request_deadline()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._cancel_request_deadline()
            if self._drain is not None:
                self._drain.resumed()
            super().handle_websocket_upgrade(event)

        def _arm_request_deadline(self) -> None:
            self._cancel_request_deadline()
            if not self.transport.is_closing():
                self._request_timer = self.loop.call_later(
                    limits.request_timeout, self._request_deadline
                )

        def _cancel_request_deadline(self) -> None:
            if self._request_timer is not None:
                self._request_timer.cancel()
                self._request_timer = None

        def _request_deadline(self) -> None:
            self._request_timer = None
            if self.cycle is not None and not self.cycle.response_complete:
                return  # the request arrived; the app bounds the rest
            metrics.rate_limited("request_timeout")
            self.transport.close()

    class GuardedWebSocket(_DrainOrAbort, DirectText, DirectReceive, WebSocketProtocol):
        _bad_utf8_logged = False

        def start_keepalive(self) -> None:
            # Called once, when the handshake's response has been sent.  The
            # handshake's headers are never read again (the app checks the origin
            # before it accepts), and a socket lives as long as its player stays, so
            # every copy goes: the request and response, the request's headers
            # (websockets' parser keeps the request object for the connection's
            # life) and the scope's list (emptied in place: Starlette's ``Headers``
            # holds that very list).  About 4 KiB a live table.  (Not in ``send``:
            # that is the path of every frame.)
            if self.request is not None:
                self.request.headers.clear()
            self.request = self.response = None
            self.scope["headers"].clear()
            super().start_keepalive()

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            host = self.client[0] if self.client else None
            if not guard.admit(self.transport, self, host):
                self.transport.abort()
                return
            self._drain = _DrainDeadline(self.loop, limits.send_timeout)
            # After our close frame, wait this long for the peer's (the base: 10 s); a
            # flooding client's frames are still read and dropped until then.
            self.close_timeout = WS_CLOSE_TIMEOUT

        def connection_lost(self, exc: Exception | None) -> None:
            if self._drain is not None:
                self._drain.resumed()
            guard.release(self.transport)
            super().connection_lost(exc)

        def waiting_for_request(self) -> bool:
            return False

        def handle_connect(self, event: Any) -> None:
            # Behind a trusted proxy the connection counts for the client it names
            # from now on; a client already holding its share is refused (429).
            peer = self.client[0] if self.client else None
            if limits.proxies.trusts(peer):
                headers = [
                    (k.encode("latin-1"), v.encode("latin-1")) for k, v in event.headers.raw_items()
                ]
                if not guard.rekey(self.transport, client_address(peer, headers, limits.proxies)):
                    response = self.conn.reject(429, "too many connections from this address\n")
                    self.conn.send_response(response)
                    self.transport.write(b"".join(self.conn.data_to_send()))
                    self.handshake_complete = self.close_sent = True
                    self.transport.close()
                    return
            super().handle_connect(event)
            if self.handshake_initiated and not self.close_sent:
                extensions: dict[str, Any] = self.scope["extensions"]
                extensions[SEATED_EXTENSION] = self._seated

        def _seated(self, table: str) -> None:
            guard.seated(self.transport, table)

        def evict(self) -> None:
            # An open socket is told why (1013, try again later) when the close frame
            # can go out at once; one that does not read is reset, freeing its buffers.
            if self.handshake_complete and not self.close_sent and self.conn.state is State.OPEN:
                self.conn.send_close(_EVICTED, "server full, reconnect later")
                self.transport.write(b"".join(self.conn.data_to_send()))
                self.close_sent = True
                if self.transport.get_write_buffer_size() == 0:
                    self.transport.close()
                    return
            _reset(self.transport)

        def handle_parser_exception(self) -> None:
            # A frame the protocol refuses (over ``max_frame_bytes``, malformed):
            # send the close frame that says why (1009, 1002...) and wait for the
            # peer as after any close of ours, instead of the base protocol's immediate TCP
            # close.  Closing with the rest of the offending frame unread makes the
            # kernel reset the connection, and a reset can destroy the close frame
            # before the client reads it: the client would see a dropped connection,
            # not the reason.  websockets discards whatever arrives from here on, and
            # the close timeout bounds the wait.  data_received calls this again for each
            # later chunk of data: the first call did everything.
            if self.close_sent:
                return
            close = self.conn.close_sent
            code, reason = (close.code, close.reason) if close is not None else (1002, "")
            self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
            if self.read_paused:
                self.read_paused = False
                self.transport.resume_reading()
            self.close_timer = self.loop.call_later(self.close_timeout, self.transport.close)

        def send_receive_event_to_app(self) -> None:
            guard.active(self.transport)
            data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
            message: str | bytes = data
            if self.curr_msg_data_type == "text":
                try:
                    message = data.decode()
                except UnicodeDecodeError:
                    # Handed over as bytes: the app's decoder answers malformed_json.
                    if not self._bad_utf8_logged:
                        self._bad_utf8_logged = True
                        log.info("%s sent a text frame that is not UTF-8", self.client)
                    self.curr_msg_data_type = "bytes"
            sink = self.on_frame
            if sink is not None and not self.close_sent and self.queue.empty():
                self.frames = []
                sink(message)
                return
            super().send_receive_event_to_app()

    return GuardedHTTP, GuardedWebSocket


def uvicorn_config(app: Any, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """The uvicorn configuration every server of this app runs with (CLI and tests)."""
    limits = Limits.from_settings(settings, raise_fd_limit())
    http_class, ws_class = protocol_classes(limits)
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "http": http_class,
        "ws": ws_class,
        # The app refuses a larger frame; the transport must not buffer more first.
        "ws_max_size": settings.max_frame_bytes,
        "ws_per_message_deflate": False,
        "timeout_keep_alive": settings.keepalive_timeout_seconds,
        "backlog": LISTEN_BACKLOG,
        # Client addresses come from server.transport.client_address, which only
        # believes the configured trusted proxies.
        "proxy_headers": False,
        "server_header": False,
        "timeout_graceful_shutdown": 10,
        # Logging is configured by server.logs (text or JSON, rate-limited).
        "log_config": None,
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)
