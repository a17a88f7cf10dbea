"""The process's rating worker: a bounded queue of finished matches, retried.

The room actor only queues (``submit`` never waits); this task settles each match
through ``RatingStore.settle``, whose steps are idempotent, and tries again after a
Redis error with a growing pause.  A match dropped here (queue full, out of tries,
the process killed) is not lost for good: the next process to load the table while
that match is its last re-derives the job (``server.ratings.hook``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError

from .record import MatchRecord
from .store import RatingStore

__all__ = ["RatingWorker"]

log = logging.getLogger(__name__)

# Pauses between tries: 0.2 s doubling to at most 30 s.
_FIRST_PAUSE = 0.2
_MAX_PAUSE = 30.0


class RatingWorker:
    """Settle finished matches one after another, off the room actors."""

    def __init__(
        self,
        store: RatingStore,
        *,
        max_jobs: int,
        tries: int,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._store = store
        self._queue: asyncio.Queue[MatchRecord] = asyncio.Queue(max_jobs)
        self._tries = tries
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None
        # (table, match) queued or being settled: a reload's re-derived job is not queued twice.
        self._pending: set[tuple[str, int]] = set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="ratings")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def submit(self, record: MatchRecord) -> None:
        """Queue ``record`` (from the room actor: never blocks)."""
        key = (record.table, record.match_no)
        if key in self._pending:
            return
        try:
            self._queue.put_nowait(record)
        except asyncio.QueueFull:
            log.warning("rating queue full: table %s match %d left", *key)
            return
        self._pending.add(key)

    async def _run(self) -> None:
        while True:
            record = await self._queue.get()
            try:
                await self._settle(record)
            finally:
                self._pending.discard((record.table, record.match_no))
                self._queue.task_done()

    async def _settle(self, record: MatchRecord) -> None:
        pause = _FIRST_PAUSE
        for attempt in range(1, self._tries + 1):
            try:
                await self._store.settle(record)
                log.info("table %s match %d settled", record.table, record.match_no)
                return
            except (RedisError, OSError) as exc:
                log.warning(
                    "table %s match %d: rating try %d failed: %r",
                    record.table,
                    record.match_no,
                    attempt,
                    exc,
                )
            await self._sleep(pause)
            pause = min(pause * 2, _MAX_PAUSE)
        log.error("table %s match %d: rating given up", record.table, record.match_no)
