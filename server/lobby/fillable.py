"""The matchmaker's side of bot-seat takeovers: what a table's owner asks of it.

``FillableTables`` is the ``server.rooms.seat_takeover.FillLink`` the app installs:
the owner of a table asks it who was given a bot seat (the ``taken`` record the
join script wrote, ``server.lobby.queue``) when a socket joins that seat with a
token the seat does not know, and tells it when the table stops taking players
(its match ended, or nobody is there).
"""

from __future__ import annotations

import json

from server.rooms.store import Redis

from .queue import UNLIST, taken_key

__all__ = ["FillableTables"]


class FillableTables:
    """The fillable set in Redis, as the rooms of this process see it."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._unlist = redis.register_script(UNLIST)

    async def claimed(self, table: str, seat: int, token_hash: str) -> str | None:
        """The name of the player given ``seat`` of ``table`` with that token."""
        raw = await self._redis.get(taken_key(table, seat))
        if raw is None:
            return None
        _, entry = json.loads(raw)
        given = json.loads(entry)
        if given.get("hash") != token_hash:
            return None
        return str(given.get("name") or "")

    async def unlist(self, table: str) -> None:
        """``table`` takes no more quick-match players."""
        await self._unlist(keys=["pdk:{mm}:fills"], args=[table])
