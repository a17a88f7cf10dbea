"""The quick-match route: ``POST|GET|DELETE /api/match`` (join, poll, leave)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from server.rooms.store import TooManyTables
from server.rooms.tokens import hash_token, new_table_id, new_token

from .matched import make_table
from .queue import Member, Place, queue_name
from .route_base import Refusal, RouteBase, answer

__all__ = ["MatchRoutes", "place_json"]


class _QuickMatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    rules: Annotated[str, msgspec.Meta(max_length=20)] = "classic"
    deals: int = 1
    # The SHA-256 of a seat token the client made itself: the server never sees the
    # token, and a join repeated after a lost answer finds the same place.
    token_hash: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")] | None = None


def place_json(place: Place | None) -> dict[str, Any]:
    if place is None:
        return {"status": "none"}
    if place.table is None:
        return {"status": "queued", "queue": place.queue, "waited_ms": place.waited_ms}
    seated = {"status": "seated", "table": place.table, "seat": place.seat}
    # A bot's seat at a table already playing: the player watches until the deal ends.
    return seated | ({"joins": "next_deal"} if place.filled else {})


class MatchRoutes(RouteBase):
    """Quick match: join a queue, poll it, leave it."""

    async def match(self, request: Request) -> Response:
        player = await self.player_of(request)
        if request.method == "DELETE":
            return answer({"left": await self.matchmaker.leave(player.id)})
        if request.method == "GET":
            per_player = f"pdk:player:{{{player.id}}}:budget:polls"
            rate = self.limits.queue_polls_per_second
            await self.budget(per_player, rate * 60, "quick-match polls")
            place, group = await self.matchmaker.poll(player.id, new_table_id())
            await self._seat(place, group)
            return answer(place_json(place))
        per_player = f"pdk:player:{{{player.id}}}:budget:joins"
        await self.budget(per_player, self.limits.queue_joins_per_minute, "quick-match joins")
        await self.address_budget(request, "queue", self.limits.queue_joins_per_minute)
        wanted = await self.body(request, _QuickMatch)
        try:
            queue = queue_name(wanted.rules, wanted.deals)
        except ValueError as exc:
            raise Refusal(400, "bad_request", str(exc)) from None
        token = new_token() if wanted.token_hash is None else None
        token_hash = wanted.token_hash or hash_token(token or "")
        member = Member(player.id, player.name, player.colour, token_hash)
        place, group, already = await self.matchmaker.join(member, queue, new_table_id())
        if place is None:
            raise Refusal(503, "queue_full", "the quick-match queues are full; try again soon")
        if already:
            # The same join again (its answer was lost): the place it got.
            if wanted.token_hash is not None and (
                await self.matchmaker.token_hash_of(player.id, place) == wanted.token_hash
            ):
                await self._seat(place, None)
                return answer(place_json(place))
            raise Refusal(
                409, "already_matched", "you are already queued or seated: leave that first"
            )
        await self._seat(place, group)
        if place.filled and place.table is not None and place.seat is not None:
            # The seat is this player's for ratings once they take it over.
            await self.ratings.seat_player(place.table, place.seat, player.id, token_hash)
        reply = place_json(place) | ({"token": token} if token is not None else {})
        return answer(reply, 201)

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
            raise Refusal(
                429, "too_many_tables", "the server holds as many tables as it may; try later"
            ) from None
