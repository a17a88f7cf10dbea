"""Helpers for the cluster tests: scripted players over real sockets, and the log check.

A ``Player`` is a human seat driven by a script: it joins through one of several
URLs (moving to the next whenever its socket ends, as the browser client does
behind a round-robin proxy), plays the first hint or passes on its turn, deals
on and starts new matches, and writes down every state it was told.
``check_told_against_log`` then holds the cluster's promise: Redis has every
action a client was told of, once, in order.

A ``Ghost`` is the test taking part in the cluster's bus as one more process:
it publishes what a forwarder or an owner would (fencing numbers of its
choosing) and reads what the real processes publish.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import redis
import redis.asyncio as aioredis
import websockets
from websockets.exceptions import WebSocketException

from server.cluster.bus import ToOwner, ToProcess, process_channel, table_channel
from server.rooms.log import LogEntry, TableMeta, rebuild
from tests.conftest import SCRIPTED_PACE, free_port

__all__ = [
    "GUARD_SECONDS",
    "REPO_ROOT",
    "SCRIPTED_PACE",
    "Ghost",
    "Player",
    "check_told_against_log",
    "create_table",
    "fence_of",
    "free_port",
    "health",
    "log_of",
    "owner_of",
    "until",
    "wait_for_version",
]

SyncRedis = redis.Redis | redis.RedisCluster

REPO_ROOT = Path(__file__).resolve().parent.parent.parent

# Long enough for anything that is not hung: a guard, never a speed check.
GUARD_SECONDS = 60.0


def create_table(base_url: str, *, timeout: float = 10, **fields: Any) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{base_url}/api/tables",
        data=json.dumps(fields).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        created: dict[str, Any] = json.loads(response.read())
        return created


# An operator's token for servers behind a proxy, whose /healthz shows the process's
# details only to the operator (docs/operations.md).
ADMIN_TOKEN = "test-admin-token-0123456789abcdef"


def health(base_url: str, token: str | None = None, *, timeout: float = 5) -> dict[str, Any]:
    request = urllib.request.Request(f"{base_url}/healthz")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: dict[str, Any] = json.loads(response.read())
        return body


def log_of(client: SyncRedis, table: str) -> tuple[TableMeta, list[LogEntry]]:
    meta = msgspec.json.decode(client.get(f"pdk:{{{table}}}:meta"), type=TableMeta)
    raw = client.lrange(f"pdk:{{{table}}}:log", 0, -1)
    return meta, [msgspec.json.decode(r, type=LogEntry) for r in raw]


def owner_of(client: SyncRedis, table: str) -> str | None:
    """The process id holding the table's lease (None when nobody does)."""
    raw = client.get(f"pdk:{{{table}}}:lease")
    return None if raw is None else raw.decode().partition(" ")[2]


def fence_of(client: SyncRedis, table: str) -> int | None:
    """The fencing number of the table's live lease (None when nobody holds it)."""
    raw = client.get(f"pdk:{{{table}}}:lease")
    return None if raw is None else int(raw.decode().partition(" ")[0])


async def until(check: Callable[[], bool], what: str) -> None:
    """Wait until ``check()`` holds: asked every 50 ms, in a thread (it may block on
    Redis or HTTP), for at most ``GUARD_SECONDS``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD_SECONDS
    while not await asyncio.to_thread(check):
        if loop.time() > deadline:
            raise AssertionError(f"not in time: {what}")
        await asyncio.sleep(0.05)


async def wait_for_version(client: SyncRedis, table: str, at_least: int) -> int:
    """Wait until the table's log holds ``at_least`` entries; its length."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD_SECONDS
    while True:
        length = int(client.llen(f"pdk:{{{table}}}:log"))
        if length >= at_least:
            return length
        if loop.time() > deadline:
            raise AssertionError(f"table {table} stuck at version {length} (< {at_least})")
        await asyncio.sleep(0.05)


class Player:
    """One socket of a human seat; ``acts`` False makes it a silent watcher."""

    def __init__(
        self, urls: Sequence[str], table: str, token: str, seat: int, *, acts: bool = True
    ) -> None:
        self.urls = list(urls)
        self.table = table
        self.token = token
        self.seat = seat
        self.acts = acts
        # Every state frame in the order told: (version, events).
        self.told: list[tuple[int, list[dict[str, Any]]]] = []
        self.errors: list[dict[str, Any]] = []
        self.connections = 0
        self.close_codes: list[int | None] = []
        self._task: asyncio.Task[None] | None = None
        self._acted_at = -1
        self._next_url = 0
        self._join = json.dumps({"type": "join", "table": table, "token": token})

    @property
    def version(self) -> int:
        return self.told[-1][0] if self.told else -1

    async def wait_told(self) -> None:
        """Wait for the first state."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GUARD_SECONDS
        while not self.told:
            assert loop.time() < deadline, "no state in time"
            await asyncio.sleep(0.05)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"player-{self.seat}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            url = self.urls[self._next_url % len(self.urls)]
            self._next_url += 1
            try:
                async with websockets.connect(url, open_timeout=5, close_timeout=1) as ws:
                    self.connections += 1
                    await ws.send(
                        json.dumps({"type": "join", "table": self.table, "token": self.token})
                    )
                    async for raw in ws:
                        await self._on_frame(ws, json.loads(raw))
                    self.close_codes.append(ws.close_code)
            except (WebSocketException, OSError, TimeoutError):
                self.close_codes.append(None)
            # A new socket, as the browser would open after a drop (never the same pause).
            self._acted_at = -1
            await asyncio.sleep(0.1)

    async def _on_frame(self, ws: Any, frame: dict[str, Any]) -> None:
        if frame["type"] == "error":
            self.errors.append(frame)
            return
        if frame["type"] != "state":
            return
        version: int = frame["version"]
        self.told.append((version, frame["events"]))
        # A state without events at the version it acted on is a full state sent again
        # (the table moved to another process): what it sent may have been lost with the
        # old owner, so it acts again, as a person would (a stale_version answer is fine).
        if not self.acts or (version == self._acted_at and frame["events"]):
            return
        view = frame["view"]
        message: dict[str, Any] | None = None
        if view["match_over"]:
            message = {"type": "new_match"}
        elif view["result"] is not None:
            message = {"type": "next_deal"}
        elif view["turn"] == self.seat:
            hints = view["hints"]
            message = {"type": "play", "cards": hints[0]} if hints else {"type": "pass"}
        if message is not None:
            self._acted_at = version
            await ws.send(json.dumps({**message, "version": version}))


def check_told_against_log(
    meta: TableMeta, entries: list[LogEntry], players: Sequence[Player]
) -> int:
    """Every action a player was told of is the log entry at its version, told in the
    order of the log, never a version that went backwards; the log replays.  Returns
    how many action announcements were checked."""
    rebuild(meta, entries)  # a duplicated or forked entry would not replay
    checked = 0
    for player in players:
        versions = [version for version, _ in player.told]
        assert versions == sorted(versions), f"seat {player.seat} saw a version go back"
        for version, events in player.told:
            assert version <= len(entries), f"told version {version}, log has {len(entries)}"
            for event in events:
                if event["type"] not in ("played", "passed"):
                    continue
                entry = msgspec.to_builtins(entries[version - 1])
                expected = {"type": "play" if event["type"] == "played" else "pass"}
                expected["seat"] = event["seat"]
                if event["type"] == "played":
                    expected["cards"] = event["cards"]
                assert entry == expected, f"told {event} at {version}, log has {entry}"
                checked += 1
    return checked


class Ghost:
    """The test as process ``proc`` on the cluster's bus: it hears its own channel
    (what owners send to its sockets) and the owner channels of ``tables`` (what
    forwarders send), and publishes with any fencing number it likes."""

    def __init__(self, redis_url: str, proc: str = "ghost", tables: Sequence[str] = ()) -> None:
        self.proc = proc
        self._client = aioredis.Redis.from_url(redis_url)
        self._pubsub = self._client.pubsub()
        self._channels = [process_channel(proc), *(table_channel(t) for t in tables)]

    async def __aenter__(self) -> Ghost:
        await self._pubsub.subscribe(*self._channels)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._pubsub.aclose()  # type: ignore[no-untyped-call]
        await self._client.aclose()

    async def to_owner(self, table: str, fence: int, kind: str, **fields: Any) -> None:
        """Publish what a forwarder on this ghost process would send the table's owner."""
        message = ToOwner(kind=kind, fence=fence, proc=self.proc, **fields)  # type: ignore[arg-type]
        await self._client.publish(table_channel(table), msgspec.json.encode(message))

    async def submit(self, table: str, fence: int, conn: int, seat: int, frame: Any) -> None:
        """A client frame of this ghost's socket ``conn``, forwarded under ``fence``."""
        text = json.dumps(frame)
        await self.to_owner(table, fence, "submit", conn=conn, seat=seat, frame=text)

    async def to_process(self, proc: str, message: ToProcess) -> None:
        """Publish what an owner would send process ``proc``."""
        await self._client.publish(process_channel(proc), msgspec.json.encode(message))

    async def heard_by_owner(self) -> ToOwner:
        """The next message a forwarder sent to one of ``tables``' owners."""
        while True:
            channel, data = await self._next()
            if channel != process_channel(self.proc):
                return msgspec.json.decode(data, type=ToOwner)

    async def frame(self, *kinds: str) -> dict[str, Any]:
        """The next frame an owner sent one of this ghost's sockets whose type is one
        of ``kinds`` (any type if none is given)."""
        while True:
            channel, data = await self._next()
            if channel != process_channel(self.proc):
                continue
            message = msgspec.json.decode(data, type=ToProcess)
            if message.frame is None:
                continue
            frame: dict[str, Any] = json.loads(message.frame)
            if not kinds or frame["type"] in kinds:
                return frame

    async def handover(self, step: str) -> ToProcess:
        """The next handover message (``offer`` or ``yours``) an owner sent this ghost."""
        while True:
            channel, data = await self._next()
            if channel == process_channel(self.proc):
                message = msgspec.json.decode(data, type=ToProcess)
                if message.handover == step:
                    return message

    async def heard_so_far(self) -> list[ToOwner]:
        """What forwarders sent ``tables``' owners that this ghost has not read yet, as
        far as Redis has delivered it (nothing is waited for)."""
        heard = []
        while (message := await self._pubsub.get_message(True, timeout=0.0)) is not None:
            if message["type"] == "message" and not message["channel"].startswith(b"pdk:proc:"):
                heard.append(msgspec.json.decode(message["data"], type=ToOwner))
        return heard

    async def _next(self) -> tuple[str, bytes]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GUARD_SECONDS
        while True:
            left = deadline - loop.time()
            assert left > 0, "nothing on the bus in time"
            message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
            if message is not None and message["type"] == "message":
                channel = message["channel"]
                return channel.decode() if isinstance(channel, bytes) else channel, message["data"]
