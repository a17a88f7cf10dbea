"""The tables' HTTP routes: ``POST /api/tables`` creates a table, and
``GET /api/tables/{id}/history`` pages through its finished deals for a seat's token."""

from __future__ import annotations

import logging
from collections.abc import Callable

import msgspec
from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from server import metrics
from server.app_services import Services
from server.budgets import address_key, global_key, table_key
from server.config import Settings
from server.engine import EngineError
from server.http_answers import Json, error_answer, read_body, too_many
from server.lobby import Lobby
from server.origins import connection_origin_allowed
from server.rooms import tables
from server.rooms.history import HistoryCache, PageOutOfRange
from server.rooms.names import NameRefused
from server.rooms.store import StoreError, TooManyTables
from server.rooms.tables import CreateTableRequest
from server.rooms.tokens import seat_for_token, valid_table_id
from server.transport import TrustedProxies, client_address

__all__ = ["table_routes"]

# The app's log, as before these routes had a module of their own.
log = logging.getLogger("server.app")


def table_routes(
    settings: Settings, services: Callable[[], Services], lobby: Lobby, proxies: TrustedProxies
) -> list[Route]:
    """The routes, over the services the lifespan holds (``services()``), the lobby that
    gives each new table its code, and the proxies trusted to name the client."""
    per_minute = settings.tables_per_minute
    total_per_minute = settings.tables_per_minute_total
    # History: finished deals' replays kept between requests, and a budget per client
    # address and per seat, shared by every process (``server.budgets``).
    history_cache = HistoryCache(settings.history_cache_deals, settings.history_deals)
    history_rate = settings.history_per_minute

    async def create_table(request: Request) -> Response:
        if not connection_origin_allowed(request, settings.allowed_origins):
            metrics.refused("origin_not_allowed")
            return error_answer(
                403, "origin_not_allowed", "this page's origin may not create tables"
            )
        client = client_address(
            request.client.host if request.client else None, request.scope["headers"], proxies
        )
        body = await read_body(request, settings.request_timeout_seconds)
        try:
            create = msgspec.json.decode(body or b"{}", type=CreateTableRequest)
        except (msgspec.DecodeError, ValueError) as exc:
            return error_answer(400, "bad_request", str(exc))
        # The address's budget first: one address's refusals never spend the server's.
        try:
            buckets = services().buckets
            grant = await buckets.take(address_key("tables", client), per_minute / 60, per_minute)
            if grant.granted:
                all_key = global_key("tables")
                grant = await buckets.take(all_key, total_per_minute / 60, total_per_minute)
                if not grant.granted:
                    metrics.rate_limited("tables_total")
                    return too_many(grant, "too many tables are being created; try again")
            else:
                metrics.rate_limited("tables_per_client")
                return too_many(grant, f"too many tables created from {client}; try again")
        except (RedisError, OSError) as exc:
            log.warning("cannot read the table creation budget: %s", exc)
            return error_answer(503, "storage_unavailable", "the table store is unreachable")
        if create.seed is not None and create.humans > 1 and not settings.allow_fixed_seeds:
            metrics.refused("fixed_seed_not_allowed")
            return error_answer(
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
            return error_answer(400, "invalid_name", str(exc))
        except ValueError as exc:
            return error_answer(400, "bad_request", str(exc))
        except TooManyTables:
            metrics.rate_limited("max_tables")
            return error_answer(
                429, "too_many_tables", "the server holds as many tables as it may; try later"
            )
        except (RedisError, OSError, StoreError) as exc:
            log.warning("cannot create a table: %s", exc)
            return error_answer(503, "storage_unavailable", "the table store is unreachable")
        try:
            code = await lobby.register_table(create, created)
        except (RedisError, OSError) as exc:
            log.warning("cannot give table %s a code: %s", created.table, exc)
            return error_answer(503, "storage_unavailable", "the table store is unreachable")
        return Json(msgspec.to_builtins(created) | {"code": code}, status_code=201)

    async def history_budget(key: str, who: str) -> Response | None:
        """None if ``key``'s shared budget (``server.budgets``, over every process) lets
        it ask for a history now, else the 429 to answer."""
        grant = await services().buckets.take(key, history_rate / 60.0, history_rate)
        if grant.granted:
            return None
        metrics.rate_limited(f"history_per_{who}")
        return too_many(grant, f"too many history requests from this {who}; try again")

    async def table_history(request: Request) -> Response:
        """``GET /api/tables/{id}/history[?page=N]``: a page of the finished deals (0 is
        the newest), for a seat's token only."""
        table_id = request.path_params["table"]
        auth = request.headers.get("authorization", "")
        token = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        if not valid_table_id(table_id):
            return error_answer(404, "unknown_table", "no such table")
        client = client_address(
            request.client.host if request.client else None, request.scope["headers"], proxies
        )
        # Before anything is loaded: a refused request costs one budget call, no replay.
        try:
            refused = await history_budget(address_key("history", client), "address")
        except (RedisError, OSError) as exc:
            log.warning("cannot read the history budget: %s", exc)
            return error_answer(503, "storage_unavailable", "the table store is unreachable")
        if refused is not None:
            return refused
        raw_page = request.query_params.get("page", "0")
        if not (raw_page.isascii() and raw_page.isdigit() and len(raw_page) <= 6):
            return error_answer(
                400,
                "bad_page",
                f"page must be a whole number, 0 for the newest, not {raw_page[:20]!r}",
            )
        store = services().store
        try:
            # The meta alone first: a request without a seat's token reads no log.
            known = await store.load_meta(table_id)
            if known is None:
                return error_answer(404, "unknown_table", "no such table")
            # Replays show every hand: only the table's own seats may watch them.
            seat = seat_for_token(token, [s.token_hash for s in known.seats]) if token else None
            if seat is None:
                return error_answer(401, "bad_token", "a seat token of this table is needed")
            refused = await history_budget(table_key(table_id, f"history:{seat}"), "seat")
            if refused is not None:
                return refused
            loaded = await store.load(table_id)
        except (RedisError, OSError) as exc:
            log.warning("cannot read table %s: %s", table_id, exc)
            return error_answer(503, "storage_unavailable", "the table store is unreachable")
        if loaded is None:
            return error_answer(404, "unknown_table", "no such table")
        meta, entries = loaded
        try:
            found = await history_cache.answer(meta, entries, int(raw_page))
        except PageOutOfRange as exc:
            return error_answer(400, "bad_page", str(exc))
        except EngineError as exc:
            log.warning("table %s: log does not replay: %r", table_id, exc)
            return error_answer(500, "internal_error", "the table's log does not replay")
        return Response(found, media_type="application/json")

    return [
        Route("/api/tables", create_table, methods=["POST"]),
        Route("/api/tables/{table}/history", table_history, methods=["GET"]),
    ]
