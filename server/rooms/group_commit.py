"""Group commit: the writes of many tables go to Redis together, pipelined on one connection.

With ``appendfsync always`` Redis fsyncs once per event-loop turn for every
write it received in that turn, and a client that sends its commands one
round trip at a time pays the whole fsync each time.  Rooms therefore do not
send their appends (or lease renewals) themselves: ``GroupCommit.run`` (or
``submit``) queues one script call and waits for its own reply.  The first call
queued in a turn of our event loop schedules one flush (a plain callback, not a
task) that writes everything queued by then with one ``write`` (no
transaction: each call keeps its own version check and its own answer).
Redis answers only after the fsync; whatever arrives meanwhile goes out in the
next flush, on the same connection, without waiting for those replies: Redis
answers a connection's commands in order, so a queue of pending calls, matched
to the replies as they are read (by hiredis, in C), is all the bookkeeping
there is.  A busy process writes large batches and an idle one writes at once.

The connection is our own ``asyncio.Protocol`` rather than a redis-py
``Connection``: at low load a flusher task per batch, redis-py's machinery for
each reply (stream reader, parser wrapper) and its connection checks were an
eighth of the server's CPU per action.  It is opened when there is work and none
is open, from the settings of the client's pool (TCP, TLS with the context
redis-py would build, or a unix socket; AUTH, CLIENT SETNAME and SELECT first,
their replies checked before any call goes out), and it always speaks RESP2.
While it is being opened calls queue; if it cannot be opened they fail, and the
next call tries again.

Bounds: at most ``MAX_BATCH`` calls per write, and at most ``MAX_OUTSTANDING``
calls written and not yet answered; beyond that, and while the transport asks
us to pause, calls wait in the queue (which callers bound: a table has at most
one call in flight).  One connection means Redis reads at most 16 KB of it per
turn of its event loop, i.e. per fsync; should that ever cap throughput,
several such connections would do, since calls of different tables need no
order among them.

Nothing is acknowledged early: a room hears its result only from Redis's reply
to that very call, so a seat still never hears of an action Redis does not
hold.  An error reply fails only its own call; NOSCRIPT (Redis restarted and
lost its script cache) means the call ran nothing, so it is sent again with the
script's body.  A lost connection, a protocol error or no reply for the
client's ``socket_timeout`` fails every call written and not answered (their
fate is unknown, as it was for a lone call) and drops the connection; the rooms
close and reload from Redis, and the next call connects again.
"""

from __future__ import annotations

import asyncio
import socket
from collections import deque
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any, cast

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection, SSLConnection, UnixDomainSocketConnection
from redis.asyncio.sentinel import SentinelManagedConnection
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    ConnectionError,
    InvalidResponse,
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisError,
    ResponseError,
    TimeoutError,
)

from .redis_failover import ReplicaAck, demoted, primary_address

__all__ = ["MAX_BATCH", "MAX_OUTSTANDING", "GroupCommit", "pack_commands"]

# Calls per write.  Redis runs a batch's scripts back to back (about 10 us each),
# so this bounds how long one batch holds Redis up for everyone else.
MAX_BATCH = 256
# Calls written and not yet answered, at most: what the old four pipelines of
# MAX_BATCH could have out at once.  Bounds what Redis may buffer for us and
# what one lost connection fails.
MAX_OUTSTANDING = 4 * MAX_BATCH

# hiredis's answer when the bytes so far hold no whole reply (False and None are replies).
_MORE = object()

# An error reply's first word, and the exception redis-py raises for it (its public
# classes; how redis-py maps them is private to it): the replies a script call or
# the handshake can get.  Any other error reply is a ``ResponseError``.
_REPLY_ERRORS: dict[str, type[RedisError]] = {
    "NOSCRIPT": NoScriptError,
    "READONLY": ReadOnlyError,
    "LOADING": BusyLoadingError,
    "OOM": OutOfMemoryError,
    "NOPERM": NoPermissionError,
    "NOAUTH": AuthenticationError,
    "WRONGPASS": AuthenticationError,
}
# The same for "ERR <message>" replies, by the whole message.
_ERR_REPLIES: dict[str, type[RedisError]] = {
    "invalid password": AuthenticationError,
    "max number of clients reached": ConnectionError,
}
_CLOSED_BY_REDIS = "Connection closed by server."


def _reply_error(reply: str) -> RedisError:
    """The exception for an error ``reply``, of the class redis-py would raise for it,
    carrying the message without the error's code (as redis-py's do)."""
    code, _, message = reply.partition(" ")
    if code == "ERR":
        return _ERR_REPLIES.get(message, ResponseError)(message)
    known = _REPLY_ERRORS.get(code)
    return known(message) if known is not None else ResponseError(reply)


class _Call:
    """One script call (or, with no script, a command of the connection's handshake)."""

    __slots__ = ("answer", "args", "keys", "script", "with_body")

    def __init__(
        self,
        script: AsyncScript | None,
        keys: Sequence[Any],
        args: Sequence[Any],
        answer: asyncio.Future[Any],
    ) -> None:
        self.script = script
        self.keys = keys
        self.args = args
        self.answer = answer
        # EVAL with the script's body instead of EVALSHA (after a NOSCRIPT).
        self.with_body = False


class GroupCommit:
    """Runs Lua scripts for many callers, batched and pipelined on one connection."""

    def __init__(self, redis: aioredis.Redis, replica_ack: ReplicaAck | None = None) -> None:
        pool = redis.connection_pool
        # WAIT after each batch, answers held until it says the replicas have them.
        self.replica_ack = replica_ack
        # Never connected: read for its settings (address, TLS context, credentials,
        # database, timeouts), parsed from the URL exactly as the pool's are.
        self._settings: AbstractConnection = pool.connection_class(**pool.connection_kwargs)
        self._queued: deque[_Call] = deque()
        self._link: _Link | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._flush_scheduled = False
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        # Writes of calls so far (for tests and diagnostics).
        self.pipelines = 0

    @property
    def outstanding(self) -> int:
        """Calls written and not yet answered (for tests and diagnostics)."""
        return 0 if self._link is None else len(self._link.pending)

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
        loop = self._loop
        if loop is None:
            # Kept: asyncio.get_running_loop() is a getpid() system call on Python 3.11.
            loop = self._loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()
        if self._closed:
            answer.set_exception(ConnectionError("the group commit is closed"))
            return answer
        self._queued.append(_Call(script, keys, args, answer))
        self._schedule_flush()
        return answer

    async def aclose(self) -> None:
        """Close the connection; calls not yet answered, and any made later, fail."""
        self._closed = True
        connecting, self._connecting = self._connecting, None
        if connecting is not None:
            connecting.cancel()
            await asyncio.gather(connecting, return_exceptions=True)
        link, self._link = self._link, None
        if link is not None:
            link.fail(ConnectionError("the group commit is closed"))
            await link.closed
        self._fail_queued(ConnectionError("the group commit is closed"))

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled and self._queued:
            self._flush_scheduled = True
            (self._loop or asyncio.get_running_loop()).call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._link is not None:
            self._link.write_queued()
        elif self._queued and self._connecting is None and not self._closed:
            self._connecting = asyncio.get_running_loop().create_task(
                self._connect(), name="group-commit-connect"
            )

    def _fail_queued(self, exc: Exception) -> None:
        queued, self._queued = self._queued, deque()
        for call in queued:
            if not call.answer.done():
                call.answer.set_exception(exc)

    async def _connect(self) -> None:
        try:
            link = await self._open()
        except Exception as exc:
            self._connecting = None
            # The calls queued meanwhile would only wait for the next attempt: they fail
            # as a lone call would have, and the next call tries again.
            self._fail_queued(exc)
            return
        self._connecting = None
        self._link = link
        link.write_queued()

    async def _open(self) -> _Link:
        """A connection that has passed its handshake (AUTH, CLIENT SETNAME, SELECT)."""
        settings = self._settings
        link = _Link(self, settings)
        try:
            async with asyncio.timeout(settings.socket_connect_timeout):
                await self._open_transport(link, settings)
                # gather: a second refusal (SELECT after a failed AUTH) is not left unread.
                await asyncio.gather(*link.send_handshake(await _handshake(settings)))
        except BaseException as exc:
            link.fail(ConnectionError("handshake failed"))
            if link.transport is not None:
                await link.closed
            if isinstance(exc, RedisError) or not isinstance(exc, Exception):
                raise
            raise ConnectionError(f"Error connecting to {_address(settings)}: {exc!r}") from exc
        return link

    @staticmethod
    async def _open_transport(link: _Link, settings: AbstractConnection) -> None:
        loop = asyncio.get_running_loop()
        if isinstance(settings, UnixDomainSocketConnection):
            await loop.create_unix_connection(lambda: link, settings.path)
            return
        host, port = await primary_address(settings)
        tls = settings.ssl_context.get() if isinstance(settings, SSLConnection) else None
        await loop.create_connection(lambda: link, host, port, ssl=tls)
        sock = link.transport.get_extra_info("socket") if link.transport else None
        if sock is not None:
            # As redis-py sets its own: small writes go at once, a dead peer is noticed.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if getattr(settings, "socket_keepalive", False):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
                options = getattr(settings, "socket_keepalive_options", None) or {}
                for option, value in options.items():
                    sock.setsockopt(socket.SOL_TCP, option, value)


async def _handshake(settings: AbstractConnection) -> list[tuple[Any, ...]]:
    """The commands a new connection sends before any call, as redis-py's would."""
    commands: list[tuple[Any, ...]] = []
    if settings.credential_provider is not None:
        credentials = await settings.credential_provider.get_credentials_async()
        commands.append(("AUTH", *credentials))
    elif settings.username or settings.password:
        if settings.username:
            commands.append(("AUTH", settings.username, settings.password or ""))
        else:
            commands.append(("AUTH", settings.password))
    if settings.client_name:
        commands.append(("CLIENT", "SETNAME", settings.client_name))
    if settings.db and int(settings.db):
        commands.append(("SELECT", int(settings.db)))
    return commands


def _address(settings: AbstractConnection) -> str:
    if isinstance(settings, SentinelManagedConnection):
        return f"the primary of {settings.connection_pool.service_name!r} (Sentinel)"
    if isinstance(settings, UnixDomainSocketConnection):
        return settings.path
    return f"{getattr(settings, 'host', '?')}:{getattr(settings, 'port', '?')}"


class _Link(asyncio.Protocol):
    """One connection to Redis: writes calls, matches replies to them in order."""

    def __init__(self, owner: GroupCommit, settings: AbstractConnection) -> None:
        self._owner = owner
        self._loop = asyncio.get_running_loop()
        encoder = settings.encoder
        reader_options: dict[str, Any] = {
            "protocolError": InvalidResponse,
            # The same exception classes (NoScriptError, ...) as redis-py raises.
            "replyError": _reply_error,
            "notEnoughData": _MORE,
        }
        if encoder.decode_responses:
            reader_options.update(encoding=encoder.encoding, errors=encoder.encoding_errors)
        self._reader = hiredis.Reader(**reader_options)
        self._timeout: float | None = settings.socket_timeout
        self.transport: asyncio.Transport | None = None
        # Calls written and not yet answered, in the order Redis will answer them.
        self.pending: deque[_Call] = deque()
        self._paused = False
        self._failed = False
        # Told it is a replica now: no new calls, closed once its replies are in.
        self._retired = False
        # When a reply last arrived, or the first pending call was written.
        self._progress = 0.0
        self._watchdog: asyncio.TimerHandle | None = None
        self.closed: asyncio.Future[None] = self._loop.create_future()

    # --- asyncio.Protocol ---------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's are not subclasses of asyncio.Transport).
        self.transport = cast(asyncio.Transport, transport)
        if self._failed:  # given up on while it was being opened
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(ConnectionError(_CLOSED_BY_REDIS))
        if not self.closed.done():
            self.closed.set_result(None)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._owner._link is self:
            self._owner._schedule_flush()

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        reader.feed(data)
        pending = self.pending
        resend: list[_Call] = []
        replica = False
        try:
            while (reply := reader.gets()) is not _MORE:
                if not pending:
                    raise InvalidResponse("Redis sent a reply to no call")
                call = pending.popleft()
                answer = call.answer
                if isinstance(reply, Exception):
                    replica = replica or demoted(reply)
                    if isinstance(reply, NoScriptError) and call.script and not call.with_body:
                        call.with_body = True
                        resend.append(call)
                    elif not answer.done():  # done: its caller stopped waiting
                        answer.set_exception(reply)
                elif not answer.done():
                    answer.set_result(reply)
        except RedisError as exc:
            self.fail(ConnectionError(f"Protocol error from Redis: {exc}"))
            return
        self._progress = self._loop.time()
        owner = self._owner
        if resend:
            # They ran nothing: first in line again, as they were queued before the rest.
            owner._queued.extendleft(reversed(resend))
        if replica or self._retired:
            self._retire()
        if owner._queued and owner._link is self:
            owner._schedule_flush()

    # --- writing --------------------------------------------------------------------

    def send_handshake(self, commands: list[tuple[Any, ...]]) -> list[asyncio.Future[Any]]:
        answers: list[asyncio.Future[Any]] = []
        if not commands:
            return answers
        for command in commands:
            answer: asyncio.Future[Any] = self._loop.create_future()
            self._expect(_Call(None, (), command, answer))
            answers.append(answer)
        assert self.transport is not None
        self.transport.write(pack_commands(commands))
        return answers

    def write_queued(self) -> None:
        """Write queued calls, a batch at a time, while the bounds allow."""
        owner = self._owner
        queued = owner._queued
        transport = self.transport
        assert transport is not None
        while queued and not self._paused and not self._failed:
            room = MAX_OUTSTANDING - len(self.pending)
            if room <= 0:
                return  # the next replies make room (data_received flushes again)
            out = bytearray()
            first = len(self.pending)
            for _ in range(min(len(queued), MAX_BATCH, room)):
                call = queued.popleft()
                start = len(out)
                try:
                    _pack_call(out, call)
                except TypeError as exc:  # an argument Redis cannot take: this call alone fails
                    del out[start:]
                    if not call.answer.done():
                        call.answer.set_exception(exc)
                    continue
                self._expect(call)
            if out:
                if owner.replica_ack is not None:
                    self._replica_barrier(owner.replica_ack, out, first)
                transport.write(out)
                owner.pipelines += 1

    def _retire(self) -> None:
        """A failover made this node a replica: new calls open a connection to whatever
        is primary now (``redis_failover``); this one only reads the replies still due."""
        owner = self._owner
        self._retired = True
        if owner._link is self:
            owner._link = None
            owner._schedule_flush()
        if not self.pending:
            self.fail(ConnectionError("Redis is a replica now (failover)"))

    def _replica_barrier(self, ack: ReplicaAck, out: bytearray, first: int) -> None:
        """Follow the batch packed in ``out`` (the calls pending from ``first`` on) with
        a WAIT that holds their answers back (``redis_failover.ReplicaAck``)."""
        batch = islice(self.pending, first, None)
        waited = ack.gate(out, batch, self._loop)
        waited.add_done_callback(self._replicas_answered)
        self._expect(_Call(None, (), (), waited))

    def _replicas_answered(self, waited: asyncio.Future[Any]) -> None:
        # Too few replicas: this node may have been replaced by a promoted replica while
        # it was cut off (a failover it never heard of).  Ask again where the primary is.
        ack = self._owner.replica_ack
        if ack is not None and not ack.acknowledged(waited):
            self._retire()

    def _expect(self, call: _Call) -> None:
        if not self.pending:
            self._progress = self._loop.time()
            if self._watchdog is None and self._timeout is not None:
                self._watchdog = self._loop.call_at(
                    self._progress + self._timeout, self._check_progress
                )
        self.pending.append(call)

    def _check_progress(self) -> None:
        """Fail the connection if Redis has answered nothing for ``socket_timeout``."""
        self._watchdog = None
        if not self.pending or self._failed or self._timeout is None:
            return
        deadline = self._progress + self._timeout
        if self._loop.time() >= deadline:
            self.fail(TimeoutError("Timeout reading from Redis"))
        else:
            self._watchdog = self._loop.call_at(deadline, self._check_progress)

    def fail(self, exc: Exception) -> None:
        """Drop this connection: every call written on it and not answered gets ``exc``.

        Their replies may still be on the way, so the connection is never used again.
        """
        if self._failed:
            return
        self._failed = True
        owner = self._owner
        current = owner._link is self
        if current:
            owner._link = None
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self.transport is not None:
            self.transport.abort()
        pending, self.pending = self.pending, deque()
        for call in pending:
            if not call.answer.done():
                call.answer.set_exception(exc)
        if current:
            # Calls queued behind the lost ones go out on a new connection.
            owner._schedule_flush()


def _pack_call(out: bytearray, call: _Call) -> None:
    script = call.script
    assert script is not None
    keys, args = call.keys, call.args
    out += b"*%d\r\n" % (3 + len(keys) + len(args))
    if call.with_body:
        _pack_args(out, ("EVAL", script.script, len(keys)))
    else:
        # Every call of a script begins with the same bulk strings: packed once.
        head = _EVALSHA_HEADS.get(script.sha)
        if head is None:
            head = _EVALSHA_HEADS[script.sha] = _packed(("EVALSHA", script.sha))
        out += head
        out += b"$%d\r\n%d\r\n" % (len(str(len(keys))), len(keys))
    _pack_args(out, keys)
    _pack_args(out, args)


# ``EVALSHA <sha>`` packed, per script (a handful: the stores' and budgets' scripts).
_EVALSHA_HEADS: dict[str, bytes] = {}


def _packed(args: Iterable[Any]) -> bytes:
    out = bytearray()
    _pack_args(out, args)
    return bytes(out)


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
        _pack_args(out, command)
    return bytes(out)


def _pack_args(out: bytearray, args: Iterable[Any]) -> None:
    for arg in args:
        # Exact types first (every call packs a dozen arguments); subclasses (an IntEnum,
        # a bool to refuse) take the checks below.
        kind = type(arg)
        if kind is bytes:
            data = arg
        elif kind is str:
            data = arg.encode()
        elif kind is int:
            data = b"%d" % arg
        elif isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode()
        elif isinstance(arg, int | float) and not isinstance(arg, bool):
            data = repr(arg).encode()
        else:
            raise TypeError(f"cannot send {type(arg).__name__} to Redis: {arg!r}")
        out += b"$%d\r\n%b\r\n" % (len(data), data)
