"""What the group commit's own connection needs to live through a Redis failover.

- **Where the primary is.**  Behind Sentinel the connection's settings name no
  host: ``primary_address`` asks the sentinels, as redis-py's own
  Sentinel-managed connections do, each time the connection is opened.
- **A primary that became a replica.**  After a failover the old primary, back
  up, is made a replica of the new one; a connection still open to it gets
  ``READONLY`` (or, from a script, an error that quotes it) for every write.
  ``demoted`` recognises those replies, so the connection is dropped and the
  next one goes to the new primary.
- **Replica acknowledgement** (``ReplicaAck``).  Redis replicates
  asynchronously: a primary that dies right after answering may take the last
  writes with it, and a replica promoted in its place never had them.  With
  ``replicas`` > 0 every batch of script calls is followed, on the same
  connection, by ``WAIT replicas timeout_ms``; no call of the batch is answered
  to its caller before WAIT's reply says that many replicas hold everything
  this connection wrote so far.  If fewer do when the timeout ends, each call
  of the batch fails with ``ReplicaAckTimeout``: the write is on the primary but
  perhaps nowhere else, so its fate is unknown, exactly as when the connection
  is lost after sending it.  The room then closes without telling anyone of the
  action (its sockets reconnect and get whatever Redis holds), so no client is
  ever told of an action that only one Redis node has.  The connection is
  dropped too: a primary whose replicas stopped answering may be one that was
  cut off and replaced (the sentinels promoted a replica it never heard of), so
  the next connection asks again where the primary is.

Why one WAIT covers a whole batch: WAIT counts replicas that have acknowledged
the connection's latest write, and a connection's commands run in order, so
the WAIT written after a batch vouches for every call before it.  Loads and
lease acquisitions are gated too: an acquisition writes (the fencing number),
so its WAIT vouches for every write any process made to Redis before it, and
the load that follows reads only what a promoted replica would also hold.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from redis.asyncio.connection import AbstractConnection
from redis.asyncio.sentinel import SentinelManagedConnection
from redis.exceptions import ConnectionError, ReadOnlyError, ResponseError

__all__ = [
    "ReplicaAck",
    "ReplicaAckTimeout",
    "demoted",
    "primary_address",
]

# Words a reply carries when the node it came from is a replica: plain READONLY, a
# script's write refused on a replica (Redis 6.2 wraps it as "ERR Error running
# script ... -READONLY ..."), and WAIT sent to a replica.
_REPLICA_REPLIES = ("READONLY", "WAIT cannot be used with replica")


class ReplicaAckTimeout(ConnectionError):
    """Fewer replicas than asked acknowledged a write in time: its fate is unknown."""


class _Answered(Protocol):
    answer: asyncio.Future[Any]


@dataclass(frozen=True, slots=True)
class ReplicaAck:
    """Answer a script call only once ``replicas`` replicas hold it (WAIT), failing it
    with ``ReplicaAckTimeout`` when they do not within ``timeout_ms``."""

    replicas: int
    timeout_ms: int

    def __post_init__(self) -> None:
        if self.replicas < 1 or self.timeout_ms < 1:
            raise ValueError("a replica acknowledgement needs replicas >= 1 and timeout_ms >= 1")

    def gate(
        self, out: bytearray, calls: Iterable[_Answered], loop: asyncio.AbstractEventLoop
    ) -> asyncio.Future[Any]:
        """Hold back the answers of ``calls`` (a batch just packed into ``out``) until a
        WAIT, appended to ``out``, is answered; the future of WAIT's own reply, which
        the caller expects after the batch's replies.

        Each call's ``answer`` becomes a future of this barrier's; the caller's own is
        settled from it once WAIT has answered.
        """
        held: list[tuple[asyncio.Future[Any], asyncio.Future[Any]]] = []
        for call in calls:
            inner: asyncio.Future[Any] = loop.create_future()
            held.append((inner, call.answer))
            call.answer = inner
        command = b"WAIT"
        replicas = str(self.replicas).encode()
        timeout = str(self.timeout_ms).encode()
        out += b"*3\r\n$%d\r\n%s\r\n" % (len(command), command)
        out += b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(replicas), replicas, len(timeout), timeout)
        waited: asyncio.Future[Any] = loop.create_future()
        waited.add_done_callback(lambda done: self._settle(done, held))
        return waited

    def acknowledged(self, waited: asyncio.Future[Any]) -> bool:
        """Whether WAIT's answer ``waited`` counts enough replicas."""
        if waited.cancelled() or waited.exception() is not None:
            return False
        return int(waited.result()) >= self.replicas

    def _settle(
        self,
        waited: asyncio.Future[Any],
        held: list[tuple[asyncio.Future[Any], asyncio.Future[Any]]],
    ) -> None:
        failure: BaseException | None = None
        if waited.cancelled():
            failure = ConnectionError("the replica acknowledgement was cancelled")
        elif waited.exception() is not None:
            failure = waited.exception()
        elif not self.acknowledged(waited):
            failure = ReplicaAckTimeout(
                f"{waited.result()} of {self.replicas} replicas acknowledged the write "
                f"within {self.timeout_ms} ms"
            )
        for inner, outer in held:
            if inner.done():
                _copy(inner, outer, failure)
            else:
                # Sent again (NOSCRIPT: it ran nothing) in a later batch, whose own WAIT
                # settles ``inner``; the caller hears of it then.
                inner.add_done_callback(functools.partial(_copy_later, outer))


def _copy_later(outer: asyncio.Future[Any], inner: asyncio.Future[Any]) -> None:
    _copy(inner, outer, None)


def _copy(
    inner: asyncio.Future[Any], outer: asyncio.Future[Any], failure: BaseException | None
) -> None:
    if outer.done():  # its caller stopped waiting
        return
    if inner.cancelled():
        outer.cancel()
    elif inner.exception() is not None:
        outer.set_exception(inner.exception())  # type: ignore[arg-type]
    elif failure is not None:
        outer.set_exception(failure)
    else:
        outer.set_result(inner.result())


def demoted(reply: Exception) -> bool:
    """Whether an error ``reply`` says the node is a replica now (drop the connection)."""
    if isinstance(reply, ReadOnlyError):
        return True
    return isinstance(reply, ResponseError) and any(w in str(reply) for w in _REPLICA_REPLIES)


async def primary_address(settings: AbstractConnection) -> tuple[str, int]:
    """The host and port to connect to for ``settings``: the sentinels' current
    primary for a Sentinel-managed connection, else the settings' own."""
    if isinstance(settings, SentinelManagedConnection):
        host, port = await settings.connection_pool.get_master_address()
        return str(host), int(port)
    return getattr(settings, "host", "localhost"), int(getattr(settings, "port", 6379))
