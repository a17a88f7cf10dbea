"""What every lobby route shares: its settings, its refusals and its budgets.

``RouteBase`` holds the services the routes use (``LobbyRoutes.start`` sets them in
the app's lifespan) and the steps every route takes first: the shared budget of what
a client may repeat (``server.budgets``), the player's credential, the body read
strictly; ``guard`` turns a refusal or an unreachable store into an error answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import Response

from server.budgets import SharedBuckets, address_key
from server.players import Player, PlayerStore
from server.ratings import RatingStore
from server.rooms.store import StoreError, TableStore

from .codes import CodeError, Codes
from .listing import LobbyFeed
from .queue import Matchmaker

__all__ = ["Handler", "LobbyLimits", "Refusal", "RouteBase", "answer", "refused"]

log = logging.getLogger(__name__)

_encoder = msgspec.json.Encoder()
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class LobbyLimits:
    """The settings these routes read (``server.config`` passes them down)."""

    player_writes_per_minute: int
    codes_per_minute: int
    lobby_watchers_per_minute: int
    queue_joins_per_minute: int
    queue_polls_per_second: int
    max_tables: int
    profiles_per_minute: int = 60


class Refusal(Exception):
    """A request refused: its HTTP status, reason code, message and Retry-After."""

    def __init__(self, status: int, code: str, message: str, retry: float = 0) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.retry = status, code, message, retry


def answer(content: Any, status: int = 200) -> Response:
    """A JSON answer."""
    return Response(_encoder.encode(content), status_code=status, media_type="application/json")


def refused(refusal: Refusal) -> Response:
    """The error answer of ``refusal``."""
    headers = {"Retry-After": str(max(1, round(refusal.retry)))} if refusal.status == 429 else None
    body = {"error": {"code": refusal.code, "message": refusal.message}}
    return Response(_encoder.encode(body), refusal.status, headers, "application/json")


Handler = Callable[[Request], Awaitable[Response]]


class RouteBase:
    """The services and first steps of every lobby route."""

    limits: LobbyLimits
    players: PlayerStore
    codes: Codes
    feed: LobbyFeed
    matchmaker: Matchmaker
    ratings: RatingStore
    _store: TableStore
    _buckets: SharedBuckets
    _client_of: Callable[[Request], str]
    _read_body: Callable[[Request], Awaitable[bytes]]

    def guard(self, handler: Handler) -> Handler:
        """Refusals and an unreachable Redis become error answers, one place for all."""

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except Refusal as refusal:
                return refused(refusal)
            except CodeError as exc:
                status = 404 if exc.reason.value == "unknown_code" else 409
                status = 400 if exc.reason.value == "bad_code" else status
                return refused(Refusal(status, exc.reason.value, exc.message))
            except (RedisError, OSError, StoreError) as exc:
                log.warning("lobby route %s: %s", request.url.path, exc)
                return refused(Refusal(503, "storage_unavailable", "the store is unreachable"))

        return guarded

    async def budget(self, key: str, per_minute: float, what: str) -> None:
        """Take one from the shared budget ``key``; a refusal with Retry-After past it."""
        grant = await self._buckets.take(key, per_minute / 60.0, max(1, int(per_minute)))
        if not grant.granted:
            wait = max(1, round(grant.retry_after))
            raise Refusal(429, "rate_limited", f"too many {what}; try again in {wait}s", wait)

    async def address_budget(self, request: Request, name: str, per_minute: int) -> None:
        """Take one from the client address's budget ``name``."""
        await self.budget(address_key(name, self._client_of(request)), per_minute, name)

    async def player_of(self, request: Request) -> Player:
        """The player the request's credential proves (refused without one)."""
        auth = request.headers.get("authorization", "")
        credential = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        player = await self.players.authenticate(credential) if credential else None
        if player is None:
            raise Refusal(401, "bad_credential", "a player credential is needed")
        return player

    async def body(self, request: Request, kind: type[_T]) -> _T:
        """The request's JSON body as ``kind``, read strictly."""
        body = await self._read_body(request)
        try:
            return msgspec.json.decode(body or b"{}", type=kind)
        except (msgspec.DecodeError, ValueError) as exc:
            raise Refusal(400, "bad_request", str(exc)) from None
