"""Room codes and open tables: six characters that lead to a table's free seats.

Every table gets a code when it is created (``register``).  The code's record holds
the table's public facts (rules preset, match length, bot level) and the invites of
its human seats nobody has taken yet; ``join`` hands the next one to whoever brings
the code, once per player identity (one identity, one seat per table).  A host may
list the table in the lobby (``open_table``); it leaves the list when its last free
seat is taken or its record expires.  Every change of the list is published on
``CHANGES`` (``server.lobby.listing`` tells the lobby's watchers).

Keys share the hash tag ``{lobby}`` so each script touches one slot on Redis Cluster:

- ``pdk:{lobby}:code:<CODE>``: hash ``table``, ``rules``, ``deals``, ``bots``,
  ``free`` (JSON list of ``[seat, token]``), ``seated`` (JSON list of player ids),
  ``open`` ("1" when listed); it expires with the table (``ttl``).
- ``pdk:{lobby}:open``: sorted set of listed codes by the time they were opened.

A code's record holds seat invites in the clear: the code *is* the invite the host
hands out (as the invite link would be), so it is a secret of the same rank; it lasts
as long as the table may, and ``join`` and ``lookup`` are rate limited per client
address (``--codes-per-minute``).  31 characters to the power 6 is 887 million codes:
at 20 look-ups a minute an address needs, with 10,000 live codes, about 3 days of
guessing on average to hit any table, and only a table with a seat still free is worth
hitting.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from server.errors import ServerError
from server.rooms.store import Redis

__all__ = [
    "ALPHABET",
    "CHANGES",
    "CODE_LENGTH",
    "CodeError",
    "CodeReason",
    "Codes",
    "Seat",
    "TableFacts",
    "normalise_code",
]

# Digits and capitals without the look-alikes 0/O, 1/I/L (31 characters).
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
# The channel every change of the open-table list is published on.
CHANGES = "pdk:lobby:changes"
OPEN_KEY = "pdk:{lobby}:open"
# Tries at a fresh code before giving up (a clash is one in millions per try).
_TRIES = 8


def _code_key(code: str) -> str:
    return f"pdk:{{lobby}}:code:{code}"


class CodeReason(StrEnum):
    """Why a code was refused (the wire code)."""

    BAD_CODE = "bad_code"
    UNKNOWN_CODE = "unknown_code"
    NO_FREE_SEAT = "no_free_seat"
    ALREADY_SEATED = "already_seated"
    LOBBY_FULL = "lobby_full"


class CodeError(ServerError[CodeReason]):
    """A code look-up or join refused."""


@dataclass(frozen=True, slots=True)
class TableFacts:
    """What the lobby shows of a table."""

    code: str
    table: str
    rules: str
    deals: int
    bots: str
    free: int
    open: bool


@dataclass(frozen=True, slots=True)
class Seat:
    """A seat handed out by a code: its table, number and token."""

    table: str
    seat: int
    token: str


def normalise_code(text: str) -> str:
    """The code as stored, from what a person typed (case and spaces aside); raises
    ``CodeError`` when it cannot be a code."""
    code = "".join(text.split()).upper()[: CODE_LENGTH + 1]
    if len(code) != CODE_LENGTH or any(ch not in ALPHABET for ch in code):
        raise CodeError(
            CodeReason.BAD_CODE,
            f"a room code is {CODE_LENGTH} characters from {ALPHABET}",
        )
    return code


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


# KEYS[1]: the code, KEYS[2]: the open list.  ARGV: player id ('' for none).
# Returns {status, table, seat, token}; status 'ok', 'unknown', 'full' or 'seated'.
_JOIN = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {'unknown', '', 0, ''} end
local table_id = redis.call('HGET', KEYS[1], 'table')
local seated = cjson.decode(redis.call('HGET', KEYS[1], 'seated'))
if ARGV[1] ~= '' then
  for _, who in ipairs(seated) do
    if who == ARGV[1] then return {'seated', table_id, 0, ''} end
  end
end
local free = cjson.decode(redis.call('HGET', KEYS[1], 'free'))
if #free == 0 then return {'full', table_id, 0, ''} end
local taken = table.remove(free, 1)
if ARGV[1] ~= '' then table.insert(seated, ARGV[1]) end
local encoded_free = '[]'
if #free > 0 then encoded_free = cjson.encode(free) end
local encoded_seated = '[]'
if #seated > 0 then encoded_seated = cjson.encode(seated) end
redis.call('HSET', KEYS[1], 'free', encoded_free, 'seated', encoded_seated)
if redis.call('HGET', KEYS[1], 'open') == '1' then
  if #free == 0 then
    redis.call('ZREM', KEYS[2], ARGV[2])
    redis.call('HSET', KEYS[1], 'open', '0')
  end
  redis.call('PUBLISH', ARGV[3], ARGV[2])
end
return {'ok', table_id, taken[1], taken[2]}
"""

# KEYS[1]: the code, KEYS[2]: the open list.  ARGV: code, now, most listed, channel.
# Returns 'ok', 'unknown', 'full' (no seat to offer) or 'lobby_full'.
_OPEN = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'unknown' end
if redis.call('HGET', KEYS[1], 'free') == '[]' then return 'full' end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) == false then
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 'lobby_full' end
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
end
redis.call('HSET', KEYS[1], 'open', '1')
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 'ok'
"""

_FIELDS = ("table", "rules", "deals", "bots", "free", "open")


class Codes:
    """The codes of every table, in Redis (see the module's docstring)."""

    def __init__(self, redis: Redis, ttl_seconds: int, max_open: int) -> None:
        self._redis = redis
        self._ttl = ttl_seconds
        self._max_open = max_open
        self._join = redis.register_script(_JOIN)
        self._open = redis.register_script(_OPEN)

    async def register(
        self, table: str, *, rules: str, deals: int, bots: str, free: list[tuple[int, str]]
    ) -> str:
        """A fresh code for ``table`` whose seats ``free`` (seat, token) are the code's to
        hand out; its record expires with the table."""
        record: dict[Any, Any] = {
            "table": table,
            "rules": rules,
            "deals": str(deals),
            "bots": bots,
            "free": json.dumps([list(s) for s in free]),
            "seated": "[]",
            "open": "0",
        }
        for _ in range(_TRIES):
            code = new_code()
            key = _code_key(code)
            # HSETNX on the table field claims the code; the rest follows in one MULTI.
            if await self._redis.hsetnx(key, "table", table):
                async with self._redis.pipeline(transaction=False) as pipe:
                    pipe.hset(key, mapping=record)
                    pipe.expire(key, self._ttl)
                    await pipe.execute()
                return code
        raise RuntimeError("no free room code after several tries")

    async def lookup(self, code: str) -> TableFacts:
        """The table a code leads to; ``CodeError`` when none."""
        code = normalise_code(code)
        values = await self._redis.hmget(_code_key(code), list(_FIELDS))
        facts = _facts(code, values)
        if facts is None:
            raise CodeError(CodeReason.UNKNOWN_CODE, "no table has this code")
        return facts

    async def join(self, code: str, player_id: str | None) -> Seat:
        """The next free seat of the code's table, at most one per player identity."""
        code = normalise_code(code)
        status, table, seat, token = await self._join(
            keys=[_code_key(code), OPEN_KEY], args=[player_id or "", code, CHANGES]
        )
        status = status.decode() if isinstance(status, bytes) else status
        if status == "unknown":
            raise CodeError(CodeReason.UNKNOWN_CODE, "no table has this code")
        if status == "full":
            raise CodeError(CodeReason.NO_FREE_SEAT, "every seat of this table is taken")
        if status == "seated":
            raise CodeError(CodeReason.ALREADY_SEATED, "you already have a seat at this table")
        return Seat(_text(table), int(seat), _text(token))

    async def open_table(self, code: str, now: float) -> None:
        """List the code's table in the lobby (idempotent)."""
        code = normalise_code(code)
        result = _text(
            await self._open(
                keys=[_code_key(code), OPEN_KEY],
                args=[code, repr(now), self._max_open, CHANGES],
            )
        )
        if result == "unknown":
            raise CodeError(CodeReason.UNKNOWN_CODE, "no table has this code")
        if result == "full":
            raise CodeError(CodeReason.NO_FREE_SEAT, "a table without a free seat is not listed")
        if result == "lobby_full":
            raise CodeError(CodeReason.LOBBY_FULL, "the lobby lists as many tables as it may")

    async def code_of(self, table: str, code: str) -> bool:
        """Whether ``code`` is ``table``'s (a host proves the table with its token)."""
        stored = await self._redis.hget(_code_key(normalise_code(code)), "table")
        return stored is not None and _text(stored) == table

    async def listed(self, limit: int) -> list[TableFacts]:
        """The open tables, newest first; codes whose record expired leave the list."""
        codes = [_text(c) for c in await self._redis.zrevrange(OPEN_KEY, 0, limit - 1)]
        if not codes:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            for code in codes:
                pipe.hmget(_code_key(code), list(_FIELDS))
            rows = await pipe.execute()
        found: list[TableFacts] = []
        gone: list[str] = []
        for code, values in zip(codes, rows, strict=True):
            facts = _facts(code, values)
            if facts is None or not facts.open:
                gone.append(code)
            else:
                found.append(facts)
        if gone:
            await self._redis.zrem(OPEN_KEY, *gone)
        return found


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _facts(code: str, values: list[Any]) -> TableFacts | None:
    table, rules, deals, bots, free, is_open = (None if v is None else _text(v) for v in values)
    if table is None or rules is None or free is None:
        return None
    return TableFacts(
        code=code,
        table=table,
        rules=rules,
        deals=int(deals or 1),
        bots=bots or "",
        free=len(json.loads(free)),
        open=is_open == "1",
    )
