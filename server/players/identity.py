"""A player identity without sign-up: an id, a secret, a display name and a colour.

A browser gets its identity on first visit and keeps the credential
``<id>.<secret>`` (in localStorage); Redis keeps only the secret's SHA-256, as it
does for seat tokens (``server.rooms.tokens``), so a leaked dump names players but
lets nobody act as one.  Keys, all with the player's hash tag so that one script or
one ``DEL`` covers a player on Redis Cluster:

- ``pdk:player:{<id>}``: hash ``secret`` (digest), ``name``, ``colour``, ``created``;
- ``pdk:player:{<id>}:recovery``: digest of the one recovery code issued last;
- ``pdk:player:{<id>}:stats``: the player's statistics (deleted with the player).

Every key expires ``ttl`` seconds after the player's last use (each authenticated
request refreshes it): an identity nobody uses for that long is gone, statistics too.
A recovery code moves the identity to another device: claiming it gives a new
secret and the old one stops working, so the identity is in one browser at a time.
"""

from __future__ import annotations

import hmac
import re
import secrets
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from server.errors import ServerError
from server.rooms.names import clean_name
from server.rooms.store import Redis
from server.rooms.tokens import hash_token

__all__ = [
    "COLOURS",
    "RECOVERY_SECONDS",
    "Player",
    "PlayerStore",
    "ProfileReason",
    "ProfileRefused",
    "parse_credential",
]

# Avatar colours a player may pick: distinct for people with the common colour-vision
# deficiencies (Okabe-Ito), all readable behind white text.
COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7a5195", "#555555")
# How long a recovery code works once issued.
RECOVERY_SECONDS = 24 * 3600

# KEYS[1]: the recovery key; ARGV[1]: the digest of the code brought.
_CLAIM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

_ID = re.compile(r"[A-Za-z0-9_-]{16}")
_SECRET = re.compile(r"[A-Za-z0-9_-]{32}")


class ProfileReason(StrEnum):
    """Why a profile change was refused (the wire code)."""

    BAD_COLOUR = "bad_colour"
    BAD_CREDENTIAL = "bad_credential"


class ProfileRefused(ServerError[ProfileReason]):
    """A profile change or credential refused; names refused raise ``NameRefused``."""


@dataclass(frozen=True, slots=True)
class Player:
    id: str
    name: str
    colour: str
    created: float


def parse_credential(text: str) -> tuple[str, str] | None:
    """``(id, secret)`` from ``"<id>.<secret>"``, or None for anything else (it becomes
    a Redis key part, so only the shapes this module makes pass)."""
    player_id, dot, secret = text.partition(".")
    if not dot or not _ID.fullmatch(player_id) or not _SECRET.fullmatch(secret):
        return None
    return player_id, secret


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _key(player_id: str, role: str = "") -> str:
    return f"pdk:player:{{{player_id}}}" + (f":{role}" if role else "")


def _default_name(player_id: str) -> str:
    # Not "Player N" (reserved for the seats' placeholders): "Guest" and four digits.
    return f"Guest {int.from_bytes(player_id.encode(), 'big') % 9000 + 1000}"


class PlayerStore:
    """Players in Redis: create, authenticate (refreshing the expiry), change, delete."""

    def __init__(self, redis: Redis, ttl_seconds: int) -> None:
        self._redis = redis
        self._ttl = ttl_seconds
        self._claim = redis.register_script(_CLAIM)

    async def create(self) -> tuple[Player, str]:
        """A new player and its credential (shown once: only its hash is kept)."""
        player_id = secrets.token_urlsafe(12)
        secret = secrets.token_urlsafe(24)
        player = Player(
            player_id,
            _default_name(player_id),
            COLOURS[secrets.randbelow(len(COLOURS))],
            time.time(),
        )
        key = _key(player_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hset(
                key,
                mapping={
                    "secret": hash_token(secret),
                    "name": player.name,
                    "colour": player.colour,
                    "created": repr(player.created),
                },
            )
            pipe.expire(key, self._ttl)
            await pipe.execute()
        return player, f"{player_id}.{secret}"

    async def authenticate(self, credential: str) -> Player | None:
        """The player whose credential this is (its keys' expiry refreshed), else None."""
        parsed = parse_credential(credential)
        if parsed is None:
            return None
        player_id, secret = parsed
        # One round trip: read and refresh together.  A wrong secret refreshes an
        # identity's expiry too, which only someone who knows its id could do, and which
        # gives them nothing.
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hmget(_key(player_id), ["secret", "name", "colour", "created"])
            pipe.expire(_key(player_id), self._ttl)
            pipe.expire(_key(player_id, "stats"), self._ttl)
            fields, _, _ = await pipe.execute()
        stored, name, colour, created = (None if f is None else _text(f) for f in fields)
        if stored is None or not hmac.compare_digest(stored, hash_token(secret)):
            return None
        return Player(player_id, str(name), str(colour), float(created or 0))

    async def find(self, player_id: str) -> Player | None:
        """The player with this id, as anyone may see it (no expiry refreshed), or None."""
        if not _ID.fullmatch(player_id):
            return None
        fields = await self._redis.hmget(_key(player_id), ["name", "colour", "created"])
        name, colour, created = (None if f is None else _text(f) for f in fields)
        if name is None:
            return None
        return Player(player_id, name, str(colour), float(created or 0))

    async def update(
        self, player: Player, *, name: str | None = None, colour: str | None = None
    ) -> Player:
        """The player renamed and/or recoloured; the name keeps the table's rules
        (``NameRefused``), the colour is one of ``COLOURS`` (``ProfileRefused``)."""
        changes: dict[Any, Any] = {}
        if name is not None:
            changes["name"] = clean_name(name)
        if colour is not None:
            if colour not in COLOURS:
                raise ProfileRefused(
                    ProfileReason.BAD_COLOUR, f"colour must be one of {', '.join(COLOURS)}"
                )
            changes["colour"] = colour
        if changes:
            # XX semantics: a player deleted meanwhile is not brought back by a rename.
            if not await self._redis.exists(_key(player.id)):
                raise ProfileRefused(ProfileReason.BAD_CREDENTIAL, "this player was deleted")
            await self._redis.hset(_key(player.id), mapping=changes)
        return Player(
            player.id, changes.get("name", player.name), changes.get("colour", player.colour),
            player.created,
        )  # fmt: skip

    async def issue_recovery(self, player: Player) -> str:
        """A one-time code (``<id>.<code>``) that moves this identity to another device
        within ``RECOVERY_SECONDS``; issuing another retires the previous one."""
        code = secrets.token_urlsafe(24)
        await self._redis.set(_key(player.id, "recovery"), hash_token(code), ex=RECOVERY_SECONDS)
        return f"{player.id}.{code}"

    async def recover(self, recovery: str) -> tuple[Player, str] | None:
        """Claim a recovery code: the player with a new credential (the old secret and the
        code stop working), or None when the code is unknown, used or expired."""
        parsed = parse_credential(recovery)
        if parsed is None:
            return None
        player_id, code = parsed
        # Compare and delete in one step: a code works once, even when two devices claim
        # it at the same time, and a wrong guess does not spend the right code.
        if not await self._claim(keys=[_key(player_id, "recovery")], args=[hash_token(code)]):
            return None
        secret = secrets.token_urlsafe(24)
        await self._redis.hset(_key(player_id), "secret", hash_token(secret))
        credential = f"{player_id}.{secret}"
        player = await self.authenticate(credential)
        return None if player is None else (player, credential)

    async def delete(self, player: Player) -> None:
        """The player and everything kept about them (statistics, a recovery code)."""
        await self._redis.delete(
            _key(player.id), _key(player.id, "recovery"), _key(player.id, "stats")
        )
