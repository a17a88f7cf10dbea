"""The player identity routes: ``POST /api/players``, ``GET|PATCH|DELETE
/api/players/me``, ``POST /api/players/me/recovery``, ``POST /api/players/recover``."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from server.players import Player, ProfileRefused
from server.rooms.names import MAX_RAW_NAME_CHARS, NameRefused

from .route_base import Refusal, RouteBase, answer

__all__ = ["PlayerRoutes", "player_json"]


class _ProfileChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(max_length=MAX_RAW_NAME_CHARS)] | None = None
    colour: Annotated[str, msgspec.Meta(max_length=16)] | None = None


class _Recover(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    code: Annotated[str, msgspec.Meta(max_length=200)]


def player_json(player: Player) -> dict[str, Any]:
    """A player's public fields."""
    return {"id": player.id, "name": player.name, "colour": player.colour}


class PlayerRoutes(RouteBase):
    """Making, changing, moving and deleting a player."""

    async def create_player(self, request: Request) -> Response:
        await self.address_budget(request, "players", self.limits.player_writes_per_minute)
        player, credential = await self.players.create()
        return answer({"player": player_json(player), "credential": credential}, 201)

    async def me(self, request: Request) -> Response:
        player = await self.player_of(request)
        if request.method == "GET":
            rated = await self.ratings.profile(player.id, own=True)
            return answer({"player": player_json(player)} | rated)
        per_player = f"pdk:player:{{{player.id}}}:budget:writes"
        await self.budget(per_player, self.limits.player_writes_per_minute, "profile changes")
        if request.method == "DELETE":
            await self.matchmaker.leave(player.id)
            await self.players.delete(player)
            await self.ratings.forget(player.id)
            return answer({"deleted": player.id})
        change = await self.body(request, _ProfileChange)
        try:
            player = await self.players.update(player, name=change.name, colour=change.colour)
        except NameRefused as exc:
            raise Refusal(400, "invalid_name", str(exc)) from None
        except ProfileRefused as exc:
            raise Refusal(400, exc.reason.value, exc.message) from None
        return answer({"player": player_json(player)})

    async def recovery(self, request: Request) -> Response:
        player = await self.player_of(request)
        per_player = f"pdk:player:{{{player.id}}}:budget:writes"
        await self.budget(per_player, self.limits.player_writes_per_minute, "profile changes")
        code = await self.players.issue_recovery(player)
        return answer({"link": f"/#recover={code}"})

    async def recover(self, request: Request) -> Response:
        await self.address_budget(request, "players", self.limits.player_writes_per_minute)
        body = await self.body(request, _Recover)
        found = await self.players.recover(body.code)
        if found is None:
            raise Refusal(404, "bad_recovery", "this recovery link was used, replaced or expired")
        player, credential = found
        return answer({"player": player_json(player), "credential": credential})
