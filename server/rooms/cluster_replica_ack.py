"""Replica acknowledgement on Redis Cluster: a table's writes and their WAIT on one
connection to the primary that owns the table's slot.

WAIT counts the replicas that hold everything *its own connection* wrote, so
it vouches for a write only when it follows that write on the same connection
to the same node.  redis-py's cluster client routes each command by itself
(WAIT has no key, so it would go to some other node), and its pipeline sends a
redirected command again on its own, after the WAIT: neither can promise that.
So here the calls are grouped by the primary that owns their first key's slot
(every key of a table shares its ``{id}`` hash tag, hence one slot), and each
group goes out on one connection of that node, followed by ``WAIT replicas
timeout_ms``; no call is answered before WAIT says enough replicas hold it.

One batch per node at a time: calls for a node that is busy wait for the next
batch (callers bound them: a table has at most one call in flight), so a
process holds at most one connection per primary here.  Anything that does not
prove the calls are on enough replicas fails them all, with the error Redis or
the socket gave, or ``ReplicaAckTimeout``: their fate is unknown, as for a lone
call whose connection was lost, and the room reloads from Redis.  A lost
connection or a redirection (MOVED, ASK, CLUSTERDOWN: a failover moved the
slot) also makes the client read the cluster's slots again before the next
batch goes out.  NOSCRIPT (a promoted replica never loaded the script) ran
nothing: that call goes again, with the script's body, in the next batch.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from typing import Any

from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ConnectionError,
    MovedError,
    NoScriptError,
    RedisError,
    ResponseError,
    TryAgainError,
)

from .redis_failover import ReplicaAck, ReplicaAckTimeout

__all__ = ["MAX_BATCH", "ClusterReplicaAck"]

# Calls per batch (per node): what one WAIT vouches for at once.
MAX_BATCH = 256

# Replies that say the slot is not (or no longer) this node's: the call ran nothing.
_MOVED = (MovedError, AskError, ClusterDownError, TryAgainError)


class _Call:
    __slots__ = ("answer", "args", "key", "script")

    def __init__(
        self,
        key: str,
        args: tuple[Any, ...],
        script: AsyncScript | None,
        answer: asyncio.Future[Any],
    ) -> None:
        self.key = key
        self.args = args
        self.script = script
        self.answer = answer


class ClusterReplicaAck:
    """Script calls (and single commands) on Redis Cluster, each answered only once
    ``ack.replicas`` replicas of its slot's primary hold it."""

    def __init__(self, cluster: RedisCluster, ack: ReplicaAck) -> None:
        self._cluster = cluster
        self._ack = ack
        self._queued: deque[_Call] = deque()
        self._per_node: dict[str, deque[_Call]] = {}
        self._busy: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._refresh: asyncio.Task[None] | None = None
        self._stale = False
        self._flush_scheduled = False
        self._closed = False
        # Batches written (for tests and diagnostics).
        self.batches = 0

    def submit(
        self, script: AsyncScript, keys: Sequence[Any], args: Sequence[Any]
    ) -> asyncio.Future[Any]:
        """``script``'s answer for ``keys`` and ``args``, once the replicas hold it."""
        command = ("EVALSHA", script.sha, len(keys), *keys, *args)
        return self._enqueue(str(keys[0]), command, script)

    def command(self, key: str, *args: Any) -> asyncio.Future[Any]:
        """One command on ``key``'s primary, answered once the replicas hold it."""
        return self._enqueue(key, args, None)

    async def aclose(self) -> None:
        """Fail whatever is queued; wait for the batches under way."""
        self._closed = True
        if self._refresh is not None:
            self._refresh.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        error = ConnectionError("the replica acknowledgement is closed")
        for calls in (self._queued, *self._per_node.values()):
            _fail(list(calls), error)
            calls.clear()

    def _enqueue(
        self, key: str, args: tuple[Any, ...], script: AsyncScript | None
    ) -> asyncio.Future[Any]:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._closed:
            answer.set_exception(ConnectionError("the replica acknowledgement is closed"))
            return answer
        self._queued.append(_Call(key, args, script, answer))
        self._schedule_flush()
        return answer

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._closed or self._refresh is not None:
            return  # the refresh flushes when it is done
        if self._stale:
            self._refresh = self._spawn(self._read_slots())
            return
        nodes: dict[str, ClusterNode] = {}
        while self._queued:
            call = self._queued.popleft()
            try:
                node = self._cluster.get_node_from_key(call.key)
            except RedisError as exc:  # the slot is covered by no node right now
                _fail([call], exc)
                self._stale = True
                continue
            assert node is not None
            nodes[node.name] = node
            self._per_node.setdefault(node.name, deque()).append(call)
        for name, node in nodes.items():
            if name not in self._busy:
                self._start_batch(node)

    def _start_batch(self, node: ClusterNode) -> None:
        waiting = self._per_node.get(node.name)
        if not waiting:
            return
        batch = [waiting.popleft() for _ in range(min(len(waiting), MAX_BATCH))]
        self._busy.add(node.name)
        self._spawn(self._send(node, batch))

    def _spawn(self, work: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _read_slots(self) -> None:
        """Ask the cluster again which primary owns which slot (after a failover)."""
        try:
            await self._cluster.nodes_manager.initialize()
            self._stale = False
        except (RedisError, OSError) as exc:
            # No node answers yet: what is queued fails now, the next call tries again.
            _fail(list(self._queued), exc)
            self._queued.clear()
        finally:
            self._refresh = None
        if self._queued:
            self._schedule_flush()

    async def _send(self, node: ClusterNode, batch: list[_Call]) -> None:
        try:
            replies = await self._exchange(node, batch)
        except Exception as exc:  # lost connection, timeout: every call's fate is unknown
            _fail(batch, exc)
            self._stale = True
        else:
            self._settle(batch, replies)
        finally:
            self._busy.discard(node.name)
            if self._per_node.get(node.name):
                if self._stale:
                    # Its calls may belong to another primary now: routed again.
                    self._queued.extendleft(reversed(self._per_node.pop(node.name)))
                    self._schedule_flush()
                else:
                    self._start_batch(node)

    async def _exchange(self, node: ClusterNode, batch: list[_Call]) -> list[Any]:
        """The batch and its WAIT written on one connection of ``node``; every reply
        (an error reply as its exception), WAIT's last."""
        ack = self._ack
        commands = [call.args for call in batch]
        commands.append(("WAIT", ack.replicas, ack.timeout_ms))
        connection = node.acquire_connection()
        try:
            await connection.send_packed_command(connection.pack_commands(commands))
            self.batches += 1
            replies: list[Any] = []
            for _ in commands:
                try:
                    replies.append(await connection.read_response())
                except ResponseError as exc:
                    replies.append(exc)
        except BaseException:
            # Replies may still be on their way: this connection is never used again.
            await connection.disconnect()
            raise
        finally:
            node.release(connection)
        return replies

    def _settle(self, batch: list[_Call], replies: list[Any]) -> None:
        ack, waited = self._ack, replies[-1]
        failure: Exception | None = None
        if isinstance(waited, Exception):
            failure = waited
        elif int(waited) < ack.replicas:
            failure = ReplicaAckTimeout(
                f"{waited} of {ack.replicas} replicas acknowledged the write "
                f"within {ack.timeout_ms} ms"
            )
        again: list[_Call] = []
        for call, reply in zip(batch, replies, strict=False):
            if isinstance(reply, NoScriptError) and call.script is not None:
                # Nothing ran: again, carrying the script's body this time.
                call.args = ("EVAL", call.script.script, *call.args[2:])
                again.append(call)
                continue
            if isinstance(reply, _MOVED):
                self._stale = True
            if call.answer.done():  # its caller stopped waiting
                continue
            if isinstance(reply, Exception):
                call.answer.set_exception(reply)
            elif failure is not None:
                call.answer.set_exception(failure)
            else:
                call.answer.set_result(reply)
        if again:
            self._queued.extendleft(reversed(again))
            self._schedule_flush()


def _fail(calls: list[_Call], exc: BaseException) -> None:
    for call in calls:
        if not call.answer.done():
            call.answer.set_exception(exc)
