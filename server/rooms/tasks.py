"""Fire-and-forget Redis work (a lease release, a close notice) that must not be lost
to the garbage collector, nor fail loudly when Redis is briefly away."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable

from redis.exceptions import RedisError

__all__ = ["background"]

_tasks: set[asyncio.Task[None]] = set()


def background(coro: Awaitable[None], name: str) -> None:
    """Run ``coro`` without awaiting it, keeping a reference until it ends; a Redis or
    socket error ends it quietly (whatever it did is retried or expires by itself)."""

    async def run() -> None:
        with contextlib.suppress(RedisError, OSError):
            await coro

    task = asyncio.create_task(run(), name=name)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
