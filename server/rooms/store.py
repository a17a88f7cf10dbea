"""Tables in Redis: one meta key and one log list per table.

Keys (the ``{id}`` hash tag keeps a table's keys in one cluster slot):
``pdk:{id}:meta`` holds the JSON ``TableMeta``; ``pdk:{id}:log`` is the list of
JSON log entries, and its length is the table's version.  An append runs as one
Lua script that checks the expected version first, so two server processes can
never fork a table: the loser gets ``VersionConflict`` and nothing is written.
The same script replaces the meta (seat state, turn clock) with the entry that
changed it, or alone, under the same version check.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
import redis.asyncio as aioredis

from server import metrics

from .log import LogEntry, TableMeta

__all__ = [
    "TABLE_INDEX_KEY",
    "StoreError",
    "TableGone",
    "TableStore",
    "TooManyTables",
    "VersionConflict",
]

# KEYS: meta, log.  ARGV: expected version, entry JSON ("" for none), ttl seconds,
# and optionally the new meta JSON.  Entry and meta land together or not at all.
# Returns the new version, -1 when the table is gone, or -2 - stored version on conflict.
_APPEND = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local n = redis.call('LLEN', KEYS[2])
if n ~= tonumber(ARGV[1]) then
  return -2 - n
end
if ARGV[2] ~= '' then
  redis.call('RPUSH', KEYS[2], ARGV[2])
  n = n + 1
end
if ARGV[4] then
  redis.call('SET', KEYS[1], ARGV[4])
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return n
"""


# KEYS: the table index.  ARGV: now, expiry, cap, table id.
# Drops expired entries, then adds this table unless ``cap`` are already stored.
# Returns 1 when added, 0 when full.  Only the index key: it is one cluster slot.
_RESERVE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
return 1
"""

# Every table created within the TTL, scored by when it expires at the latest
# untouched: the count behind ``max_tables``.
TABLE_INDEX_KEY = "pdk:tables"


class StoreError(Exception):
    """The table could not be written as asked."""


class TooManyTables(StoreError):
    """The store already holds the most tables it may (``max_tables``)."""


class TableGone(StoreError):
    """The table's keys expired or never existed."""


class VersionConflict(StoreError):
    """Redis holds another version than the writer expected (another writer moved on)."""

    def __init__(self, expected: int, stored: int) -> None:
        super().__init__(f"expected version {expected}, Redis holds {stored}")
        self.expected = expected
        self.stored = stored


def _meta_key(table_id: str) -> str:
    return f"pdk:{{{table_id}}}:meta"


def _log_key(table_id: str) -> str:
    return f"pdk:{{{table_id}}}:log"


_meta_decoder = msgspec.json.Decoder(TableMeta)
_entry_decoder = msgspec.json.Decoder(LogEntry)
_encoder = msgspec.json.Encoder()


class TableStore:
    """A table's meta and log in Redis; every write is checked against the version."""

    def __init__(self, redis: aioredis.Redis, ttl_seconds: int) -> None:
        self._redis = redis
        self._ttl = ttl_seconds
        self._append = redis.register_script(_APPEND)
        self._reserve = redis.register_script(_RESERVE)

    @property
    def ttl_seconds(self) -> int:
        """How long an untouched table stays in Redis."""
        return self._ttl

    async def ping(self) -> bool:
        """Whether Redis answers (never raises)."""
        try:
            return bool(await self._redis.ping())
        except (aioredis.RedisError, OSError):
            return False

    async def create(self, meta: TableMeta, *, max_tables: int | None = None) -> None:
        """Store a new table's meta; ``StoreError`` if the id is taken, ``TooManyTables``
        when ``max_tables`` are already stored.

        The count is of tables created within the TTL (a table played for longer
        than its TTL drops out of it early), kept in one sorted set.
        """
        if max_tables is not None:
            now = time.time()
            keys: list[Any] = [TABLE_INDEX_KEY]
            args: list[Any] = [now, now + self._ttl, max_tables, meta.id]
            if not int(await self._reserve(keys=keys, args=args)):
                raise TooManyTables(f"the server already holds {max_tables} tables")
        created = await self._redis.set(
            _meta_key(meta.id), _encoder.encode(meta), ex=self._ttl, nx=True
        )
        if not created:
            if max_tables is not None:
                await self._redis.zrem(TABLE_INDEX_KEY, meta.id)
            raise StoreError(f"table {meta.id} already exists")

    async def load_meta(self, table_id: str) -> TableMeta | None:
        """The table's meta alone (None if Redis has no such table)."""
        raw = await self._redis.get(_meta_key(table_id))
        return None if raw is None else _meta_decoder.decode(raw)

    async def load(self, table_id: str) -> tuple[TableMeta, list[LogEntry]] | None:
        """Meta and whole log in one transaction; loading counts as activity (TTL refreshed)."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.get(_meta_key(table_id))
            pipe.lrange(_log_key(table_id), 0, -1)
            pipe.expire(_meta_key(table_id), self._ttl)
            pipe.expire(_log_key(table_id), self._ttl)
            with metrics.redis_timed("load"):
                raw_meta, raw_log, *_ = await pipe.execute()
        if raw_meta is None:
            return None
        return _meta_decoder.decode(raw_meta), [_entry_decoder.decode(r) for r in raw_log]

    async def append(
        self, table_id: str, expected_version: int, entry: LogEntry, meta: TableMeta | None = None
    ) -> int:
        """Append ``entry`` (and replace the meta, if given) if the stored version is
        ``expected_version``; the new version."""
        return await self._write(table_id, expected_version, _encoder.encode(entry), meta)

    async def save_meta(self, table_id: str, expected_version: int, meta: TableMeta) -> None:
        """Replace the meta if the stored version is ``expected_version`` (no new entry)."""
        await self._write(table_id, expected_version, b"", meta)

    async def _write(
        self, table_id: str, expected_version: int, entry: bytes, meta: TableMeta | None
    ) -> int:
        keys: list[Any] = [_meta_key(table_id), _log_key(table_id)]
        args: list[Any] = [expected_version, entry, self._ttl]
        if meta is not None:
            args.append(_encoder.encode(meta))
        with metrics.redis_timed("append"):
            result = int(await self._append(keys=keys, args=args))
        if result == -1:
            raise TableGone(f"table {table_id} has expired")
        if result < -1:
            raise VersionConflict(expected_version, -2 - result)
        return result
