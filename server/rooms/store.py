"""Tables in Redis: a meta key, a log list and an ownership lease per table.

Keys (the ``{id}`` hash tag puts every key of a table in one cluster slot, so
each script below touches one slot and the store runs on Redis Cluster):

- ``pdk:{id}:meta``: the JSON ``TableMeta``.
- ``pdk:{id}:log``: the JSON log entries; its length is the table's version.
- ``pdk:{id}:fence``: the fencing number, a counter that only grows.  Every
  acquisition of the table takes the next number.
- ``pdk:{id}:lease``: ``"<fence> <owner>"`` with a short expiry: while it
  exists no other process may take the table.

Ownership is the fencing number, not the lease: a process holds a table while
``fence`` still equals the number it got.  The lease key only says how long
others must wait before taking over (which bumps ``fence``).  Every write of a
table is a script built by ``fenced_script`` whose first check is the fencing
number, so a former owner that was paused, cut off or slow can never write
once another process took the table: it gets ``LeaseLost`` and nothing is
written.  The same script checks the version (and may replace the meta, seat
state and turn clock, with the entry that changed it), so even two writers
holding the same number could never fork a table.

On a single Redis (not Cluster) the script calls of all tables (appends, loads,
lease acquisitions and renewals) go out together, one pipeline per Redis fsync
(``group_commit``); each still waits for its own reply, so nothing is
acknowledged before Redis holds it.  With a ``ReplicaAck`` nothing is acknowledged
before that many replicas hold it too (``redis_failover``; on Redis Cluster,
``cluster_replica_ack``): a Redis failover then loses no action a player was
told of.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from server import metrics

from .cluster_replica_ack import ClusterReplicaAck
from .group_commit import GroupCommit
from .log import LogEntry, TableMeta
from .redis_failover import ReplicaAck, ReplicaAckTimeout

__all__ = [
    "TABLE_INDEX_KEY",
    "Holder",
    "Lease",
    "LeaseLost",
    "Redis",
    "StoreError",
    "TableGone",
    "TableStore",
    "TooManyTables",
    "VersionConflict",
    "fenced_script",
]

Redis: TypeAlias = aioredis.Redis | RedisCluster

# Script results below 0 that mean the same thing in every script.
_GONE = -1
_FENCED = -3

# Prefix of every script that writes a table.  KEYS[1] is the fence key and
# ARGV[1] the writer's fencing number; the script's own keys and arguments
# follow.  Lua compares strings, so the number travels in its decimal form.
_FENCE_CHECK = f"""
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {_FENCED}
end
"""


def fenced_script(body: str) -> str:
    """A table-writing script that runs ``body`` only for the holder of the fence.

    ``body`` sees the fence key as ``KEYS[1]`` and the fencing number as
    ``ARGV[1]``; its own keys start at ``KEYS[2]``, arguments at ``ARGV[2]``.
    It must return a number >= 0 or -1 (table gone); -3 means fenced out.
    """
    return _FENCE_CHECK + body


# KEYS: fence, meta, log.  ARGV: fence, expected version, ttl seconds, the new meta
# JSON ("" to keep it), then the entries' JSON (none or more).  The entries and the
# meta land together or not at all.  Returns the new version, -1 when the table is
# gone, -3 when fenced out, or -4 - stored version on a version conflict.
_WRITE = fenced_script("""
if redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end
local n = redis.call('LLEN', KEYS[3])
if n ~= tonumber(ARGV[2]) then
  return -4 - n
end
if #ARGV > 4 then
  n = redis.call('RPUSH', KEYS[3], unpack(ARGV, 5))
end
if ARGV[4] ~= '' then
  redis.call('SET', KEYS[2], ARGV[4])
end
for i = 1, 3 do
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end
return n
""")

# KEYS: fence, lease.  ARGV: fence, owner, lease ms.  1, or -3 when fenced out.
_RENEW = fenced_script("""
redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. ARGV[2], 'PX', ARGV[3])
return 1
""")

# KEYS: fence, lease.  ARGV: fence.  1, or -3 when fenced out.
_RELEASE = fenced_script("""
redis.call('DEL', KEYS[2])
return 1
""")

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

# KEYS: meta, lease, fence.  ARGV: owner, lease ms, ttl seconds.
# {fence, ''} when taken, {0, holder} when another lease is live, {-1, ''} when gone.
# A live lease of the same owner is taken again with a new number: its old room
# is on its way out, and the new number fences whatever it still tries.
_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {-1, ''}
end
local holder = redis.call('GET', KEYS[2])
if holder then
  local space = string.find(holder, ' ', 1, true)
  if space == nil or string.sub(holder, space + 1) ~= ARGV[1] then
    return {0, holder}
  end
end
local fence = redis.call('INCR', KEYS[3])
-- The fence lives as long as the meta (never less: a fence that expired first would
-- start again at 1), not longer: an abandoned table leaves nothing behind.
local ttl = redis.call('TTL', KEYS[1])
if ttl < 1 then
  ttl = ARGV[3]
end
redis.call('EXPIRE', KEYS[3], ttl)
redis.call('SET', KEYS[2], fence .. ' ' .. ARGV[1], 'PX', ARGV[2])
return {fence, ''}
"""

# KEYS: meta, log, fence.  ARGV: ttl seconds.  {} when gone, else {meta, {entries}};
# a load keeps the table at least ``ttl`` more (never less than it had): only play
# makes it live longer than that.
# KEYS[1]: any key.  Its value (nil if none): a plain GET that can ride the group commit
# (a thousand sockets joining at once each read their table's meta).
_GET = "return redis.call('GET', KEYS[1])"

_LOAD = """
local meta = redis.call('GET', KEYS[1])
if not meta then
  return {}
end
for i = 1, 3 do
  if redis.call('TTL', KEYS[i]) < tonumber(ARGV[1]) then
    redis.call('EXPIRE', KEYS[i], ARGV[1])
  end
end
return {meta, redis.call('LRANGE', KEYS[2], 0, -1)}
"""


class StoreError(Exception):
    """The table could not be written as asked."""


class TooManyTables(StoreError):
    """The store already holds the most tables it may (``max_tables``)."""


class TableGone(StoreError):
    """The table's keys expired or never existed."""


class LeaseLost(StoreError):
    """Another process took the table over: this writer's fencing number is stale."""

    def __init__(self, lease: Lease) -> None:
        super().__init__(f"table {lease.table_id}: fencing number {lease.fence} is no longer held")
        self.lease = lease


class VersionConflict(StoreError):
    """Redis holds another version than the writer expected (another writer moved on)."""

    def __init__(self, expected: int, stored: int) -> None:
        super().__init__(f"expected version {expected}, Redis holds {stored}")
        self.expected = expected
        self.stored = stored


@dataclass(frozen=True, slots=True)
class Lease:
    """The right of ``owner`` to write ``table_id``, as long as ``fence`` is current."""

    table_id: str
    owner: str
    fence: int


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a table's lease right now."""

    owner: str
    fence: int


def _key(table_id: str, role: str) -> str:
    return f"pdk:{{{table_id}}}:{role}"


def _parse_holder(raw: bytes | str) -> Holder | None:
    text = raw.decode() if isinstance(raw, bytes) else raw
    fence, _, owner = text.partition(" ")
    return Holder(owner, int(fence)) if fence.isdigit() and owner else None


_meta_decoder = msgspec.json.Decoder(TableMeta)
_entry_decoder = msgspec.json.Decoder(LogEntry)
_encoder = msgspec.json.Encoder()


class TableStore:
    """Tables in Redis: meta, log, lease and fence; every write is fenced and versioned."""

    def __init__(
        self,
        redis: Redis,
        ttl_seconds: int,
        *,
        ttl_for: Callable[[int], int] | None = None,
        replica_ack: ReplicaAck | None = None,
    ) -> None:
        self._redis = redis
        self._replica_ack = replica_ack
        self._ttl = ttl_seconds
        # A table's expiry at each version (``rooms.tables.TableLifetime``); the
        # fence outlives it at ``ttl_seconds``.
        self._ttl_for = ttl_for or (lambda version: ttl_seconds)
        self._write_script = redis.register_script(_WRITE)
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self._load = redis.register_script(_LOAD)
        self._get = redis.register_script(_GET)
        self._reserve = redis.register_script(_RESERVE)
        # Every script call of every table of this process (appends, loads, leases)
        # shares pipelines (see group_commit); on Redis Cluster each table's slot may
        # live on another node, so they go alone.
        # With a replica acknowledgement each slot's calls and their WAIT go together
        # to the slot's primary instead (``cluster_replica_ack``).
        self._batch: GroupCommit | ClusterReplicaAck | None = None
        if isinstance(redis, aioredis.Redis):
            self._batch = GroupCommit(redis, replica_ack)
        elif replica_ack is not None:
            self._batch = ClusterReplicaAck(redis, replica_ack)
        # ``run_script``'s calls (seat budgets, a join's reads) batch the same way on a
        # connection of their own: Redis reads 16 KB of a connection per turn of its
        # loop, and the tables' appends must not queue behind a thousand bookings.
        # Budgets and reads tell nobody of an action, so they wait for no replica.
        self._side_batch = GroupCommit(redis) if isinstance(redis, aioredis.Redis) else None

    async def aclose(self) -> None:
        """Close the group commit's connection (the Redis client is the caller's to close);
        script calls not yet answered fail."""
        for batch in (self._batch, self._side_batch):
            if batch is not None:
                await batch.aclose()

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
            args: list[Any] = [now, now + self._ttl_for(0), max_tables, meta.id]
            if not int(await self._call(self._reserve, keys, args)):
                raise TooManyTables(f"the server already holds {max_tables} tables")
        created = await self._create_meta(meta)
        if not created:
            if max_tables is not None:
                await self._redis.zrem(TABLE_INDEX_KEY, meta.id)
            raise StoreError(f"table {meta.id} already exists")

    async def _create_meta(self, meta: TableMeta) -> bool:
        """SET NX of the new meta; with a replica acknowledgement, answered only once
        the replicas hold it (WAIT on the same connection, after it)."""
        key, value, ttl = _key(meta.id, "meta"), _encoder.encode(meta), self._ttl_for(0)
        ack = self._replica_ack
        if ack is None:
            return bool(await self._redis.set(key, value, ex=ttl, nx=True))
        if isinstance(self._batch, ClusterReplicaAck):
            return bool(await self._batch.command(key, "SET", key, value, "EX", ttl, "NX"))
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.set(key, value, ex=ttl, nx=True)
            pipe.execute_command("WAIT", ack.replicas, ack.timeout_ms)
            created, acked = await pipe.execute()
        if int(acked) < ack.replicas:
            raise ReplicaAckTimeout(f"{acked} of {ack.replicas} replicas hold table {meta.id}")
        return bool(created)

    async def load_meta(self, table_id: str) -> TableMeta | None:
        """The table's meta alone (None if Redis has no such table)."""
        raw = await self.run_script(self._get, [_key(table_id, "meta")], [])
        return None if raw is None else _meta_decoder.decode(raw)

    async def load(self, table_id: str) -> tuple[TableMeta, list[LogEntry]] | None:
        """Meta and whole log in one script; loading counts as activity (TTL refreshed)."""
        keys = [_key(table_id, role) for role in ("meta", "log", "fence")]
        with metrics.redis_timed("load"):
            found = await self._call(self._load, keys, [self._ttl_for(0)])
        if not found:
            return None
        raw_meta, raw_log = found
        return _meta_decoder.decode(raw_meta), [_entry_decoder.decode(r) for r in raw_log]

    def run_script(self, script: Any, keys: Sequence[Any], args: Sequence[Any]) -> Awaitable[Any]:
        """``script``'s answer to await, batched as the tables' own calls are but on a group
        commit of its own (``server.budgets`` books each seat's actions this way)."""
        if self._side_batch is not None:
            return self._side_batch.submit(script, keys, args)
        return cast(Awaitable[Any], script(keys=keys, args=args))

    def _call(self, script: Any, keys: Sequence[Any], args: Sequence[Any]) -> Awaitable[Any]:
        """``script``'s answer to await: queued on the group commit where Redis is a single
        node (no task of its own), else a call of its own."""
        if self._batch is not None:
            return self._batch.submit(script, keys, args)
        return cast(Awaitable[Any], script(keys=keys, args=args))

    # --- ownership ---------------------------------------------------------------

    async def acquire(self, table_id: str, owner: str, lease_ms: int) -> Lease | Holder | None:
        """Take the table for ``owner`` with the next fencing number (a ``Lease``), or
        the ``Holder`` whose lease is still live, or None when the table is gone."""
        keys = [_key(table_id, role) for role in ("meta", "lease", "fence")]
        fence, holder = await self._call(self._acquire, keys, [owner, lease_ms, self._ttl])
        fence = int(fence)
        if fence < 0:
            return None
        if fence == 0:
            return _parse_holder(holder) or Holder("?", 0)
        return Lease(table_id, owner, fence)

    async def renew(self, lease: Lease, lease_ms: int) -> None:
        """Extend ``lease`` by ``lease_ms``; ``LeaseLost`` when another process took it."""
        await self._fenced(self._renew, lease, ["lease"], [lease.owner, lease_ms])

    async def renew_all(self, leases: list[Lease], lease_ms: int) -> list[Exception | None]:
        """``renew`` each of ``leases``: for each, None or the error it got (never raises
        for one table's sake).  Still one fenced script per table, sent together."""
        answers = [
            self._call(self._renew, *_fenced_call(lease, ["lease"], [lease.owner, lease_ms]))
            for lease in leases
        ]
        results = await asyncio.gather(*answers, return_exceptions=True)
        return [_fence_error(lease, r) for lease, r in zip(leases, results, strict=True)]

    async def release(self, lease: Lease) -> None:
        """Let others take the table at once (no-op when the number is no longer ours)."""
        with contextlib.suppress(LeaseLost):
            await self._fenced(self._release, lease, ["lease"], [])

    async def holder(self, table_id: str) -> Holder | None:
        """The live lease's holder, None when nobody holds the table."""
        raw = await self._redis.get(_key(table_id, "lease"))
        return None if raw is None else _parse_holder(raw)

    async def holders(self, table_ids: list[str]) -> list[Holder | None]:
        """``holder`` of each table, in one pipeline (one round trip per node)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for table_id in table_ids:
                pipe.get(_key(table_id, "lease"))
            raws: list[bytes | None] = await pipe.execute()
        return [None if raw is None else _parse_holder(raw) for raw in raws]

    async def delete(self, table_id: str) -> bool:
        """Remove the table (an operator's decision): whether it was there.  A process
        holding it finds it gone (or its fence lost) at its next write."""
        keys = [_key(table_id, role) for role in ("meta", "log", "fence", "lease")]
        removed = int(await self._redis.delete(*keys))
        await self._redis.zrem(TABLE_INDEX_KEY, table_id)
        return removed > 0

    # --- writes (all fenced) -------------------------------------------------------

    def append(
        self,
        lease: Lease,
        expected_version: int,
        entries: Sequence[LogEntry],
        meta: TableMeta | None = None,
    ) -> Awaitable[int]:
        """Append ``entries`` in order (and replace the meta, if given) if ``lease`` is
        current and the stored version is ``expected_version``; the new version, to await.

        All of them land, or none: a room hands several actions over at once when bots
        answer without a pause, and no reader may ever see the first without the rest.
        """
        # Not a coroutine of its own: every action comes here, and each coroutine a room
        # holds while Redis answers is one more object the cyclic GC scans.
        return self._write(lease, expected_version, [_encoder.encode(e) for e in entries], meta)

    async def save_meta(self, lease: Lease, expected_version: int, meta: TableMeta) -> None:
        """Replace the meta if ``lease`` is current and the stored version is
        ``expected_version`` (no new entry)."""
        await self._write(lease, expected_version, [], meta)

    async def _write(
        self, lease: Lease, expected_version: int, entries: list[bytes], meta: TableMeta | None
    ) -> int:
        encoded_meta = b"" if meta is None else _encoder.encode(meta)
        ttl = self._ttl_for(expected_version + len(entries))
        args: list[Any] = [expected_version, ttl, encoded_meta, *entries]
        keys, args = _fenced_call(lease, ["meta", "log"], args)
        with metrics.redis_timed("append"):
            result = _fenced_result(lease, await self._call(self._write_script, keys, args))
        if result < -3:
            raise VersionConflict(expected_version, -4 - result)
        return result

    async def _fenced(self, script: Any, lease: Lease, roles: list[str], args: list[Any]) -> int:
        """Run a ``fenced_script`` for ``lease``; raises ``LeaseLost`` / ``TableGone``."""
        return _fenced_result(lease, await self._call(script, *_fenced_call(lease, roles, args)))


def _fenced_call(lease: Lease, roles: list[str], args: list[Any]) -> tuple[list[str], list[Any]]:
    """Keys and arguments of a ``fenced_script`` call: the fence first, then the script's."""
    keys = [_key(lease.table_id, "fence")] + [_key(lease.table_id, r) for r in roles]
    return keys, [lease.fence, *args]


def _fenced_result(lease: Lease, result: Any) -> int:
    """A ``fenced_script``'s answer as the caller's result; raises what it means otherwise."""
    code = int(result)
    error = _fence_error(lease, code)
    if error is not None:
        raise error
    return code


def _fence_error(lease: Lease, result: object) -> Exception | None:
    """What a ``fenced_script``'s ``result`` (or the error it got) means for its caller."""
    if isinstance(result, BaseException):
        if not isinstance(result, Exception):
            raise result
        return result
    code = int(result)  # type: ignore[call-overload]
    if code == _FENCED:
        return LeaseLost(lease)
    if code == _GONE:
        return TableGone(f"table {lease.table_id} has expired")
    return None
