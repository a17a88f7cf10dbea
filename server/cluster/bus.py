"""Messages between server processes, through Redis pub/sub.

Two kinds of channel:

- ``pdk:{<table>}:in``: what forwarding processes send to the table's owner
  (``ToOwner``).  Only the owner subscribes, while it holds the table.
- ``pdk:proc:<process id>``: what owners send back to one process
  (``ToProcess``): each forwarded socket's own frames, addressed by its id.

Pub/sub, not streams: every message here is either a request that is not yet
accepted (a lost one is as if the client never sent it, and the client can
send it again) or a frame that is a projection of what Redis already holds (a
lost one is repaired by the forwarder's periodic ``alive``, which carries the
last version each socket saw).  Nothing needs to be stored, so nothing has to
be trimmed, and a message costs one PUBLISH.  docs/architecture.md says more.

Every message carries the fencing number of the ownership it belongs to, and
both ends drop messages of another number, so a paused former owner can never
reach a client after another process took its table.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Literal

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import RedisError

__all__ = [
    "Bus",
    "ToOwner",
    "ToProcess",
    "process_channel",
    "table_channel",
]

log = logging.getLogger(__name__)

_RETRY_SECONDS = 0.5


class ToOwner(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A forwarding process to a table's owner.

    ``attach``: seat socket ``conn`` of process ``proc`` joins (the owner answers
    with a full state); ``token`` is the hash of the token it joined with, which
    the owner checks against its own meta (a spectator's seat is -1).  ``submit``:
    that socket's client frame, verbatim (the owner decodes it as strictly as a
    local one).  ``detach``: it left.
    ``alive``: the sockets of ``proc`` still open, each as ``[conn, seat, version
    seen]``: the owner attaches any it does not know and resends a full state to
    any that is behind.
    ``yield``: the answer to the owner's handover offer: ``proc`` holds the table's
    next frames from here on, and everything it forwarded before was sent ahead
    of this (node.py, "Handover").
    """

    kind: Literal["attach", "submit", "detach", "alive", "yield"]
    fence: int
    proc: str
    conn: int = 0
    seat: int = 0
    token: str = ""
    frame: str = ""
    conns: list[tuple[int, int, int]] = []
    # ``attach``: the socket takes deltas (its frames are made on the owner).
    deltas: bool = False


class ToProcess(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """An owner to a forwarding process: a frame for socket ``conn``, or its end
    (``close`` is the WebSocket close code the owner chose), or a step of a
    handover of the whole table (``conn`` 0): ``offer`` (every socket of the
    table is on that process; will it take the table?) and ``yours`` (the owner
    stopped the room and released the lease: take it now).

    Fields at their defaults are left out: a process of the release before
    ``handover`` existed still reads every frame and close (a rolling upgrade); it
    drops an offer as malformed, the offer lapses, and the table stays."""

    table: str
    fence: int
    conn: int
    frame: str | None = None
    close: int | None = None
    reason: str = ""
    handover: Literal["", "offer", "yours"] = ""


def table_channel(table_id: str) -> str:
    """The channel the owner of ``table_id`` listens on (same cluster slot as its keys)."""
    return f"pdk:{{{table_id}}}:in"


def process_channel(proc: str) -> str:
    """The channel process ``proc`` listens on for its forwarded sockets."""
    return f"pdk:proc:{proc}"


_to_owner = msgspec.json.Decoder(ToOwner)
_to_process = msgspec.json.Decoder(ToProcess)
_encoder = msgspec.json.Encoder()

OwnerHandler = Callable[[str, ToOwner], None]
ProcessHandler = Callable[[ToProcess], None]


class Bus:
    """One subscriber connection per process, and publishing through ``publisher``.

    On Redis Cluster a classic PUBLISH reaches every node, so ``subscriber``
    may be a plain client of any one node.
    """

    def __init__(
        self,
        proc: str,
        subscriber: aioredis.Redis,
        publish: Callable[[str, bytes], Awaitable[object]],
    ) -> None:
        self.proc = proc
        self._publish = publish
        self._pubsub = subscriber.pubsub()
        self._reader: asyncio.Task[None] | None = None
        self._tables: set[str] = set()
        self.on_owner_message: OwnerHandler = lambda table, message: None
        self.on_process_message: ProcessHandler = lambda message: None
        # Game frames that crossed between processes through this bus: client requests
        # sent to owners, and frames sent to other processes' sockets (the share a
        # socket-to-owner routing is judged by: bench/cluster.py reads it).
        self.frames_forwarded = 0

    def start(self) -> None:
        """Subscribe and read in the background (retrying while Redis is unreachable)."""
        self._reader = asyncio.create_task(self._read(), name="bus-reader")

    async def close(self) -> None:
        """Stop reading and unsubscribe from everything."""
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        with contextlib.suppress(RedisError, OSError):
            await self._pubsub.aclose()  # type: ignore[no-untyped-call]

    async def listen_table(self, table_id: str) -> None:
        """Receive ``ToOwner`` messages of ``table_id`` (while this process owns it)."""
        if table_id not in self._tables:
            self._tables.add(table_id)
            await self._pubsub.subscribe(table_channel(table_id))

    async def ignore_table(self, table_id: str) -> None:
        """Stop receiving ``table_id``'s messages (this process no longer owns it)."""
        if table_id in self._tables:
            self._tables.discard(table_id)
            with contextlib.suppress(RedisError, OSError):
                await self._pubsub.unsubscribe(table_channel(table_id))

    async def to_owner(self, table_id: str, message: ToOwner) -> None:
        """Publish ``message`` to whichever process owns ``table_id``."""
        if message.kind == "submit":
            self.frames_forwarded += 1
        await self._publish(table_channel(table_id), _encoder.encode(message))

    async def to_process(self, proc: str, message: ToProcess) -> None:
        """Publish ``message`` to process ``proc``."""
        if message.frame is not None:
            self.frames_forwarded += 1
        await self._publish(process_channel(proc), _encoder.encode(message))

    async def _read(self) -> None:
        own = process_channel(self.proc).encode()
        while True:
            try:
                if not self._pubsub.subscribed:
                    await self._pubsub.subscribe(own)
                message = await self._pubsub.get_message(
                    ignore_subscribe_messages=True, timeout=1.0
                )
            except (RedisError, OSError) as exc:
                # redis-py reconnects and subscribes again on the next call.
                log.warning("bus: %s; retrying", exc)
                await asyncio.sleep(_RETRY_SECONDS)
                continue
            if message is None or message.get("type") != "message":
                continue
            channel: bytes = message["channel"]
            data: bytes = message["data"]
            try:
                if channel == own:
                    self.on_process_message(_to_process.decode(data))
                else:
                    # "pdk:{<table>}:in": the table id sits between the braces.
                    text = channel.decode()
                    table = text[text.index("{") + 1 : text.index("}")]
                    self.on_owner_message(table, _to_owner.decode(data))
            except (msgspec.DecodeError, ValueError) as exc:
                log.warning("bus: dropped a malformed message on %r: %s", channel, exc)
            except Exception:
                log.exception("bus: handler failed on %r", channel)
