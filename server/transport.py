"""The TCP and WebSocket layer under the app: what one client can make us hold.

uvicorn's own HTTP (h11) and WebSocket (websockets sans-I/O) protocols do the
parsing; the subclasses here add the bounds a public server needs:

- **Connection caps.**  At most ``max_connections`` open TCP connections, and
  ``max_connections_per_client`` from one address.  When the total is full, the
  oldest connection that has not sent a complete request is closed to make
  room, so a flood of silent sockets can neither exhaust file descriptors nor
  lock out ``/healthz`` and honest players.  The total is lowered to fit the
  process's file-descriptor limit (raised to its hard limit at start-up).
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
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import resource
import socket
import struct
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State
from websockets.server import ServerProtocol

from server import metrics
from server.config import Settings
from server.inbox import Inbox

__all__ = [
    "ConnectionGuard",
    "DirectReceive",
    "DirectText",
    "FrameSink",
    "FrameTaker",
    "Limits",
    "TrustedProxies",
    "client_address",
    "frame_taker",
    "protocol_classes",
    "raise_fd_limit",
    "text_sender",
    "uvicorn_config",
]

# Where a game socket's messages go when they are handed over at once: the text of a
# text message (bytes when it is not UTF-8), or a binary message's bytes.
FrameSink = Callable[[str | bytes], None]
# Names the sink of a game socket's messages (None: back to ASGI ``receive``).
FrameTaker = Callable[[FrameSink | None], None]

log = logging.getLogger(__name__)

# Seconds a closing WebSocket waits for the peer's close frame before the TCP close.
WS_CLOSE_TIMEOUT = 2.0
# Connections the kernel queues for us, and that asyncio may accept in one go
# before any of them reaches the guard (it accepts up to ``backlog`` per wake-up).
LISTEN_BACKLOG = 128
# File descriptors kept free when the connection cap is fitted to the limit.  An
# accepted socket reaches the guard two loop turns after accept() (asyncio hands it
# to a task, which makes the transport, which schedules connection_made), and the
# listener accepts a burst on each turn: up to three bursts are open before the
# guard can refuse or evict for them.  Plus what the process itself holds (Redis
# pool and pub/sub connections, log files, the bots' worker pool: 20-100).
FD_RESERVE = 3 * LISTEN_BACKLOG + 128


def raise_fd_limit() -> int:
    """Raise the soft file-descriptor limit to the hard one; returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


class TrustedProxies:
    """Which TCP peers are reverse proxies whose client-address header we believe."""

    def __init__(self, networks: Iterable[str], header: str) -> None:
        self._networks = [ipaddress.ip_network(n, strict=False) for n in networks]
        self.header = header.lower().encode("latin-1")

    def __bool__(self) -> bool:
        return bool(self._networks)

    def trusts(self, host: str | None) -> bool:
        if not self._networks or host is None:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self._networks)


def client_address(
    peer: str | None, headers: Sequence[tuple[bytes, bytes]], proxies: TrustedProxies
) -> str:
    """The client's address: the TCP peer, unless that peer is a trusted proxy.

    Behind trusted proxies the header (``X-Forwarded-For: client, proxy1, proxy2``)
    is read from the right, skipping our own proxies; the first address that is
    not one of them is the client.  A header from an untrusted peer is ignored,
    so nobody can pick their own address to dodge a per-client limit.
    """
    host = peer or "unknown"
    if not proxies.trusts(peer):
        return host
    hops: list[str] = []
    for name, value in headers:
        if name.lower() == proxies.header:
            hops.extend(h.strip() for h in value.decode("latin-1").split(","))
    for hop in reversed(hops):
        if not hop:
            continue
        if not proxies.trusts(hop):
            return hop
        host = hop
    return host


@dataclass(frozen=True)
class Limits:
    max_connections: int
    max_connections_per_client: int
    request_timeout: float
    send_timeout: float
    send_buffer_bytes: int
    proxies: TrustedProxies

    @classmethod
    def from_settings(cls, settings: Settings, fd_limit: int | None = None) -> Limits:
        cap = settings.max_connections
        if fd_limit is not None and cap > fd_limit - FD_RESERVE:
            fitted = max(16, fd_limit - FD_RESERVE)
            log.warning(
                "max_connections %d does not fit the file-descriptor limit %d; using %d",
                cap,
                fd_limit,
                fitted,
            )
            cap = fitted
        return cls(
            max_connections=cap,
            max_connections_per_client=min(settings.max_connections_per_client, cap),
            request_timeout=float(settings.request_timeout_seconds),
            send_timeout=float(settings.send_timeout_seconds),
            send_buffer_bytes=settings.send_buffer_bytes,
            proxies=TrustedProxies(settings.trusted_proxies, settings.client_ip_header),
        )


class _Guarded:
    """What the guard needs from a protocol: its transport and whether it is idle."""

    transport: asyncio.Transport

    def waiting_for_request(self) -> bool:
        return False


class ConnectionGuard:
    """Counts open connections by transport (a WebSocket upgrade keeps its slot)."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._owners: OrderedDict[asyncio.Transport, _Guarded] = OrderedDict()
        self._hosts: dict[asyncio.Transport, str] = {}
        self._per_host: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._owners)

    def admit(self, transport: asyncio.Transport, owner: _Guarded, host: str | None) -> bool:
        """Register ``owner`` for ``transport``; False when a cap refuses it."""
        if transport in self._owners:
            self._owners[transport] = owner  # the upgraded protocol takes over the slot
            return True
        key = host or "unknown"
        limits = self._limits
        if (
            not limits.proxies.trusts(host)
            and self._per_host.get(key, 0) >= limits.max_connections_per_client
        ):
            metrics.rate_limited("connections_per_client")
            return False
        if len(self._owners) >= limits.max_connections and not self._evict_one():
            metrics.rate_limited("connections")
            return False
        self._owners[transport] = owner
        self._hosts[transport] = key
        self._per_host[key] = self._per_host.get(key, 0) + 1
        return True

    def release(self, transport: asyncio.Transport) -> None:
        if self._owners.pop(transport, None) is None:
            return
        key = self._hosts.pop(transport)
        left = self._per_host[key] - 1
        if left:
            self._per_host[key] = left
        else:
            del self._per_host[key]

    def _evict_one(self) -> bool:
        # Oldest first: a connection that has sat without a request the longest goes.
        for transport, owner in self._owners.items():
            if owner.waiting_for_request():
                self.release(transport)
                metrics.rate_limited("connections_evicted")
                _reset(transport)
                return True
        return False


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


class DirectText:
    """Mixin for the WebSocket protocol: a text frame written at once, without awaiting.

    uvicorn's ASGI ``send`` is a coroutine that waits for the transport to be
    writable and goes through the ASGI message dict; the game socket writes a
    frame per action, and while output flows (the usual case) none of that has
    to wait.  ``send_text_now`` writes exactly what ``send`` would write for a
    ``websocket.send`` message, and refuses (False) in every case where ``send``
    would wait or fail: the caller then takes the awaitable path, which waits or
    raises as it always did.
    """

    conn: ServerProtocol
    transport: asyncio.Transport
    writable: asyncio.Event
    handshake_complete: bool
    close_sent: bool
    disconnected: bool
    initial_response: tuple[int, list[tuple[str, str]], bytes] | None

    def send_text_now(self, text: str) -> bool:
        """Write ``text`` as one text frame now; False when it must go the awaitable way."""
        if (
            not self.handshake_complete
            or self.close_sent
            or self.disconnected
            or self.initial_response is not None
            or not self.writable.is_set()
            or self.conn.state is not State.OPEN
            or self.transport.is_closing()
        ):
            return False
        self.conn.send_text(text.encode())
        self.transport.write(b"".join(self.conn.data_to_send()))
        return True


def text_sender(send: object) -> Callable[[str], bool] | None:
    """The ``send_text_now`` of the WebSocket behind ASGI ``send``, if it is one of ours
    (None under another server, a test client say: use ``send`` then)."""
    owner = getattr(send, "__self__", None)
    return owner.send_text_now if isinstance(owner, DirectText) else None


class DirectReceive:
    """Mixin for uvicorn's WebSocket protocol: each message handed to a sink at once.

    uvicorn hands a message to the app through a queue that the app's ``receive``
    awaits, and stops reading the socket until the app has taken it: a queue, a
    task wake-up and two changes to the event loop's watch list per message.  A
    game socket's session does the same, synchronous work with every message, so
    once it names a sink (``take_frames``) a whole message goes straight to it,
    from the protocol's own ``data_received``.  Order is kept: while anything is
    still queued (messages that came before the sink) new ones queue behind it,
    and the disconnect always takes the queue.  Nothing goes to the sink after our
    close frame (the queue path drops those messages too).  The frames are parsed,
    size-checked and unmasked by websockets as before; only the hand-over changes.
    """

    on_frame: FrameSink | None = None

    def take_frames(self, sink: FrameSink | None) -> None:
        """From now on hand whole messages to ``sink`` (None: back to the queue)."""
        self.on_frame = sink


def frame_taker(receive: object) -> FrameTaker | None:
    """The ``take_frames`` of the WebSocket behind ASGI ``receive``, if it is one of
    ours (None under another server: frames then come through ``receive``)."""
    owner = getattr(receive, "__self__", None)
    return owner.take_frames if isinstance(owner, DirectReceive) else None


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
    guard = ConnectionGuard(limits)
    metrics.track(open_connections=lambda: len(guard))

    class GuardedHTTP(_DrainOrAbort, H11Protocol, _Guarded):
        _request_timer: asyncio.TimerHandle | None = None
        _admitted = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            host = self.client[0] if self.client else None
            if not guard.admit(transport, self, host):
                transport.abort()
                return
            self._admitted = True
            _set_send_buffer(transport, limits.send_buffer_bytes)
            self._drain = _DrainDeadline(self.loop, limits.send_timeout)
            self._arm_request_deadline()

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

    class GuardedWebSocket(
        _DrainOrAbort, DirectText, DirectReceive, WebSocketsSansIOProtocol, _Guarded
    ):
        _bad_utf8_logged = False

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # uvicorn's receive queue has one consumer (the app's read loop) and holds
            # one message at a time (reading pauses until the app takes it): an
            # ``Inbox`` does that in a tenth of an ``asyncio.Queue``'s memory.
            self.queue = Inbox()  # type: ignore[assignment]

        def start_keepalive(self) -> None:
            # uvicorn calls this once, when the handshake's response has been sent.  The
            # handshake's headers are never read again (the app checks the origin
            # before it accepts), and a socket lives as long as its player stays, so
            # every copy goes: the request and response, the request's headers
            # (websockets' parser keeps the request object for the connection's
            # life) and the scope's list (emptied in place: Starlette's ``Headers``
            # holds that very list).  About 4 KiB a live table.  (Not in ``send``:
            # that is the path of every frame.)
            self.request.headers.clear()
            self.request = self.response = None  # type: ignore[assignment]
            self.scope["headers"].clear()  # type: ignore[attr-defined]
            super().start_keepalive()

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            host = self.client[0] if self.client else None
            if not guard.admit(self.transport, self, host):
                self.transport.abort()
                return
            self._drain = _DrainDeadline(self.loop, limits.send_timeout)
            # After our close frame, wait this long for the peer's (uvicorn: 10 s); a
            # flooding client's frames are still read and dropped until then.
            self.close_timeout = WS_CLOSE_TIMEOUT

        def connection_lost(self, exc: Exception | None) -> None:
            if self._drain is not None:
                self._drain.resumed()
            guard.release(self.transport)
            super().connection_lost(exc)

        def handle_parser_exception(self) -> None:
            # A frame the protocol refuses (over ``max_frame_bytes``, malformed):
            # send the close frame that says why (1009, 1002...) and wait for the
            # peer as after any close of ours, instead of uvicorn's immediate TCP
            # close.  Closing with the rest of the offending frame unread makes the
            # kernel reset the connection, and a reset can destroy the close frame
            # before the client reads it: the client would see a dropped connection,
            # not the reason.  websockets discards whatever arrives from here on, and
            # the close timeout bounds the wait.  uvicorn calls this again for each
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
