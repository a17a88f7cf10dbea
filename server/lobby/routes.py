"""The HTTP routes of players, room codes, the lobby and quick match.

``LobbyRoutes`` holds the services (built in the app's lifespan) and answers, each
idea in its module (``player_routes``, ``code_routes``, ``match_routes``,
``rating_routes``, over ``route_base``):

- ``POST /api/players``, ``GET|PATCH|DELETE /api/players/me``,
  ``POST /api/players/me/recovery``, ``POST /api/players/recover``;
- ``GET /api/codes/{code}``, ``POST /api/codes/{code}/join``;
- ``GET /api/lobby``, ``GET /api/lobby/events`` (server-sent events),
  ``POST /api/lobby/open``;
- ``POST|GET|DELETE /api/match`` (quick match: join, poll, leave);
- ``GET /api/players/{id}`` (a public profile), ``GET /api/leaderboard``.

A player proves who they are with ``Authorization: Bearer <id>.<secret>``.  Every
route a client can repeat is charged to a shared budget (``server.budgets``) before
it does anything else; docs/protocol.md lists the answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.routing import Route

from server.budgets import SharedBuckets
from server.players import PlayerStore
from server.ratings import RatingStore
from server.rooms.store import TableStore

from .code_routes import CodeRoutes
from .codes import Codes
from .listing import LobbyFeed
from .match_routes import MatchRoutes
from .player_routes import PlayerRoutes
from .queue import Matchmaker
from .rating_routes import RatingRoutes
from .route_base import LobbyLimits

__all__ = ["LobbyLimits", "LobbyRoutes"]


class LobbyRoutes(PlayerRoutes, CodeRoutes, MatchRoutes, RatingRoutes):
    """The routes, over the services ``start`` builds (called in the app's lifespan)."""

    def __init__(
        self,
        limits: LobbyLimits,
        *,
        client_of: Callable[[Request], str],
        read_body: Callable[[Request], Awaitable[bytes]],
    ) -> None:
        self.limits = limits
        self._client_of = client_of
        self._read_body = read_body

    def start(
        self,
        *,
        players: PlayerStore,
        codes: Codes,
        feed: LobbyFeed,
        matchmaker: Matchmaker,
        store: TableStore,
        buckets: SharedBuckets,
        ratings: RatingStore,
    ) -> None:
        self.players, self.codes, self.feed, self.matchmaker = players, codes, feed, matchmaker
        self._store, self._buckets, self.ratings = store, buckets, ratings

    def routes(self) -> list[Route]:
        return [
            Route("/api/players", self.guard(self.create_player), methods=["POST"]),
            Route("/api/players/me", self.guard(self.me), methods=["GET", "PATCH", "DELETE"]),
            Route("/api/players/me/recovery", self.guard(self.recovery), methods=["POST"]),
            Route("/api/players/recover", self.guard(self.recover), methods=["POST"]),
            Route("/api/codes/{code}", self.guard(self.lookup), methods=["GET"]),
            Route("/api/codes/{code}/join", self.guard(self.join_code), methods=["POST"]),
            Route("/api/lobby", self.guard(self.lobby), methods=["GET"]),
            Route("/api/lobby/events", self.guard(self.lobby_events), methods=["GET"]),
            Route("/api/lobby/open", self.guard(self.open_table), methods=["POST"]),
            Route("/api/match", self.guard(self.match), methods=["POST", "GET", "DELETE"]),
            # After /api/players/me, which this pattern would match too.
            Route("/api/players/{player}", self.guard(self.profile), methods=["GET"]),
            Route("/api/leaderboard", self.guard(self.leaderboard), methods=["GET"]),
        ]
