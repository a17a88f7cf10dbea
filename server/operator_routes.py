"""The operator's HTTP routes: ``GET /healthz`` (anyone; the process's details for
the operator only), ``GET /api/usage``, ``GET /metrics`` and
``DELETE /api/admin/tables/{id}``."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from server import metrics
from server.app_services import Services
from server.config import Settings
from server.http_answers import Json, error_answer
from server.operator_access import from_this_host, is_admin
from server.rooms import tables
from server.usage import USAGE

__all__ = ["operator_routes"]

# The app's log, as before these routes had a module of their own.
log = logging.getLogger("server.app")


def operator_routes(settings: Settings, services: Callable[[], Services]) -> list[Route]:
    """The routes, over the services the lifespan holds (``services()``)."""

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
        return Json(answer, status_code=200 if ok else 503)

    async def usage(request: Request) -> Response:
        if not operator(request):
            return error_answer(403, "operator_only", "this page is for the server's operator")
        return Json(USAGE.snapshot(tables=len(services().registry)))

    async def delete_table(request: Request) -> Response:
        """``DELETE /api/admin/tables/{id}``: the operator removes a table."""
        if not settings.admin_token:
            # Off: as if the route did not exist.
            return error_answer(404, "not_found", "Not Found")
        if not is_admin(request.headers.get("authorization"), settings.admin_token):
            metrics.refused("bad_admin_token")
            return error_answer(401, "bad_admin_token", "the admin token is needed")
        table_id = request.path_params["table"]
        try:
            found = await tables.delete_tables(services().store, [table_id])
        except (RedisError, OSError) as exc:
            log.warning("cannot delete table %s: %s", table_id, exc)
            return error_answer(503, "storage_unavailable", "the table store is unreachable")
        if not found[table_id]:
            return error_answer(404, "unknown_table", "no such table")
        log.info("table %s deleted by the operator", table_id)
        return Json({"deleted": table_id})

    async def metrics_endpoint(request: Request) -> Response:
        # Process figures (memory, CPU, descriptors): the operator's, like /api/usage.
        if not operator(request):
            return error_answer(403, "operator_only", "this page is for the server's operator")
        return Response(metrics.render(), media_type=metrics.CONTENT_TYPE)

    return [
        Route("/api/admin/tables/{table}", delete_table, methods=["DELETE"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/api/usage", usage, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
    ]
