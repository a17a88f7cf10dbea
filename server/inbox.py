"""A first-in, first-out mailbox for one consumer task: a light ``asyncio.Queue``.

Each live table holds two of these (its room's inbox and its socket's outgoing
frames).  ``asyncio.Queue`` keeps three deques and an ``Event`` (a fourth
deque), about 3 KiB even when empty, measured with tracemalloc in
``bench/server.py``; this one keeps a list and at most one future, about
0.2 KiB.  It offers the part of the ``asyncio.Queue`` interface the server
uses, with the same exceptions, for exactly one task awaiting ``get``.
"""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar

__all__ = ["Inbox"]

T = TypeVar("T")


class Inbox(Generic[T]):
    """Items in arrival order; ``maxsize`` > 0 bounds it (``put_nowait`` then raises
    ``asyncio.QueueFull``).  One consumer only: a second concurrent ``get`` is a bug."""

    __slots__ = ("_items", "_loop", "_maxsize", "_waiter")

    def __init__(self, maxsize: int = 0) -> None:
        self._items: list[T] = []
        self._maxsize = maxsize
        self._waiter: asyncio.Future[None] | None = None
        # The consumer's loop, once it has waited: ``asyncio.get_running_loop`` makes a
        # getpid() system call per call on Python 3.11, and a room waits once per action.
        self._loop: asyncio.AbstractEventLoop | None = None

    def qsize(self) -> int:
        """How many items wait."""
        return len(self._items)

    def empty(self) -> bool:
        """Whether no item waits."""
        return not self._items

    def put_nowait(self, item: T) -> None:
        """Add ``item`` and wake the consumer; ``asyncio.QueueFull`` when bounded and full."""
        if self._maxsize > 0 and len(self._items) >= self._maxsize:
            raise asyncio.QueueFull
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def get_nowait(self) -> T:
        """The oldest item; ``asyncio.QueueEmpty`` when there is none."""
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.pop(0)

    async def get(self) -> T:
        """The oldest item, waiting for one if need be (a cancelled wait takes nothing)."""
        while not self._items:
            if self._waiter is not None:
                raise RuntimeError("an Inbox has one consumer; another task is waiting")
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        return self._items.pop(0)
