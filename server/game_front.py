"""The app's front: every request's ``Host`` checked, the game socket served straight
to its session (``server.game_socket_session``), everything else to Starlette."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from server import game_socket_session, metrics
from server.app_services import Services
from server.config import Settings
from server.connection import SendNow
from server.http_answers import error_answer
from server.origins import connection_origin_allowed, host_header
from server.transport import FrameTaker, frame_taker, text_sender

__all__ = ["GAME_SOCKET_PATH", "GameApp", "GameSocket", "game_socket_handler"]

# Where clients open their game socket.
GAME_SOCKET_PATH = "/ws"

# A WebSocket refused before its handshake (cross-site origin) gets HTTP 403.
_ORIGIN_REFUSED = 4403

# A game socket, with the transport's direct send and receive when it has them.
GameSocket = Callable[[WebSocket, SendNow | None, FrameTaker | None], Awaitable[None]]


def game_socket_handler(settings: Settings, services: Callable[[], Services]) -> GameSocket:
    """What serves one game socket: its page's origin checked before the handshake,
    then its session, over the services the lifespan holds (``services()``)."""

    async def game_socket(
        websocket: WebSocket, send_now: SendNow | None, take_frames: FrameTaker | None
    ) -> None:
        if not connection_origin_allowed(websocket, settings.allowed_origins):
            metrics.refused("origin_not_allowed")
            await websocket.close(_ORIGIN_REFUSED)  # before accept: HTTP 403
            return
        # The transport lets the handshake's headers go once the socket is accepted
        # (``transport.GuardedWebSocket.start_keepalive``): read them above this.
        live = services()
        await game_socket_session.serve(
            websocket, live.node, live.store, live.seat_limiter, settings, send_now, take_frames
        )

    return game_socket


class GameApp(Starlette):
    """The app, with the game socket (``GAME_SOCKET_PATH``) served ahead of Starlette's
    middleware and router.

    A game socket lives as long as its player stays, and every frame it sends
    went through two exception-handling send wrappers; the middleware, router
    and route frames it kept were about 4 KiB per live table, and the wrappers a
    few percent of the CPU per action at 1,000 tables.  The socket handler
    catches and answers its own errors, so those layers had nothing to do for
    it.  HTTP requests take the usual path; a WebSocket anywhere else is refused.
    """

    def __init__(
        self,
        game_socket: GameSocket,
        host_allowed: Callable[[str | None], bool],
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self._game_socket = game_socket
        self._host_allowed = host_allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self._host_allowed(
            host_header(scope["headers"])
        ):
            # A name that is not the server's: DNS rebinding (server/origins.py).
            metrics.refused("host_not_allowed")
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})  # an HTTP 403
                return
            refusal = error_answer(
                421, "host_not_allowed", "this server does not answer to that name"
            )
            await refusal(scope, receive, send)
            return
        if scope["type"] == "websocket":
            if scope["path"] != scope.get("root_path", "") + GAME_SOCKET_PATH:
                # Nothing else takes a WebSocket (the static files would fail on one,
                # with a traceback in the log per attempt): refused before the
                # handshake, an HTTP 403.
                await send({"type": "websocket.close", "code": 1008})
                return
            scope["app"] = self
            socket = WebSocket(scope, receive=receive, send=send)
            await self._game_socket(socket, text_sender(send), frame_taker(receive))
            return
        await super().__call__(scope, receive, send)
