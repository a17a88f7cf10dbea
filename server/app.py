"""The web app: table creation, health, the game WebSocket, and the static client.

A game socket is routed to its session (``server.game_socket_session``) ahead
of Starlette's middleware and router; everything else is an HTTP route here.

``create_app(settings, redis_url)`` is all the CLI needs.  One Redis client,
one ``TableStore``, one room ``Registry`` and, around it, one cluster ``Node``
(the bus to the other processes on the same Redis) live for the app's
lifetime; ``app.state.node.drain()`` hands every table over before a graceful
exit.  The lobby (players, room codes, open tables, quick match, ratings) is one
``server.lobby.Lobby``: its routes mounted here, started and closed with the
lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from server import bots, game_socket_session, metrics
from server.budgets import Grant, SharedBuckets, address_key, global_key, table_key
from server.client_shell import service_worker_route
from server.cluster.bus import Bus
from server.cluster.connect import connect
from server.cluster.node import Node
from server.config import Settings
from server.connection import SendNow
from server.engine import EngineError
from server.lobby import Lobby
from server.operator_access import from_this_host, is_admin
from server.origins import HostAllowList, host_header, origin_allowed
from server.rooms import tables
from server.rooms.history import HistoryCache, PageOutOfRange
from server.rooms.names import NameRefused
from server.rooms.redis_failover import ReplicaAck
from server.rooms.registry import DEFAULT_IDLE_SECONDS, Registry
from server.rooms.store import Redis, StoreError, TableStore, TooManyTables
from server.rooms.tables import CreateTableRequest, TableLifetime
from server.rooms.tokens import seat_for_token, valid_table_id
from server.seat_limits import SeatLimits
from server.transport import (
    FrameTaker,
    TrustedProxies,
    client_address,
    frame_taker,
    text_sender,
)
from server.usage import USAGE

__all__ = ["GAME_SOCKET_PATH", "MAX_BODY_BYTES", "create_app"]

# Where clients open their game socket.
GAME_SOCKET_PATH = "/ws"

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 4096
# A WebSocket refused before its handshake (cross-site origin) gets HTTP 403.
_ORIGIN_REFUSED = 4403

_STATUS_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "body_too_large",
    415: "unsupported_media_type",
    500: "internal_error",
    503: "storage_unavailable",
}


@dataclass
class _Services:
    redis: Redis
    store: TableStore
    registry: Registry
    node: Node
    # Frames per seat (--actions-per-second, bursts of twice that), shared through Redis.
    seat_limiter: SeatLimits
    # Table creation budgets, per address and in all (shared through Redis).
    buckets: SharedBuckets


class _Json(Response):
    media_type = "application/json"

    def __init__(
        self, content: Any, status_code: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(msgspec.json.encode(content), status_code=status_code, headers=headers)


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> _Json:
    return _Json({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def _too_many(grant: Grant, message: str) -> _Json:
    """429 for a spent budget, with the seconds until it has a token again."""
    wait = max(1, round(grant.retry_after))
    return _error(429, "rate_limited", f"{message} in {wait}s", headers={"Retry-After": str(wait)})


def replica_ack(settings: Settings) -> ReplicaAck | None:
    """The store's replica acknowledgement (``--redis-replica-acks``), None when off."""
    if not settings.redis_replica_acks:
        return None
    timeout_ms = max(1, round(settings.redis_replica_ack_timeout_seconds * 1000))
    return ReplicaAck(settings.redis_replica_acks, timeout_ms)


def create_app(
    settings: Settings, redis_url: str, *, idle_seconds: float = DEFAULT_IDLE_SECONDS
) -> Starlette:
    """The Starlette app: ``POST /api/tables``, ``GET /healthz``, the ``/ws`` game socket
    and the static client; Redis, the store and the room registry live for its lifespan."""
    holder: dict[str, _Services] = {}
    # The bots report their decisions to this process's metrics and usage counters.
    bots.report_to(
        decided=metrics.bot_decided,
        fell_back=metrics.strong_bot_fell_back,
        thinking=USAGE.bot_thinking,
    )
    proxies = TrustedProxies(settings.trusted_proxies, settings.client_ip_header)
    per_minute = settings.tables_per_minute
    total_per_minute = settings.tables_per_minute_total
    lifetime = TableLifetime(
        unplayed_seconds=min(settings.unjoined_table_ttl_seconds, settings.table_ttl_seconds),
        per_action_seconds=settings.table_ttl_per_action_seconds,
        most_seconds=settings.table_ttl_seconds,
    )
    # History: finished deals' replays kept between requests, and a budget per client
    # address and per seat, shared by every process (``server.budgets``).
    history_cache = HistoryCache(settings.history_cache_deals, settings.history_deals)
    history_rate = settings.history_per_minute

    def services() -> _Services:
        return holder["services"]

    # Players, room codes, the lobby, quick match and ratings (server.lobby).
    lobby = Lobby(
        settings,
        client_of=lambda request: client_address(
            request.client.host if request.client else None, request.scope["headers"], proxies
        ),
        read_body=lambda request: _read_body(request, settings.request_timeout_seconds),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        clients = await connect(redis_url)
        store = TableStore(
            clients.tables,
            settings.table_ttl_seconds,
            ttl_for=lifetime.seconds,
            replica_ack=replica_ack(settings),
        )
        registry = Registry(
            store,
            idle_seconds=idle_seconds,
            lease_seconds=settings.lease_seconds,
            max_spectators=settings.max_spectators,
            max_sockets_per_seat=settings.max_sockets_per_seat,
            entropy_wait_seconds=settings.entropy_wait_seconds,
        )
        bus = Bus(registry.proc, clients.node, clients.node.publish)
        bus.start()
        node = Node(
            registry,
            bus,
            store,
            lease_seconds=settings.lease_seconds,
            max_frame_bytes=settings.max_frame_bytes,
            queue_size=settings.outgoing_queue_size,
            handover_seconds=settings.handover_seconds,
        )
        rate = settings.actions_per_second
        holder["services"] = _Services(
            clients.tables,
            store,
            registry,
            node,
            # Budgets share the tables' group commit: one write a turn, not a round trip each.
            SeatLimits(
                clients.tables,
                rate,
                2 * rate,
                buckets=SharedBuckets(clients.tables, run=store.run_script),
                run=store.run_script,
            ),
            SharedBuckets(clients.tables, run=store.run_script),
        )
        # Exposed for operators' tooling and tests; the app itself goes through ``holder``.
        app.state.store = store
        app.state.registry = registry
        app.state.node = node
        metrics.track(live_tables=lambda: len(registry))
        # Closed when the server drains (cli), so open lobby streams do not hold it up.
        app.state.lobby_feed = lobby.start(
            clients.tables, clients.node, store, holder["services"].buckets
        )
        try:
            yield
        finally:
            await lobby.close()
            await node.close()
            # Refills and flood counts in flight finish before their Redis client goes.
            await holder["services"].seat_limiter.settled()
            await bus.close()
            await store.aclose()
            await clients.aclose()
            # The strong bots' worker processes must not outlive the server.
            await asyncio.to_thread(bots.shutdown)

    async def create_table(request: Request) -> Response:
        if not origin_allowed(
            request.headers.get("origin"),
            request.headers.get("host"),
            settings.allowed_origins,
            request.scope["scheme"],
        ):
            metrics.refused("origin_not_allowed")
            return _error(403, "origin_not_allowed", "this page's origin may not create tables")
        client = client_address(
            request.client.host if request.client else None, request.scope["headers"], proxies
        )
        body = await _read_body(request, settings.request_timeout_seconds)
        try:
            create = msgspec.json.decode(body or b"{}", type=CreateTableRequest)
        except (msgspec.DecodeError, ValueError) as exc:
            return _error(400, "bad_request", str(exc))
        # The address's budget first: one address's refusals never spend the server's.
        try:
            buckets = services().buckets
            grant = await buckets.take(address_key("tables", client), per_minute / 60, per_minute)
            if grant.granted:
                all_key = global_key("tables")
                grant = await buckets.take(all_key, total_per_minute / 60, total_per_minute)
                if not grant.granted:
                    metrics.rate_limited("tables_total")
                    return _too_many(grant, "too many tables are being created; try again")
            else:
                metrics.rate_limited("tables_per_client")
                return _too_many(grant, f"too many tables created from {client}; try again")
        except (RedisError, OSError) as exc:
            log.warning("cannot read the table creation budget: %s", exc)
            return _error(503, "storage_unavailable", "the table store is unreachable")
        if create.seed is not None and create.humans > 1 and not settings.allow_fixed_seeds:
            metrics.refused("fixed_seed_not_allowed")
            return _error(
                400,
                "fixed_seed_not_allowed",
                "a chosen seed reveals every hand: it is accepted only on one-human tables "
                "(or when the server runs with --allow-fixed-seeds, for testing)",
            )
        try:
            created = await tables.create_table(
                services().store, create, max_tables=settings.max_tables
            )
        except NameRefused as exc:
            return _error(400, "invalid_name", str(exc))
        except ValueError as exc:
            return _error(400, "bad_request", str(exc))
        except TooManyTables:
            metrics.rate_limited("max_tables")
            return _error(
                429, "too_many_tables", "the server holds as many tables as it may; try later"
            )
        except (RedisError, OSError, StoreError) as exc:
            log.warning("cannot create a table: %s", exc)
            return _error(503, "storage_unavailable", "the table store is unreachable")
        try:
            code = await lobby.register_table(create, created)
        except (RedisError, OSError) as exc:
            log.warning("cannot give table %s a code: %s", created.table, exc)
            return _error(503, "storage_unavailable", "the table store is unreachable")
        return _Json(msgspec.to_builtins(created) | {"code": code}, status_code=201)

    async def history_budget(key: str, who: str) -> Response | None:
        """None if ``key``'s shared budget (``server.budgets``, over every process) lets
        it ask for a history now, else the 429 to answer."""
        grant = await services().buckets.take(key, history_rate / 60.0, history_rate)
        if grant.granted:
            return None
        metrics.rate_limited(f"history_per_{who}")
        return _too_many(grant, f"too many history requests from this {who}; try again")

    async def table_history(request: Request) -> Response:
        """``GET /api/tables/{id}/history[?page=N]``: a page of the finished deals (0 is
        the newest), for a seat's token only."""
        table_id = request.path_params["table"]
        auth = request.headers.get("authorization", "")
        token = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        if not valid_table_id(table_id):
            return _error(404, "unknown_table", "no such table")
        client = client_address(
            request.client.host if request.client else None, request.scope["headers"], proxies
        )
        # Before anything is loaded: a refused request costs one budget call, no replay.
        try:
            refused = await history_budget(address_key("history", client), "address")
        except (RedisError, OSError) as exc:
            log.warning("cannot read the history budget: %s", exc)
            return _error(503, "storage_unavailable", "the table store is unreachable")
        if refused is not None:
            return refused
        raw_page = request.query_params.get("page", "0")
        if not (raw_page.isascii() and raw_page.isdigit() and len(raw_page) <= 6):
            return _error(
                400,
                "bad_page",
                f"page must be a whole number, 0 for the newest, not {raw_page[:20]!r}",
            )
        store = services().store
        try:
            # The meta alone first: a request without a seat's token reads no log.
            known = await store.load_meta(table_id)
            if known is None:
                return _error(404, "unknown_table", "no such table")
            # Replays show every hand: only the table's own seats may watch them.
            seat = seat_for_token(token, [s.token_hash for s in known.seats]) if token else None
            if seat is None:
                return _error(401, "bad_token", "a seat token of this table is needed")
            refused = await history_budget(table_key(table_id, f"history:{seat}"), "seat")
            if refused is not None:
                return refused
            loaded = await store.load(table_id)
        except (RedisError, OSError) as exc:
            log.warning("cannot read table %s: %s", table_id, exc)
            return _error(503, "storage_unavailable", "the table store is unreachable")
        if loaded is None:
            return _error(404, "unknown_table", "no such table")
        meta, entries = loaded
        try:
            found = await history_cache.answer(meta, entries, int(raw_page))
        except PageOutOfRange as exc:
            return _error(400, "bad_page", str(exc))
        except EngineError as exc:
            log.warning("table %s: log does not replay: %r", table_id, exc)
            return _error(500, "internal_error", "the table's log does not replay")
        return Response(found, media_type="application/json")

    def operator(request: Request) -> bool:
        """Whether the request may see this process's details (``server.operator_access``)."""
        if is_admin(request.headers.get("authorization"), settings.admin_token):
            return True
        peer = request.client.host if request.client else None
        return from_this_host(peer, request.scope["headers"], settings.client_ip_header)

    async def healthz(request: Request) -> Response:
        live = services()
        reachable = await live.store.ping()
        node = live.node
        ok = reachable and not node.draining
        answer: dict[str, Any] = {"ok": ok, "redis": reachable, "draining": node.draining}
        if operator(request):
            # Which process (host name, pid) and what it holds: the operator's only.
            answer |= {
                "process": node.proc,
                "pid": os.getpid(),
                "tables_owned": len(node.registry),
                "sockets_forwarded": node.forwarded,
                "frames_forwarded": node.frames_forwarded,
                "tables_handed_over": node.handovers,
            }
        return _Json(answer, status_code=200 if ok else 503)

    async def usage(request: Request) -> Response:
        if not operator(request):
            return _error(403, "operator_only", "this page is for the server's operator")
        return _Json(USAGE.snapshot(tables=len(services().registry)))

    async def delete_table(request: Request) -> Response:
        """``DELETE /api/admin/tables/{id}``: the operator removes a table."""
        if not settings.admin_token:
            # Off: as if the route did not exist.
            return _error(404, "not_found", "Not Found")
        if not is_admin(request.headers.get("authorization"), settings.admin_token):
            metrics.refused("bad_admin_token")
            return _error(401, "bad_admin_token", "the admin token is needed")
        table_id = request.path_params["table"]
        try:
            found = await tables.delete_tables(services().store, [table_id])
        except (RedisError, OSError) as exc:
            log.warning("cannot delete table %s: %s", table_id, exc)
            return _error(503, "storage_unavailable", "the table store is unreachable")
        if not found[table_id]:
            return _error(404, "unknown_table", "no such table")
        log.info("table %s deleted by the operator", table_id)
        return _Json({"deleted": table_id})

    async def metrics_endpoint(request: Request) -> Response:
        # Process figures (memory, CPU, descriptors): the operator's, like /api/usage.
        if not operator(request):
            return _error(403, "operator_only", "this page is for the server's operator")
        return Response(metrics.render(), media_type=metrics.CONTENT_TYPE)

    async def game_socket(
        websocket: WebSocket, send_now: SendNow | None, take_frames: FrameTaker | None
    ) -> None:
        if not origin_allowed(
            websocket.headers.get("origin"),
            websocket.headers.get("host"),
            settings.allowed_origins,
            websocket.scope["scheme"],
        ):
            metrics.refused("origin_not_allowed")
            await websocket.close(_ORIGIN_REFUSED)  # before accept: HTTP 403
            return
        # The transport lets the handshake's headers go once the socket is accepted
        # (``transport.GuardedWebSocket.start_keepalive``): read them above this.
        live = services()
        await game_socket_session.serve(
            websocket, live.node, live.store, live.seat_limiter, settings, send_now, take_frames
        )

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = _STATUS_CODES.get(exc.status_code, f"http_{exc.status_code}")
        return _error(exc.status_code, code, str(exc.detail))

    async def server_error(request: Request, exc: Exception) -> Response:
        return _error(500, "internal_error", "internal server error")

    return _GameApp(
        game_socket,
        HostAllowList(settings.allowed_origins, settings.host).allows,
        routes=[
            Route("/api/tables", create_table, methods=["POST"]),
            Route("/api/tables/{table}/history", table_history, methods=["GET"]),
            Route("/api/admin/tables/{table}", delete_table, methods=["DELETE"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/api/usage", usage, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
            *lobby.routes(),
            service_worker_route(settings.client_dir),
            Mount(
                "/",
                StaticFiles(directory=settings.client_dir, html=True, check_dir=False),
                name="client",
            ),
        ],
        exception_handlers={HTTPException: http_error, 500: server_error},
        lifespan=lifespan,
    )


class _GameApp(Starlette):
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
        game_socket: Callable[[WebSocket, SendNow | None, FrameTaker | None], Awaitable[None]],
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
            refusal = _error(421, "host_not_allowed", "this server does not answer to that name")
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


async def _read_body(request: Request, timeout_seconds: float) -> bytes:
    body = b""
    try:
        async with asyncio.timeout(timeout_seconds):
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise HTTPException(413, f"request body exceeds {MAX_BODY_BYTES} bytes")
    except TimeoutError:
        raise HTTPException(408, f"request body not received within {timeout_seconds}s") from None
    return body
