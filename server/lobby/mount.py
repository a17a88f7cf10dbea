"""The lobby of one server process, put together: players, room codes, the open-table
list, quick match and ratings, as the app mounts them.

The app knows the lobby by this one object: its HTTP routes (ready before the
app starts, answering once ``start`` has run), the code a new table gets
(``register_table``), and its life, which is the app's (``start`` in the
lifespan once Redis is up, ``close`` as it ends).  Everything that needs Redis
is built in ``start``: the stores, the open-table feed, the matchmaker, the
rating worker that settles the finished matches of this process's tables, and
the two links the rooms use without knowing the lobby (``server.ratings`` and
``server.rooms.seat_takeover`` are told where to send; ``close`` unhooks them).

The lobby sits below the settings (``server.config``): it reads what it needs
through ``LobbySettings``, which the app's ``Settings`` satisfies as it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from redis import asyncio as aioredis
from starlette.requests import Request
from starlette.routing import Route

from server import ratings
from server.budgets import SharedBuckets
from server.players import PlayerStore
from server.ratings import RatingStore, RatingWorker
from server.rooms import seat_takeover
from server.rooms.store import Redis, TableStore
from server.rooms.tables import CreatedTable, CreateTableRequest

from .codes import Codes
from .fillable import FillableTables
from .listing import LobbyFeed
from .queue import Matchmaker
from .routes import LobbyLimits, LobbyRoutes

__all__ = ["Lobby", "LobbySettings"]


class LobbySettings(Protocol):
    """The server settings the lobby reads (``server.config.Settings`` has them all)."""

    @property
    def player_writes_per_minute(self) -> int: ...
    @property
    def codes_per_minute(self) -> int: ...
    @property
    def lobby_watchers_per_minute(self) -> int: ...
    @property
    def queue_joins_per_minute(self) -> int: ...
    @property
    def queue_polls_per_second(self) -> int: ...
    @property
    def max_tables(self) -> int: ...
    @property
    def profiles_per_minute(self) -> int: ...
    @property
    def table_ttl_seconds(self) -> int: ...
    @property
    def max_open_tables(self) -> int: ...
    @property
    def lobby_watchers(self) -> int: ...
    @property
    def rating_retention_seconds(self) -> int: ...
    @property
    def player_ttl_seconds(self) -> int: ...
    @property
    def leaderboard_size(self) -> int: ...
    @property
    def rating_jobs(self) -> int: ...
    @property
    def match_wait_seconds(self) -> int: ...
    @property
    def queue_drop_seconds(self) -> int: ...
    @property
    def unjoined_table_ttl_seconds(self) -> int: ...
    @property
    def max_queued(self) -> int: ...
    @property
    def quick_match_fill_tables(self) -> int: ...
    @property
    def quick_match_fill_seconds(self) -> int: ...
    @property
    def quick_match_claim_seconds(self) -> int: ...


class Lobby:
    """Players, room codes, the lobby, quick match and ratings of one process (see the
    module's docstring)."""

    __slots__ = ("_http", "_rating_worker", "_settings", "feed")

    def __init__(
        self,
        settings: LobbySettings,
        *,
        client_of: Callable[[Request], str],
        read_body: Callable[[Request], Awaitable[bytes]],
    ) -> None:
        self._settings = settings
        self._http = LobbyRoutes(
            LobbyLimits(
                player_writes_per_minute=settings.player_writes_per_minute,
                codes_per_minute=settings.codes_per_minute,
                lobby_watchers_per_minute=settings.lobby_watchers_per_minute,
                queue_joins_per_minute=settings.queue_joins_per_minute,
                queue_polls_per_second=settings.queue_polls_per_second,
                max_tables=settings.max_tables,
                profiles_per_minute=settings.profiles_per_minute,
            ),
            client_of=client_of,
            read_body=read_body,
        )
        self._rating_worker: RatingWorker | None = None
        # The open-table feed, once started: the server closes it as it drains, so that
        # open lobby streams do not hold the drain up (``server.cli``).
        self.feed: LobbyFeed | None = None

    def routes(self) -> list[Route]:
        """The lobby's HTTP routes, to mount in the app (``routes.py`` lists them)."""
        return self._http.routes()

    async def register_table(self, create: CreateTableRequest, created: CreatedTable) -> str:
        """The code of a table ``POST /api/tables`` just created (its seats but the
        host's are the code's to hand out)."""
        return await self._http.register_table(create, created)

    def start(
        self, tables: Redis, subscriber: aioredis.Redis, store: TableStore, buckets: SharedBuckets
    ) -> LobbyFeed:
        """Build the lobby's services on ``tables`` (``subscriber`` reads the open-table
        changes) and hook the rooms up to the ratings and quick match; the feed."""
        settings = self._settings
        codes = Codes(tables, settings.table_ttl_seconds, settings.max_open_tables)
        feed = LobbyFeed(codes, subscriber, settings.lobby_watchers)
        self.feed = feed
        rating_store = RatingStore(
            tables,
            retention_seconds=settings.rating_retention_seconds,
            player_ttl_seconds=settings.player_ttl_seconds,
            board_size=settings.leaderboard_size,
            table_ttl_seconds=settings.table_ttl_seconds,
        )
        # Finished matches of the tables this process owns are rated off their actors.
        rating_worker = RatingWorker(rating_store, max_jobs=settings.rating_jobs, tries=12)
        rating_worker.start()
        self._rating_worker = rating_worker
        ratings.install(rating_worker.submit)
        seat_takeover.install(FillableTables(tables))
        self._http.start(
            players=PlayerStore(tables, settings.player_ttl_seconds),
            codes=codes,
            feed=feed,
            matchmaker=Matchmaker(
                tables,
                wait_ms=settings.match_wait_seconds * 1000,
                drop_ms=settings.queue_drop_seconds * 1000,
                seat_ttl_ms=settings.unjoined_table_ttl_seconds * 1000,
                max_queued=settings.max_queued,
                fill_max=settings.quick_match_fill_tables,
                fill_ttl_ms=settings.quick_match_fill_seconds * 1000,
                fill_claim_ms=settings.quick_match_claim_seconds * 1000,
            ),
            store=store,
            buckets=buckets,
            ratings=rating_store,
        )
        return feed

    async def close(self) -> None:
        """End the feed's streams, unhook the rooms, and let the rating worker finish
        (before the Redis clients it writes through go)."""
        if self.feed is not None:
            await self.feed.close()
        ratings.install(None)
        seat_takeover.install(None)
        if self._rating_worker is not None:
            await self._rating_worker.close()
