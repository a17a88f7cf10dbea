"""The rating routes: ``GET /api/players/{id}`` (a public profile) and ``GET
/api/leaderboard``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from server.engine.rules import PRESETS
from server.ratings import Track

from .player_routes import player_json
from .route_base import Refusal, RouteBase, answer

__all__ = ["RatingRoutes"]

# The most leaderboard rows one answer carries.
_BOARD_PAGE = 100


class RatingRoutes(RouteBase):
    """Profiles and leaderboards."""

    async def profile(self, request: Request) -> Response:
        """A player's public profile: name, colour, statistics, ratings, last change."""
        await self.address_budget(request, "profiles", self.limits.profiles_per_minute)
        player = await self.players.find(request.path_params["player"])
        if player is None:
            raise Refusal(404, "unknown_player", "no player has this id")
        return answer({"player": player_json(player)} | await self.ratings.profile(player.id))

    async def leaderboard(self, request: Request) -> Response:
        """The best players of a preset: ``?preset=classic&track=people&limit=20``."""
        await self.address_budget(request, "profiles", self.limits.profiles_per_minute)
        preset = request.query_params.get("preset", "classic")
        if preset not in PRESETS:
            raise Refusal(400, "bad_preset", f"preset must be one of {', '.join(PRESETS)}")
        try:
            track = Track(request.query_params.get("track", Track.PEOPLE))
        except ValueError:
            raise Refusal(400, "bad_track", "track must be people or bots") from None
        try:
            limit = int(request.query_params.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= _BOARD_PAGE:
            raise Refusal(400, "bad_limit", f"limit must be 1 to {_BOARD_PAGE}")
        rows = await self.ratings.leaderboard(preset, track, limit)
        return answer(
            {"preset": preset, "track": str(track),
             "rows": [{"rank": r.rank, "id": r.player, "name": r.name, "colour": r.colour,
                       "rating": r.rating, "matches": r.matches} for r in rows]}
        )  # fmt: skip
