"""The web app, assembled: its services for the lifespan, its routes and its front.

``create_app(settings, redis_url)`` is all the CLI needs.  One Redis client,
one ``TableStore``, one room ``Registry`` and, around it, one cluster ``Node``
(the bus to the other processes on the same Redis) live for the app's
lifetime (``server.app_services``); ``app.state.node.drain()`` hands every table
over before a graceful exit.  The routes are the tables' (``server.table_routes``),
the operator's (``server.operator_routes``), the lobby's, the service worker and
the static client; a game socket is routed to its session by the app's front
(``server.game_front``) ahead of Starlette's middleware and router.  The lobby
(players, room codes, open tables, quick match, ratings) is one
``server.lobby.Lobby``: its routes mounted here, started and closed with the
lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from server import bots, metrics
from server.app_services import Services
from server.budgets import SharedBuckets
from server.client_shell import service_worker_route
from server.cluster.bus import Bus
from server.cluster.connect import connect
from server.cluster.node import Node
from server.config import Settings
from server.game_front import GAME_SOCKET_PATH, GameApp, game_socket_handler
from server.http_answers import MAX_BODY_BYTES, http_error, read_body, server_error
from server.lobby import Lobby
from server.operator_routes import operator_routes
from server.origins import HostAllowList
from server.rooms.redis_failover import ReplicaAck
from server.rooms.registry import DEFAULT_IDLE_SECONDS, Registry
from server.rooms.store import TableStore
from server.rooms.tables import TableLifetime
from server.seat_limits import SeatLimits
from server.table_routes import table_routes
from server.transport import TrustedProxies, client_address
from server.usage import USAGE

__all__ = ["GAME_SOCKET_PATH", "MAX_BODY_BYTES", "create_app"]


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
    holder: dict[str, Services] = {}
    # The bots report their decisions to this process's metrics and usage counters.
    bots.report_to(
        decided=metrics.bot_decided,
        fell_back=metrics.strong_bot_fell_back,
        thinking=USAGE.bot_thinking,
    )
    proxies = TrustedProxies(settings.trusted_proxies, settings.client_ip_header)
    lifetime = TableLifetime(
        unplayed_seconds=min(settings.unjoined_table_ttl_seconds, settings.table_ttl_seconds),
        per_action_seconds=settings.table_ttl_per_action_seconds,
        most_seconds=settings.table_ttl_seconds,
    )

    def services() -> Services:
        return holder["services"]

    # Players, room codes, the lobby, quick match and ratings (server.lobby).
    lobby = Lobby(
        settings,
        client_of=lambda request: client_address(
            request.client.host if request.client else None, request.scope["headers"], proxies
        ),
        read_body=lambda request: read_body(request, settings.request_timeout_seconds),
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
        holder["services"] = Services(
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

    return GameApp(
        game_socket_handler(settings, services),
        HostAllowList(settings.allowed_origins, settings.host).allows,
        routes=[
            *table_routes(settings, services, lobby, proxies),
            *operator_routes(settings, services),
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
