"""The lobby's live list of open tables, for everyone watching, on every process.

Each process keeps one subscription to ``codes.CHANGES`` (only while someone
watches) and one current snapshot of the list: a change read once from Redis is
handed to all of this process's watchers, never read once per watcher.  Watchers
get the newest snapshot, never a backlog: one slow watcher holds no queue, it just
skips the snapshots it was too slow for.  At most ``max_watchers`` watch one process
at once (``--lobby-watchers``); a watcher past that is refused (``LobbyBusy``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator

import msgspec
from redis import asyncio as aioredis
from redis.exceptions import RedisError

from .codes import CHANGES, Codes, TableFacts

__all__ = ["LISTED", "LobbyBusy", "LobbyFeed", "listing_json"]

log = logging.getLogger(__name__)

# Tables one snapshot lists (the newest opened first).
LISTED = 50
# Seconds before the subscription is tried again after Redis failed it.
_RETRY_SECONDS = 1.0

_encoder = msgspec.json.Encoder()


class LobbyBusy(Exception):
    """This process serves as many lobby watchers as it may."""


def listing_json(tables: list[TableFacts]) -> bytes:
    """The list as the lobby's clients read it (``GET /api/lobby`` and each event)."""
    return _encoder.encode(
        {
            "tables": [
                {"code": t.code, "rules": t.rules, "deals": t.deals, "bots": t.bots,
                 "free": t.free}
                for t in tables
            ]
        }
    )  # fmt: skip


class LobbyFeed:
    """The snapshot and the subscription behind every watcher of this process."""

    def __init__(self, codes: Codes, subscriber: aioredis.Redis, max_watchers: int) -> None:
        self._codes = codes
        self._subscriber = subscriber
        self._max = max_watchers
        self.watchers = 0
        self._snapshot = b""
        self._version = 0
        self._changed = asyncio.Condition()
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    def closed(self) -> bool:
        """Whether ``close`` ran (a method: it changes while a watcher waits)."""
        return self._closed

    async def close(self) -> None:
        """End every watcher's stream (a draining server must not wait on them) and the
        subscription."""
        async with self._changed:
            self._closed = True
            self._changed.notify_all()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None

    async def watch(self) -> AsyncGenerator[bytes, None]:
        """The list now, then each new list as it changes; ``LobbyBusy`` when full."""
        if self.watchers >= self._max or self._closed:
            raise LobbyBusy
        self.watchers += 1
        try:
            if self._reader is None or self._reader.done():
                self._reader = asyncio.create_task(self._read(), name="lobby-reader")
            seen = 0
            while True:
                async with self._changed:
                    while self._version in (0, seen) and not self.closed():
                        await self._changed.wait()
                    if self.closed():
                        return
                    seen = self._version
                    snapshot = self._snapshot
                yield snapshot
        finally:
            self.watchers -= 1

    async def _refresh(self) -> None:
        snapshot = listing_json(await self._codes.listed(LISTED))
        async with self._changed:
            self._snapshot = snapshot
            self._version += 1
            self._changed.notify_all()

    async def _read(self) -> None:
        while True:
            pubsub = self._subscriber.pubsub()
            try:
                await pubsub.subscribe(CHANGES)
                # Read after subscribing: no change can fall between the two.
                await self._refresh()
                while self.watchers:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is None:
                        continue
                    # Changes that arrived meanwhile are one refresh: drain them first.
                    while await pubsub.get_message(ignore_subscribe_messages=True, timeout=0):
                        pass
                    await self._refresh()
                return
            except (RedisError, OSError) as exc:
                log.warning("lobby feed: %s; subscribing again", exc)
                await asyncio.sleep(_RETRY_SECONDS)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
