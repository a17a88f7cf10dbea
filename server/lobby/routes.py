"""The HTTP routes of players, room codes, the lobby and quick match.

``LobbyRoutes`` holds the services (built in the app's lifespan) and answers:

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

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import msgspec
from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from server.budgets import SharedBuckets, address_key
from server.engine.rules import PRESETS
from server.players import Player, PlayerStore, ProfileRefused
from server.ratings import RatingStore, Track
from server.rooms.log import TableMeta
from server.rooms.names import MAX_RAW_NAME_CHARS, NameRefused
from server.rooms.seating import HOST_SEAT
from server.rooms.store import StoreError, TableStore, TooManyTables
from server.rooms.tables import CreatedTable, CreateTableRequest
from server.rooms.tokens import hash_token, invite_path, new_table_id, new_token, seat_for_token

from .codes import CodeError, Codes
from .listing import LISTED, LobbyBusy, LobbyFeed, listing_json
from .matched import make_table
from .queue import Matchmaker, Member, Place, queue_name

__all__ = ["LobbyLimits", "LobbyRoutes"]

# The most leaderboard rows one answer carries.
_BOARD_PAGE = 100

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


class _ProfileChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(max_length=MAX_RAW_NAME_CHARS)] | None = None
    colour: Annotated[str, msgspec.Meta(max_length=16)] | None = None


class _Recover(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    code: Annotated[str, msgspec.Meta(max_length=200)]


class _Open(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    code: Annotated[str, msgspec.Meta(max_length=20)]
    token: Annotated[str, msgspec.Meta(max_length=200)]


class _QuickMatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    rules: Annotated[str, msgspec.Meta(max_length=20)] = "classic"
    deals: int = 1
    # The SHA-256 of a seat token the client made itself: the server never sees the
    # token, and a join repeated after a lost answer finds the same place.
    token_hash: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")] | None = None


class _Refusal(Exception):
    def __init__(self, status: int, code: str, message: str, retry: float = 0) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.retry = status, code, message, retry


def _json(content: Any, status: int = 200) -> Response:
    return Response(_encoder.encode(content), status_code=status, media_type="application/json")


def _refused(refusal: _Refusal) -> Response:
    headers = {"Retry-After": str(max(1, round(refusal.retry)))} if refusal.status == 429 else None
    body = {"error": {"code": refusal.code, "message": refusal.message}}
    return Response(_encoder.encode(body), refusal.status, headers, "application/json")


def _player_json(player: Player) -> dict[str, Any]:
    return {"id": player.id, "name": player.name, "colour": player.colour}


def _place_json(place: Place | None) -> dict[str, Any]:
    if place is None:
        return {"status": "none"}
    if place.table is None:
        return {"status": "queued", "queue": place.queue, "waited_ms": place.waited_ms}
    seated = {"status": "seated", "table": place.table, "seat": place.seat}
    # A bot's seat at a table already playing: the player watches until the deal ends.
    return seated | ({"joins": "next_deal"} if place.filled else {})


Handler = Callable[[Request], Awaitable[Response]]


class LobbyRoutes:
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
        self.players: PlayerStore
        self.codes: Codes
        self.feed: LobbyFeed
        self.matchmaker: Matchmaker
        self._store: TableStore
        self._buckets: SharedBuckets
        self.ratings: RatingStore

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
            Route("/api/players", self._guard(self.create_player), methods=["POST"]),
            Route("/api/players/me", self._guard(self.me), methods=["GET", "PATCH", "DELETE"]),
            Route("/api/players/me/recovery", self._guard(self.recovery), methods=["POST"]),
            Route("/api/players/recover", self._guard(self.recover), methods=["POST"]),
            Route("/api/codes/{code}", self._guard(self.lookup), methods=["GET"]),
            Route("/api/codes/{code}/join", self._guard(self.join_code), methods=["POST"]),
            Route("/api/lobby", self._guard(self.lobby), methods=["GET"]),
            Route("/api/lobby/events", self._guard(self.lobby_events), methods=["GET"]),
            Route("/api/lobby/open", self._guard(self.open_table), methods=["POST"]),
            Route("/api/match", self._guard(self.match), methods=["POST", "GET", "DELETE"]),
            # After /api/players/me, which this pattern would match too.
            Route("/api/players/{player}", self._guard(self.profile), methods=["GET"]),
            Route("/api/leaderboard", self._guard(self.leaderboard), methods=["GET"]),
        ]

    def _guard(self, handler: Handler) -> Handler:
        """Refusals and an unreachable Redis become error answers, one place for all."""

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except _Refusal as refusal:
                return _refused(refusal)
            except CodeError as exc:
                status = 404 if exc.reason.value == "unknown_code" else 409
                status = 400 if exc.reason.value == "bad_code" else status
                return _refused(_Refusal(status, exc.reason.value, exc.message))
            except (RedisError, OSError, StoreError) as exc:
                log.warning("lobby route %s: %s", request.url.path, exc)
                return _refused(_Refusal(503, "storage_unavailable", "the store is unreachable"))

        return guarded

    # ------------------------------------------------------------------ helpers

    async def _budget(self, key: str, per_minute: float, what: str) -> None:
        grant = await self._buckets.take(key, per_minute / 60.0, max(1, int(per_minute)))
        if not grant.granted:
            wait = max(1, round(grant.retry_after))
            raise _Refusal(429, "rate_limited", f"too many {what}; try again in {wait}s", wait)

    async def _address_budget(self, request: Request, name: str, per_minute: int) -> None:
        await self._budget(address_key(name, self._client_of(request)), per_minute, name)

    async def _player(self, request: Request) -> Player:
        auth = request.headers.get("authorization", "")
        credential = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        player = await self.players.authenticate(credential) if credential else None
        if player is None:
            raise _Refusal(401, "bad_credential", "a player credential is needed")
        return player

    async def _body(self, request: Request, kind: type[_T]) -> _T:
        body = await self._read_body(request)
        try:
            return msgspec.json.decode(body or b"{}", type=kind)
        except (msgspec.DecodeError, ValueError) as exc:
            raise _Refusal(400, "bad_request", str(exc)) from None

    # ------------------------------------------------------------------ players

    async def create_player(self, request: Request) -> Response:
        await self._address_budget(request, "players", self.limits.player_writes_per_minute)
        player, credential = await self.players.create()
        return _json({"player": _player_json(player), "credential": credential}, 201)

    async def me(self, request: Request) -> Response:
        player = await self._player(request)
        if request.method == "GET":
            rated = await self.ratings.profile(player.id, own=True)
            return _json({"player": _player_json(player)} | rated)
        per_player = f"pdk:player:{{{player.id}}}:budget:writes"
        await self._budget(per_player, self.limits.player_writes_per_minute, "profile changes")
        if request.method == "DELETE":
            await self.matchmaker.leave(player.id)
            await self.players.delete(player)
            await self.ratings.forget(player.id)
            return _json({"deleted": player.id})
        change = await self._body(request, _ProfileChange)
        try:
            player = await self.players.update(player, name=change.name, colour=change.colour)
        except NameRefused as exc:
            raise _Refusal(400, "invalid_name", str(exc)) from None
        except ProfileRefused as exc:
            raise _Refusal(400, exc.reason.value, exc.message) from None
        return _json({"player": _player_json(player)})

    async def recovery(self, request: Request) -> Response:
        player = await self._player(request)
        per_player = f"pdk:player:{{{player.id}}}:budget:writes"
        await self._budget(per_player, self.limits.player_writes_per_minute, "profile changes")
        code = await self.players.issue_recovery(player)
        return _json({"link": f"/#recover={code}"})

    async def recover(self, request: Request) -> Response:
        await self._address_budget(request, "players", self.limits.player_writes_per_minute)
        body = await self._body(request, _Recover)
        found = await self.players.recover(body.code)
        if found is None:
            raise _Refusal(404, "bad_recovery", "this recovery link was used, replaced or expired")
        player, credential = found
        return _json({"player": _player_json(player), "credential": credential})

    # ------------------------------------------------------------------ codes

    async def lookup(self, request: Request) -> Response:
        await self._address_budget(request, "codes", self.limits.codes_per_minute)
        facts = await self.codes.lookup(request.path_params["code"])
        return _json(
            {"code": facts.code, "rules": facts.rules, "deals": facts.deals, "bots": facts.bots,
             "free": facts.free, "open": facts.open}
        )  # fmt: skip

    async def join_code(self, request: Request) -> Response:
        await self._address_budget(request, "codes", self.limits.codes_per_minute)
        player: Player | None = None
        if request.headers.get("authorization"):
            player = await self._player(request)
        seat = await self.codes.join(request.path_params["code"], player.id if player else None)
        if player is not None:
            # The seat is this player's for ratings while its token is this one.
            await self.ratings.seat_player(seat.table, seat.seat, player.id, hash_token(seat.token))
        return _json(
            {"table": seat.table, "seat": seat.seat, "token": seat.token,
             "invite": invite_path(seat.table, seat.seat, seat.token)}
        )  # fmt: skip

    async def register_table(self, create: CreateTableRequest, created: CreatedTable) -> str:
        """The code of a table just created by ``POST /api/tables``: its seats but the
        host's are the code's to hand out."""
        # The bot seats' levels as the table got them (``tables.build_table``).
        levels = create.bots if create.bots is not None else ["normal"] * (3 - create.humans)
        bots = ",".join(levels)
        free = [(s.seat, s.token) for s in created.seats if s.seat != HOST_SEAT]
        return await self.codes.register(
            created.table, rules=create.rules, deals=create.deals, bots=bots, free=free
        )

    # ------------------------------------------------------------------ lobby

    async def lobby(self, request: Request) -> Response:
        await self._address_budget(request, "lobby", self.limits.lobby_watchers_per_minute)
        return Response(
            listing_json(await self.codes.listed(LISTED)), media_type="application/json"
        )

    async def lobby_events(self, request: Request) -> Response:
        await self._address_budget(request, "lobby", self.limits.lobby_watchers_per_minute)
        stream = self.feed.watch()
        try:
            first = await anext(stream)
        except LobbyBusy:
            raise _Refusal(503, "lobby_busy", "the lobby has as many watchers as it may") from None

        async def events() -> AsyncIterator[bytes]:
            try:
                yield b"data: " + first + b"\n\n"
                async for snapshot in stream:
                    yield b"data: " + snapshot + b"\n\n"
            finally:
                await stream.aclose()

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def open_table(self, request: Request) -> Response:
        """The host (seat 0's token) lists the table in the lobby."""
        await self._address_budget(request, "codes", self.limits.codes_per_minute)
        body = await self._body(request, _Open)
        facts = await self.codes.lookup(body.code)
        meta: TableMeta | None = await self._store.load_meta(facts.table)
        hashes = [s.token_hash for s in meta.seats] if meta is not None else []
        if meta is None or seat_for_token(body.token, hashes) != HOST_SEAT:
            raise _Refusal(403, "not_host", "only the table's host may list it")
        await self.codes.open_table(body.code, time.time())
        return _json({"code": facts.code, "open": True})

    # ------------------------------------------------------------------ quick match

    async def match(self, request: Request) -> Response:
        player = await self._player(request)
        if request.method == "DELETE":
            return _json({"left": await self.matchmaker.leave(player.id)})
        if request.method == "GET":
            per_player = f"pdk:player:{{{player.id}}}:budget:polls"
            rate = self.limits.queue_polls_per_second
            await self._budget(per_player, rate * 60, "quick-match polls")
            place, group = await self.matchmaker.poll(player.id, new_table_id())
            await self._seat(place, group)
            return _json(_place_json(place))
        per_player = f"pdk:player:{{{player.id}}}:budget:joins"
        await self._budget(per_player, self.limits.queue_joins_per_minute, "quick-match joins")
        await self._address_budget(request, "queue", self.limits.queue_joins_per_minute)
        wanted = await self._body(request, _QuickMatch)
        try:
            queue = queue_name(wanted.rules, wanted.deals)
        except ValueError as exc:
            raise _Refusal(400, "bad_request", str(exc)) from None
        token = new_token() if wanted.token_hash is None else None
        token_hash = wanted.token_hash or hash_token(token or "")
        member = Member(player.id, player.name, player.colour, token_hash)
        place, group, already = await self.matchmaker.join(member, queue, new_table_id())
        if place is None:
            raise _Refusal(503, "queue_full", "the quick-match queues are full; try again soon")
        if already:
            # The same join again (its answer was lost): the place it got.
            if wanted.token_hash is not None and (
                await self.matchmaker.token_hash_of(player.id, place) == wanted.token_hash
            ):
                await self._seat(place, None)
                return _json(_place_json(place))
            raise _Refusal(
                409, "already_matched", "you are already queued or seated: leave that first"
            )
        await self._seat(place, group)
        if place.filled and place.table is not None and place.seat is not None:
            # The seat is this player's for ratings once they take it over.
            await self.ratings.seat_player(place.table, place.seat, player.id, token_hash)
        answer = _place_json(place) | ({"token": token} if token is not None else {})
        return _json(answer, 201)

    async def _seat(self, place: Place | None, group: Any) -> None:
        """Make the table of a group this step seated, or of the player's own table if
        the process that seated them died before making it."""
        try:
            if group is not None:
                await make_table(
                    self._store, self.codes, group, max_tables=self.limits.max_tables,
                    ratings=self.ratings,
                )  # fmt: skip
            # A group's table made here, or by the process that seated it, is there now.
            missing = place is not None and place.table is not None and group is None
            if missing and place is not None and place.table is not None:
                found = await self.matchmaker.group_of(place.table)
                if found is not None:
                    await make_table(
                        self._store, self.codes, found, max_tables=self.limits.max_tables,
                        ratings=self.ratings,
                    )  # fmt: skip
        except TooManyTables:
            raise _Refusal(
                429, "too_many_tables", "the server holds as many tables as it may; try later"
            ) from None

    # ------------------------------------------------------------------ ratings

    async def profile(self, request: Request) -> Response:
        """A player's public profile: name, colour, statistics, ratings, last change."""
        await self._address_budget(request, "profiles", self.limits.profiles_per_minute)
        player = await self.players.find(request.path_params["player"])
        if player is None:
            raise _Refusal(404, "unknown_player", "no player has this id")
        return _json({"player": _player_json(player)} | await self.ratings.profile(player.id))

    async def leaderboard(self, request: Request) -> Response:
        """The best players of a preset: ``?preset=classic&track=people&limit=20``."""
        await self._address_budget(request, "profiles", self.limits.profiles_per_minute)
        preset = request.query_params.get("preset", "classic")
        if preset not in PRESETS:
            raise _Refusal(400, "bad_preset", f"preset must be one of {', '.join(PRESETS)}")
        try:
            track = Track(request.query_params.get("track", Track.PEOPLE))
        except ValueError:
            raise _Refusal(400, "bad_track", "track must be people or bots") from None
        try:
            limit = int(request.query_params.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= _BOARD_PAGE:
            raise _Refusal(400, "bad_limit", f"limit must be 1 to {_BOARD_PAGE}")
        rows = await self.ratings.leaderboard(preset, track, limit)
        return _json(
            {"preset": preset, "track": str(track),
             "rows": [{"rank": r.rank, "id": r.player, "name": r.name, "colour": r.colour,
                       "rating": r.rating, "matches": r.matches} for r in rows]}
        )  # fmt: skip
