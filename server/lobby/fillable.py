"""The matchmaker's side of bot-seat takeovers: what a table's owner asks of it.

``FillableTables`` is the ``server.rooms.seat_takeover.FillLink`` the app installs:
the owner of a table asks it who was given a bot seat (the ``taken`` record the
join script wrote, ``server.lobby.queue``) when a socket joins that seat with a
token the seat does not know, which claims the seat for that player: from then on
it is never offered again, where an unclaimed one is once its claim time has
passed.  The owner also tells it when the table stops taking players (its match
ended, or nobody is there).
"""

from __future__ import annotations

import json

from server.rooms.store import Redis

from .queue import UNLIST, given_key, taken_key

__all__ = ["FillableTables"]

# KEYS: the seat's ``taken`` record, the table's ``given`` set; ARGV: the seat, the
# joining token's hash.  The record if that token was given the seat (which is then
# claimed: out of ``given``, never offered again), else nil; one step, so a seat is
# never both claimed and offered again.
_CLAIM = """
local taken = redis.call('GET', KEYS[1])
if not taken then return false end
if cjson.decode(cjson.decode(taken)[2]).hash ~= ARGV[2] then return false end
redis.call('ZREM', KEYS[2], ARGV[1])
return taken
"""


class FillableTables:
    """The fillable set in Redis, as the rooms of this process see it."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._unlist = redis.register_script(UNLIST)
        self._claim = redis.register_script(_CLAIM)

    async def claimed(self, table: str, seat: int, token_hash: str) -> str | None:
        """The name of the player given ``seat`` of ``table`` with that token (the
        seat is theirs for good from here), or None."""
        raw = await self._claim(
            keys=[taken_key(table, seat), given_key(table)], args=[seat, token_hash]
        )
        if raw is None:
            return None
        _, entry = json.loads(raw)
        return str(json.loads(entry).get("name") or "")

    async def unlist(self, table: str) -> None:
        """``table`` takes no more quick-match players."""
        await self._unlist(keys=["pdk:{mm}:fills"], args=[table])
