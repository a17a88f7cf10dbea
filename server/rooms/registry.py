"""The live rooms of this process, loaded from Redis on first use."""

from __future__ import annotations

import asyncio
import logging

from .log import rebuild
from .room import Room
from .store import TableStore

__all__ = ["DEFAULT_IDLE_SECONDS", "Registry"]

log = logging.getLogger(__name__)

# A room with no connection stays in memory this long (its bots keep playing),
# then it is dropped; the next connection rebuilds it from Redis.
DEFAULT_IDLE_SECONDS = 60.0


class Registry:
    """This process's live rooms by table id; each table is loaded at most once at a time."""

    def __init__(self, store: TableStore, *, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> None:
        self._store = store
        self._idle_seconds = idle_seconds
        self._rooms: dict[str, Room] = {}
        self._loading: dict[str, asyncio.Task[Room | None]] = {}

    def live(self, table_id: str) -> Room | None:
        """The room of ``table_id`` if it is loaded here and still running."""
        room = self._rooms.get(table_id)
        return room if room is not None and not room.closed else None

    def __len__(self) -> int:
        """Rooms loaded here (the live tables of this process)."""
        return len(self._rooms)

    async def room(self, table_id: str) -> Room | None:
        """The live room of ``table_id``, loading it once however many sockets ask; None if
        Redis has no such table."""
        room = self.live(table_id)
        if room is not None:
            return room
        task = self._loading.get(table_id)
        if task is None:
            task = asyncio.create_task(self._load(table_id), name=f"load-{table_id}")
            self._loading[table_id] = task
            task.add_done_callback(lambda _: self._loading.pop(table_id, None))
        # One waiter giving up (its socket closed) must not cancel the load for the others.
        return await asyncio.shield(task)

    async def _load(self, table_id: str) -> Room | None:
        loaded = await self._store.load(table_id)
        if loaded is None:
            return None
        meta, entries = loaded
        room = Room(
            meta,
            rebuild(meta, entries),
            self._store,
            idle_seconds=self._idle_seconds,
            on_closed=self._forget,
        )
        self._rooms[table_id] = room
        room.start()
        log.info("table %s loaded at version %d", table_id, len(entries))
        return room

    def _forget(self, room: Room) -> None:
        if self._rooms.get(room.id) is room:
            del self._rooms[room.id]

    async def close(self) -> None:
        """Stop every room (sockets get 1001) and any load under way."""
        for task in list(self._loading.values()):
            task.cancel()
        rooms = list(self._rooms.values())
        await asyncio.gather(*(room.stop() for room in rooms), return_exceptions=True)
