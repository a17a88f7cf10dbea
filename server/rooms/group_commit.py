"""Group commit: the writes of many tables go to Redis together, one pipeline at a time.

With ``appendfsync always`` Redis fsyncs once per event-loop turn for every
write it received in that turn, and a client that sends its commands one
round trip at a time pays the whole fsync each time.  Rooms therefore do not
send their appends (or lease renewals) themselves: ``GroupCommit.run`` queues one
script call and
waits for its own reply; a flusher sends everything queued so far as one
pipeline (no transaction: each call keeps its own version check and its own
answer), waits for Redis's replies, which come only after the fsync, and hands
each room its result.  Whatever arrives meanwhile goes in the next pipeline,
so a busy process writes large batches and an idle one writes at once.  A few
flushers may be in flight at once (``MAX_IN_FLIGHT``), so that one slow round
trip (a loaded machine, a long fsync) does not hold every other table up.

A flusher keeps its connection when it is done (checked as the pool checks one
before it is used again) and writes the pipeline with a small RESP packer of
its own: the pool's locks and timers and redis-py's general packer cost more
than the rest of a batch's Python work at a thousand tables.

Nothing is acknowledged early: a room hears its result only after Redis has
answered that very call, so a seat still never hears of an action Redis does
not hold.  A connection error fails every call of the batch (their fate is
unknown, as it was for a lone call); the rooms close and reload from Redis.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import Connection
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, ResponseError

__all__ = ["MAX_BATCH", "MAX_IN_FLIGHT", "GroupCommit", "pack_commands"]

_Call = tuple[AsyncScript, Sequence[Any], Sequence[Any], "asyncio.Future[Any]"]

# Calls per pipeline.  Redis runs a batch's scripts back to back (about 10 us each),
# so this bounds how long one batch holds Redis up for everyone else.
MAX_BATCH = 256
# Pipelines waiting for their replies at the same time (each on its own connection).
MAX_IN_FLIGHT = 4


class GroupCommit:
    """Runs Lua scripts for many callers, batched into pipelines."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self._redis = redis
        self._queued: list[_Call] = []
        self._flushers: set[asyncio.Task[None]] = set()
        # Connections of finished flushers, kept for the next ones (at most MAX_IN_FLIGHT).
        self._idle: list[Connection] = []
        # Pipelines sent so far (for tests and diagnostics).
        self.pipelines = 0

    async def run(self, script: AsyncScript, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """``script``'s answer for ``keys`` and ``args``, once Redis has given it."""
        return await self.submit(script, keys, args)

    def submit(
        self, script: AsyncScript, keys: Sequence[Any], args: Sequence[Any]
    ) -> asyncio.Future[Any]:
        """Queue one call; the future gets its answer (or error) once Redis has given it.

        Many calls made at once (a thousand lease renewals) await their futures
        together, without a task each.
        """
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queued.append((script, keys, args, answer))
        if len(self._flushers) < MAX_IN_FLIGHT:
            flusher = asyncio.create_task(self._flush(), name="group-commit")
            self._flushers.add(flusher)
            flusher.add_done_callback(self._flushers.discard)
        return answer

    async def _connection(self) -> Connection:
        """A kept connection if one is idle (checked as the pool would), else the pool's."""
        pool = self._redis.connection_pool
        if not self._idle:
            return await pool.get_connection()  # type: ignore[no-untyped-call,no-any-return]
        conn = self._idle.pop()
        try:
            # Reconnects one that Redis closed or that holds unread data.
            await pool.ensure_connection(conn)
        except BaseException:
            await pool.release(conn)
            raise
        return conn

    async def _flush(self) -> None:
        conn: Connection | None = None
        try:
            while self._queued:
                batch = self._queued[:MAX_BATCH]
                del self._queued[:MAX_BATCH]
                try:
                    # One connection for as long as there is work: a busy process does not
                    # go back to the pool between batches.
                    if conn is None:
                        conn = await self._connection()
                    results = await self._send(conn, batch)
                except BaseException as exc:
                    for *_, answer in batch:
                        if not answer.done():
                            answer.set_exception(exc)
                    if conn is not None:
                        # Replies may still be on the way: never reuse this connection.
                        await conn.disconnect()
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for (*_, answer), result in zip(batch, results, strict=True):
                    if answer.done():  # its room stopped waiting (shut down)
                        continue
                    if isinstance(result, Exception):
                        answer.set_exception(result)
                    else:
                        answer.set_result(result)
        finally:
            if conn is not None:
                self._idle.append(conn)
            if len(self._flushers) <= 1:
                # The last flusher was cancelled or failed: nobody else would send these.
                for *_, answer in self._queued:
                    if not answer.done():
                        answer.set_exception(ConnectionError("group commit stopped"))
                self._queued.clear()

    async def _send(self, conn: Connection, batch: list[_Call]) -> list[Any]:
        results = await self._round_trip(conn, batch)
        missing = [i for i, r in enumerate(results) if isinstance(r, NoScriptError)]
        if missing:
            # Redis lost its script cache (a restart): those calls ran nothing, so load
            # their scripts and send them again.
            for script in {id(batch[i][0]): batch[i][0] for i in missing}.values():
                await conn.send_command("SCRIPT", "LOAD", script.script)
                script.sha = await conn.read_response()
            again = await self._round_trip(conn, [batch[i] for i in missing])
            for i, result in zip(missing, again, strict=True):
                results[i] = result
        return results

    async def _round_trip(self, conn: Connection, batch: list[_Call]) -> list[Any]:
        """Every call of ``batch`` in one write, then each reply (an error is a value)."""
        self.pipelines += 1
        commands = [
            ("EVALSHA", script.sha, len(keys), *keys, *args) for script, keys, args, _ in batch
        ]
        await conn.send_packed_command(pack_commands(commands), check_health=False)
        results: list[Any] = []
        for _ in batch:
            try:
                results.append(await conn.read_response())
            except ResponseError as exc:
                results.append(exc)
        return results


def pack_commands(commands: Sequence[Sequence[Any]]) -> bytes:
    """``commands`` in the Redis protocol (arrays of bulk strings), as redis-py packs them.

    A command's name is one word (redis-py would split "CONFIG GET" in two; this
    does not).  Arguments are bytes, str (UTF-8), int or float (their ``repr``), as redis-py's
    encoder takes them; anything else, bool included, is a ``TypeError`` rather
    than a guess.
    """
    out = bytearray()
    for command in commands:
        out += b"*%d\r\n" % len(command)
        for arg in command:
            if isinstance(arg, bytes):
                data = arg
            elif isinstance(arg, str):
                data = arg.encode()
            elif isinstance(arg, int | float) and not isinstance(arg, bool):
                data = repr(arg).encode()
            else:
                raise TypeError(f"cannot send {type(arg).__name__} to Redis: {arg!r}")
            out += b"$%d\r\n" % len(data)
            out += data
            out += b"\r\n"
    return bytes(out)
