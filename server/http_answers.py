"""The app's own HTTP answers: JSON, an error's shape, the 429 of a spent budget,
Starlette's HTTP errors answered in that shape, and a request body read under a size
and a time limit (the lobby's routes read theirs through ``read_body`` too)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from server.budgets import Grant

__all__ = [
    "MAX_BODY_BYTES",
    "Json",
    "error_answer",
    "http_error",
    "read_body",
    "server_error",
    "too_many",
]

MAX_BODY_BYTES = 4096

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


class Json(Response):
    """A JSON answer of ``content``."""

    media_type = "application/json"

    def __init__(
        self, content: Any, status_code: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(msgspec.json.encode(content), status_code=status_code, headers=headers)


def error_answer(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> Json:
    """The error answer every route of the app gives: its code and message."""
    return Json({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def too_many(grant: Grant, message: str) -> Json:
    """429 for a spent budget, with the seconds until it has a token again."""
    wait = max(1, round(grant.retry_after))
    return error_answer(
        429, "rate_limited", f"{message} in {wait}s", headers={"Retry-After": str(wait)}
    )


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's HTTP errors (404, 405, a body too large or too slow) as error answers."""
    assert isinstance(exc, HTTPException)
    code = _STATUS_CODES.get(exc.status_code, f"http_{exc.status_code}")
    return error_answer(exc.status_code, code, str(exc.detail))


async def server_error(request: Request, exc: Exception) -> Response:
    """An unhandled exception's answer, which tells the client nothing of it."""
    return error_answer(500, "internal_error", "internal server error")


async def read_body(request: Request, timeout_seconds: float) -> bytes:
    """The request's body, refused (413, 408) past ``MAX_BODY_BYTES`` or the timeout."""
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
