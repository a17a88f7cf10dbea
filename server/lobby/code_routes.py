"""The room-code and lobby routes: ``GET /api/codes/{code}``, ``POST
/api/codes/{code}/join``, ``GET /api/lobby``, ``GET /api/lobby/events`` (server-sent
events), ``POST /api/lobby/open``; and a new table's code (``register_table``)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Annotated

import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from server.players import Player
from server.rooms.log import TableMeta
from server.rooms.seating import HOST_SEAT
from server.rooms.tables import CreatedTable, CreateTableRequest
from server.rooms.tokens import hash_token, invite_path, seat_for_token

from .listing import LISTED, LobbyBusy, listing_json
from .route_base import Refusal, RouteBase, answer

__all__ = ["CodeRoutes"]


class _Open(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    code: Annotated[str, msgspec.Meta(max_length=20)]
    token: Annotated[str, msgspec.Meta(max_length=200)]


class CodeRoutes(RouteBase):
    """Room codes, and the live list of open tables."""

    async def lookup(self, request: Request) -> Response:
        await self.address_budget(request, "codes", self.limits.codes_per_minute)
        facts = await self.codes.lookup(request.path_params["code"])
        return answer(
            {"code": facts.code, "rules": facts.rules, "deals": facts.deals, "bots": facts.bots,
             "free": facts.free, "open": facts.open}
        )  # fmt: skip

    async def join_code(self, request: Request) -> Response:
        await self.address_budget(request, "codes", self.limits.codes_per_minute)
        player: Player | None = None
        if request.headers.get("authorization"):
            player = await self.player_of(request)
        seat = await self.codes.join(request.path_params["code"], player.id if player else None)
        if player is not None:
            # The seat is this player's for ratings while its token is this one.
            await self.ratings.seat_player(seat.table, seat.seat, player.id, hash_token(seat.token))
        return answer(
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

    async def lobby(self, request: Request) -> Response:
        await self.address_budget(request, "lobby", self.limits.lobby_watchers_per_minute)
        return Response(
            listing_json(await self.codes.listed(LISTED)), media_type="application/json"
        )

    async def lobby_events(self, request: Request) -> Response:
        await self.address_budget(request, "lobby", self.limits.lobby_watchers_per_minute)
        stream = self.feed.watch()
        try:
            first = await anext(stream)
        except LobbyBusy:
            raise Refusal(503, "lobby_busy", "the lobby has as many watchers as it may") from None

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
        await self.address_budget(request, "codes", self.limits.codes_per_minute)
        body = await self.body(request, _Open)
        facts = await self.codes.lookup(body.code)
        meta: TableMeta | None = await self._store.load_meta(facts.table)
        hashes = [s.token_hash for s in meta.seats] if meta is not None else []
        if meta is None or seat_for_token(body.token, hashes) != HOST_SEAT:
            raise Refusal(403, "not_host", "only the table's host may list it")
        await self.codes.open_table(body.code, time.time())
        return answer({"code": facts.code, "open": True})
