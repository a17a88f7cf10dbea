"""Group commit: the script calls of many tables share writes on one connection of its own,
each still answered on its own, in order, and only by Redis's reply to it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis
import redis.asyncio as aioredis
import uvloop
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.asyncio.connection import Connection
from redis.commands.core import AsyncScript
from redis.credentials import UsernamePasswordCredentialProvider
from redis.exceptions import (
    AuthenticationError,
    ConnectionError,
    ReadOnlyError,
    RedisError,
    ResponseError,
)
from redis.exceptions import TimeoutError as RedisTimeoutError
from room_helpers import GUARD_SECONDS, lease_of, log_of, new_table

from server.engine import Pass, Play
from server.redis_embedded import EmbeddedRedis, find_redis_server
from server.rooms import group_commit as group_commit_module
from server.rooms.group_commit import GroupCommit, _Call, _pack_call, pack_commands
from server.rooms.store import Lease, LeaseLost, TableStore, VersionConflict
from tests.conftest import free_port

T = TypeVar("T")

# Scripts of the tests that drive a GroupCommit directly.
ECHO = "return ARGV[1]"
REFUSE = "return redis.error_reply(ARGV[1])"
STORE = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])"


async def within(answer: Awaitable[T]) -> T:
    """``answer``, failing the test (rather than hanging it) if it never comes."""
    return await asyncio.wait_for(answer, GUARD_SECONDS)


async def until(condition: Callable[[], bool]) -> None:
    """Return once ``condition`` holds (the event it stands for has happened), failing the
    test (rather than hanging it) if it never does.  Checked at every turn of the loop:
    how long that takes is the machine's business, not the test's."""

    async def check() -> None:
        # The group commit's counters have no event of their own to wait on.
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.001)

    await within(check())


def paused(group: GroupCommit) -> bool:
    """Whether the group commit's connection has been asked to stop writing (its socket's
    buffers are full)."""
    link = group._link
    return link is not None and link._paused


async def tables(store: TableStore, n: int) -> list[Lease]:
    metas = [(await new_table(store, seed=i))[0] for i in range(n)]
    return [await lease_of(store, m.id) for m in metas]


def group_commit(store: TableStore) -> GroupCommit:
    batch = store._batch
    assert batch is not None
    return batch


@contextlib.asynccontextmanager
async def group_commit_on(client: aioredis.Redis) -> AsyncIterator[GroupCommit]:
    """A GroupCommit with ``client``'s settings, closed (with the client) afterwards."""
    group = GroupCommit(client)
    try:
        yield group
    finally:
        await group.aclose()
        await client.aclose()


@pytest.fixture
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    """A redis-server of this test's own, to stop, kill and restart."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("gc"))
    server.start()
    yield server
    if server.pid is not None and server.running:
        os.kill(server.pid, signal.SIGCONT)
    server.stop()


PASSWORD = "correct horse"


@pytest.fixture
def password_redis(tmp_path: Path) -> Iterator[int]:
    """A redis-server on TCP that wants ``PASSWORD``; yields its port."""
    port = free_port()
    argv = [
        str(find_redis_server()), "--port", str(port), "--bind", "127.0.0.1",
        "--requirepass", PASSWORD, "--save", "", "--appendonly", "no", "--dir", str(tmp_path),
    ]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, password=PASSWORD, socket_connect_timeout=1)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except (redis.ConnectionError, OSError):
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.02)
        yield port
    finally:
        client.close()
        process.terminate()
        process.wait()


# --- batching --------------------------------------------------------------------------


async def test_appends_made_in_one_turn_go_out_in_one_write_and_each_gets_its_own_version(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    leases = await tables(store, 40)
    await redis_client.script_flush()
    before = group_commit(store).pipelines
    first = await within(
        asyncio.gather(*(store.append(lease, 0, [Play(seat=0, cards=["3S"])]) for lease in leases))
    )
    # The first write of a script Redis does not hold meets NOSCRIPT: sent again, with its body.
    assert group_commit(store).pipelines - before == 2
    before = group_commit(store).pipelines
    second = await within(
        asyncio.gather(*(store.append(lease, 1, [Pass(seat=1)]) for lease in leases))
    )
    assert group_commit(store).pipelines - before == 1
    assert first == [1] * 40
    assert second == [2] * 40
    for lease in leases:
        assert await log_of(store, lease.table_id) == [Play(seat=0, cards=["3S"]), Pass(seat=1)]


async def test_lease_renewals_of_many_tables_share_a_write_with_appends(
    store: TableStore,
) -> None:
    leases = await tables(store, 30)
    await store.release(leases[7])
    await lease_of(store, leases[7].table_id, owner="another-process")
    # Both scripts known to Redis already (no NOSCRIPT round trip below).
    await store.renew(leases[0], 60_000)
    await store.append(leases[0], 0, [Pass(seat=1)])
    before = group_commit(store).pipelines
    results = await within(
        asyncio.gather(
            *(store.renew(lease, 60_000) for lease in leases),
            *(store.append(lease, 0, [Pass(seat=1)]) for lease in leases[10:]),
            return_exceptions=True,
        )
    )
    assert isinstance(results[7], LeaseLost)
    assert [r for i, r in enumerate(results) if i != 7] == [None] * 29 + [1] * 20
    assert group_commit(store).pipelines - before == 1


async def test_a_refusal_in_a_batch_fails_only_its_own_call(store: TableStore) -> None:
    leases = await tables(store, 10)
    # The fifth call is made against a version Redis never held, the sixth with a lease
    # another process has taken since.
    await store.release(leases[5])
    await lease_of(store, leases[5].table_id, owner="another-process")
    calls = [
        store.append(lease, 3 if i == 4 else 0, [Pass(seat=1)]) for i, lease in enumerate(leases)
    ]
    results = await within(asyncio.gather(*calls, return_exceptions=True))
    assert isinstance(results[4], VersionConflict)
    assert (results[4].expected, results[4].stored) == (3, 0)
    assert isinstance(results[5], LeaseLost)
    assert [r for i, r in enumerate(results) if i not in (4, 5)] == [1] * 8
    assert await log_of(store, leases[4].table_id) == []
    assert await log_of(store, leases[5].table_id) == []


async def test_calls_are_answered_in_order_and_an_error_reply_fails_only_its_own_call(
    redis_client: aioredis.Redis,
) -> None:
    echo, refuse = redis_client.register_script(ECHO), redis_client.register_script(REFUSE)
    # What redis-py raises for the same replies: the group commit raises the same.
    messages = [
        "READONLY not here",
        "a plain refusal",
        "OOM no room",
        "LOADING wait",
        "NOPERM not yours",
        "WRONGPASS who",
        "ERR invalid password",
        "ERR max number of clients reached",
        "ERR any other",
    ]
    expected: dict[str, Exception] = {}
    for message in messages:
        with pytest.raises(RedisError) as raised:
            await refuse(keys=[], args=[message])
        expected[message] = raised.value
    assert isinstance(expected["READONLY not here"], ReadOnlyError)
    assert type(expected["ERR any other"]) is ResponseError
    assert await echo(keys=[], args=["loaded"]) == b"loaded"
    async with group_commit_on(aioredis.from_url(_url_of(redis_client))) as group:
        calls = [
            group.submit(refuse, [], [messages[i % len(messages)]])
            if i % 7 == 3
            else group.submit(echo, [], [i])
            for i in range(700)
        ]
        results = await within(asyncio.gather(*calls, return_exceptions=True))
    assert group.pipelines == 3  # 700 calls, at most MAX_BATCH a write
    for i, (call, result) in enumerate(zip(calls, results, strict=True)):
        if i % 7 == 3:
            want, got = expected[messages[i % len(messages)]], call.exception()
            assert type(got) is type(want)
            assert str(got) == str(want)
        else:
            assert result == str(i).encode()


async def test_appends_go_on_after_redis_forgets_its_scripts(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    leases = await tables(store, 3)
    assert await store.append(leases[0], 0, [Pass(seat=1)]) == 1
    await redis_client.script_flush()  # what a restarted Redis looks like to the script
    results = await within(
        asyncio.gather(*(store.append(lease, 0, [Pass(seat=1)]) for lease in leases[1:]))
    )
    assert results == [1, 1]
    assert await store.append(leases[0], 1, [Pass(seat=2)]) == 2


async def test_calls_that_meet_a_forgotten_script_are_sent_again_and_keep_their_answers(
    redis_client: aioredis.Redis,
) -> None:
    echo, store = redis_client.register_script(ECHO), redis_client.register_script(STORE)
    async with group_commit_on(aioredis.from_url(_url_of(redis_client))) as group:
        assert await within(group.run(echo, [], ["warm"])) == b"warm"
        await redis_client.script_flush()
        # Across several writes, both scripts forgotten, the calls in flight together.
        calls = [
            group.submit(echo, [], [i]) if i % 2 else group.submit(store, [f"gc:{i}"], [i])
            for i in range(600)
        ]
        assert await within(asyncio.gather(*calls)) == [str(i).encode() for i in range(600)]
        assert await redis_client.get("gc:10") == b"10"
        # Loaded again: the next calls go by hash.
        assert await redis_client.script_exists(echo.sha, store.sha) == [True, True]


def _url_of(client: aioredis.Redis) -> str:
    return "unix://" + client.get_connection_kwargs()["path"]


async def test_a_caller_that_stops_waiting_does_not_stop_the_others(store: TableStore) -> None:
    leases = await tables(store, 6)
    calls = [asyncio.ensure_future(store.append(lease, 0, [Pass(seat=1)])) for lease in leases]
    await asyncio.sleep(0)
    calls[0].cancel()
    assert await within(asyncio.gather(*calls[1:])) == [1] * 5
    with pytest.raises(asyncio.CancelledError):
        await calls[0]


# --- the connection --------------------------------------------------------------------


async def test_one_connection_serves_every_write_while_it_lasts(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    leases = await tables(store, 8)

    async def script_clients() -> set[int]:
        found = await redis_client.client_list()
        return {int(c["id"]) for c in found if c["cmd"] in ("evalsha", "eval")}

    seen = await script_clients()
    assert len(seen) == 1
    for version in range(5):
        assert (
            await within(
                asyncio.gather(*(store.append(lease, version, [Pass(seat=1)]) for lease in leases))
            )
            == [version + 1] * 8
        )
        assert await script_clients() == seen


async def test_appends_go_on_after_redis_drops_idle_connections(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    leases = await tables(store, 4)
    assert (
        await within(asyncio.gather(*(store.append(lease, 0, [Pass(seat=1)]) for lease in leases)))
        == [1] * 4
    )
    await redis_client.client_kill_filter(_type="normal", skipme=True)
    assert (
        await within(asyncio.gather(*(store.append(lease, 1, [Pass(seat=2)]) for lease in leases)))
        == [2] * 4
    )
    for lease in leases:
        assert await log_of(store, lease.table_id) == [Pass(seat=1), Pass(seat=2)]


async def test_a_lost_connection_fails_the_calls_awaiting_replies_and_the_next_call_reconnects(
    own_redis: EmbeddedRedis,
) -> None:
    data_dir = own_redis.data_dir
    client = aioredis.from_url(own_redis.url)
    store = client.register_script(STORE)
    async with group_commit_on(client) as group:
        assert await within(group.run(store, ["before"], ["1"])) == b"1"
        assert own_redis.pid is not None
        os.kill(own_redis.pid, signal.SIGSTOP)
        calls = [group.submit(store, [f"lost:{i}"], [i]) for i in range(3)]
        await until(lambda: group.outstanding == 3)  # written, waiting for replies
        os.kill(own_redis.pid, signal.SIGKILL)
        results = await within(asyncio.gather(*calls, return_exceptions=True))
        assert all(isinstance(r, ConnectionError) for r in results), results
        own_redis.stop()
        # Redis down: the call fails rather than waits.
        with pytest.raises(ConnectionError):
            await within(group.run(store, ["down"], ["2"]))
        restarted = EmbeddedRedis(data_dir)
        restarted.start()
        try:
            # A new connection, and a Redis that has lost its scripts.
            assert await within(group.run(store, ["after"], ["3"])) == b"3"
        finally:
            await group.aclose()
            restarted.stop()


async def test_no_more_calls_than_the_bound_are_written_before_replies_come(
    own_redis: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(group_commit_module, "MAX_OUTSTANDING", 3)
    client = aioredis.from_url(own_redis.url)
    echo = client.register_script(ECHO)
    async with group_commit_on(client) as group:
        assert await within(group.run(echo, [], ["warm"])) == b"warm"
        before = group.pipelines
        assert own_redis.pid is not None
        os.kill(own_redis.pid, signal.SIGSTOP)
        calls = [group.submit(echo, [], [i]) for i in range(10)]
        await until(lambda: group.outstanding == 3)
        assert group.pipelines - before == 1
        os.kill(own_redis.pid, signal.SIGCONT)
        most = 0

        def answered() -> bool:
            nonlocal most
            most = max(most, group.outstanding)
            return all(c.done() for c in calls)

        await until(answered)
        assert most <= 3
        assert [c.result() for c in calls] == [str(i).encode() for i in range(10)]
        assert group.pipelines - before >= 4


async def test_calls_wait_in_the_queue_while_the_connection_asks_for_a_pause(
    own_redis: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(group_commit_module, "MAX_BATCH", 4)
    client = aioredis.from_url(own_redis.url)
    echo = client.register_script(ECHO)
    big = [f"{i:05d}".encode() * 3000 for i in range(300)]  # 15 KB each, 4.5 MB in all
    async with group_commit_on(client) as group:
        assert await within(group.run(echo, [], ["warm"])) == b"warm"
        before = group.pipelines
        assert own_redis.pid is not None
        os.kill(own_redis.pid, signal.SIGSTOP)
        calls = [group.submit(echo, [], [arg]) for arg in big]
        await until(lambda: paused(group))
        # The socket's buffers are full: the rest stay queued, not in the transport.
        assert 0 < group.outstanding < 100
        assert group.pipelines - before < 25
        os.kill(own_redis.pid, signal.SIGCONT)
        assert await within(asyncio.gather(*calls)) == big


async def test_a_redis_that_stops_answering_fails_the_calls_after_the_socket_timeout(
    own_redis: EmbeddedRedis,
) -> None:
    client = aioredis.from_url(own_redis.url + "?socket_timeout=0.3")
    echo = client.register_script(ECHO)
    async with group_commit_on(client) as group:
        assert await within(group.run(echo, [], ["warm"])) == b"warm"
        assert own_redis.pid is not None
        os.kill(own_redis.pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            await within(group.run(echo, [], ["stuck"]))
        # Not before the timeout (however long after it a loaded machine gets round to it).
        assert time.monotonic() - started >= 0.29
        os.kill(own_redis.pid, signal.SIGCONT)
        assert await within(group.run(echo, [], ["again"])) == b"again"


async def test_closing_fails_the_unanswered_calls_and_refuses_new_ones(
    own_redis: EmbeddedRedis,
) -> None:
    client = aioredis.from_url(own_redis.url)
    echo = client.register_script(ECHO)
    async with group_commit_on(client) as group:
        assert await within(group.run(echo, [], ["warm"])) == b"warm"
        assert own_redis.pid is not None
        os.kill(own_redis.pid, signal.SIGSTOP)
        written = group.submit(echo, [], ["written"])
        await until(lambda: group.outstanding == 1)
        queued = group.submit(echo, [], ["queued"])
        await group.aclose()
        for call in (written, queued):
            with pytest.raises(ConnectionError):
                await within(call)
        with pytest.raises(ConnectionError):
            await within(group.run(echo, [], ["late"]))


# --- connecting ------------------------------------------------------------------------


async def test_username_password_and_database_of_the_url_are_sent_before_any_call(
    password_redis: int,
) -> None:
    admin = redis.Redis(port=password_redis, password=PASSWORD)
    try:
        admin.acl_setuser(
            "alice", enabled=True, passwords=["+wonderland"], keys=["*"], commands=["+@all"]
        )
        for url, db in (
            (f"redis://:{PASSWORD.replace(' ', '%20')}@127.0.0.1:{password_redis}/5", 5),
            (f"redis://alice:wonderland@127.0.0.1:{password_redis}/3", 3),
            (f"redis://:{PASSWORD.replace(' ', '%20')}@127.0.0.1:{password_redis}", 0),
        ):
            client = aioredis.from_url(url)
            set_script = client.register_script(STORE)
            async with group_commit_on(client) as group:
                assert await within(group.run(set_script, ["where"], [url])) == url.encode()
            assert redis.Redis(port=password_redis, password=PASSWORD, db=db).get("where") == (
                url.encode()
            )
        # Credentials from a provider (the URL has none), as redis-py would ask it.
        client = aioredis.Redis(
            port=password_redis,
            credential_provider=UsernamePasswordCredentialProvider("alice", "wonderland"),
        )
        set_script = client.register_script(STORE)
        async with group_commit_on(client) as group:
            assert await within(group.run(set_script, ["who"], ["alice"])) == b"alice"
    finally:
        admin.close()


async def test_a_wrong_password_fails_the_calls_and_the_next_call_tries_again(
    password_redis: int,
) -> None:
    client = aioredis.from_url(f"redis://:wrong@127.0.0.1:{password_redis}")
    echo = client.register_script(ECHO)
    async with group_commit_on(client) as group:
        results = await within(
            asyncio.gather(*(group.submit(echo, [], [i]) for i in range(3)), return_exceptions=True)
        )
        assert all(isinstance(r, AuthenticationError) for r in results), results
        with pytest.raises(AuthenticationError):
            await within(group.run(echo, [], ["again"]))


def test_the_server_s_event_loop_uvloop_runs_calls_errors_retries_and_reconnects(
    password_redis: int,
) -> None:
    async def scenario() -> None:
        url = f"redis://:{PASSWORD.replace(' ', '%20')}@127.0.0.1:{password_redis}/2"
        admin = aioredis.from_url(url)
        echo, refuse = admin.register_script(ECHO), admin.register_script(REFUSE)
        try:
            async with group_commit_on(aioredis.from_url(url)) as group:
                calls = [
                    group.submit(refuse, [], ["no"]) if i == 5 else group.submit(echo, [], [i])
                    for i in range(300)
                ]
                await within(asyncio.gather(*calls, return_exceptions=True))
                assert isinstance(calls[5].exception(), ResponseError)
                assert [c.result() for i, c in enumerate(calls) if i != 5] == [
                    str(i).encode() for i in range(300) if i != 5
                ]
                await admin.script_flush()
                await admin.client_kill_filter(_type="normal", skipme=True)
                assert await within(group.run(echo, [], ["again"])) == b"again"
        finally:
            await admin.aclose()

    uvloop.run(scenario())


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for ``localhost`` and its key."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    argv = [
        openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        "-keyout", str(key), "-out", str(cert),
        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
    ]  # fmt: skip
    subprocess.run(argv, check=True, capture_output=True)
    return cert, key


@contextlib.asynccontextmanager
async def tls_in_front_of(unix_path: str, cert: Path, key: Path) -> AsyncIterator[int]:
    """A TLS endpoint on 127.0.0.1 relaying to the Redis at ``unix_path``; yields its port."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    relays: set[asyncio.Task[Any]] = set()

    async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        finally:
            sink.close()

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        relays.add(task)
        up_reader, up_writer = await asyncio.open_unix_connection(unix_path)
        await asyncio.gather(
            pipe(reader, up_writer), pipe(up_reader, writer), return_exceptions=True
        )

    server = await asyncio.start_server(relay, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()
        if relays:
            await asyncio.wait_for(asyncio.gather(*relays, return_exceptions=True), 10)


async def test_rediss_urls_connect_over_tls_checked_against_the_url_s_certificate(
    redis_client: aioredis.Redis, certificate: tuple[Path, Path]
) -> None:
    cert, key = certificate
    async with tls_in_front_of(redis_client.get_connection_kwargs()["path"], cert, key) as port:
        trusting = aioredis.from_url(f"rediss://localhost:{port}/0?ssl_ca_certs={cert}")
        echo = trusting.register_script(ECHO)
        async with group_commit_on(trusting) as group:
            assert await within(group.run(echo, [], ["over tls"])) == b"over tls"
        # Without the certificate the server is not trusted, as redis-py would not.
        doubting = aioredis.from_url(f"rediss://localhost:{port}/0")
        async with group_commit_on(doubting) as group:
            with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
                await within(group.run(echo, [], ["refused"]))


# --- the packer ------------------------------------------------------------------------

_args = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=100),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)


_command = st.tuples(st.sampled_from(["EVALSHA", "SET", "GET"]), st.lists(_args, max_size=8))


# No deadline: an example takes what the machine gives it, and a slow one is no bug.
@settings(deadline=None, derandomize=True)
@given(st.lists(_command, min_size=1, max_size=6))
def test_the_pipeline_packer_writes_exactly_what_redis_py_would(
    made: list[tuple[str, list[object]]],
) -> None:
    commands = [[name, *args] for name, args in made]
    reference = Connection().pack_commands(commands)
    assert pack_commands(commands) == b"".join(bytes(part) for part in reference)


@settings(deadline=None, derandomize=True)
@given(st.lists(st.text(max_size=20), max_size=12), st.lists(_args, max_size=8), st.booleans())
def test_a_script_call_is_packed_as_redis_py_packs_its_evalsha_or_eval(
    keys: list[str], args: list[object], with_body: bool
) -> None:
    script = AsyncScript(None, b"return 1")  # type: ignore[arg-type]
    call = _Call(script, keys, args, None)  # type: ignore[arg-type]
    call.with_body = with_body
    out = bytearray()
    _pack_call(out, call)
    _pack_call(out, call)  # the second time from the cached head
    first = ("EVAL", script.script) if with_body else ("EVALSHA", script.sha)
    command = [*first, len(keys), *keys, *args]
    reference = b"".join(bytes(part) for part in Connection().pack_commands([command]))
    assert bytes(out) == reference * 2


@pytest.mark.parametrize("arg", [True, None, [1], 1j])
def test_the_pipeline_packer_refuses_what_redis_py_refuses(arg: object) -> None:
    with pytest.raises(TypeError, match="cannot send"):
        pack_commands([("SET", "k", arg)])


async def test_a_call_with_an_argument_redis_cannot_take_fails_alone(
    redis_client: aioredis.Redis,
) -> None:
    echo = redis_client.register_script(ECHO)
    async with group_commit_on(aioredis.from_url(_url_of(redis_client))) as group:
        calls = [group.submit(echo, [], [None if i == 1 else i]) for i in range(3)]
        results = await within(asyncio.gather(*calls, return_exceptions=True))
    assert results[0] == b"0"
    assert isinstance(results[1], TypeError)
    assert results[2] == b"2"
