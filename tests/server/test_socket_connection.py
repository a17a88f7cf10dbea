"""Connections never make the room wait: a client that falls behind is cut off."""

from __future__ import annotations

import asyncio
import contextlib
import json

import httpx
import pytest
import websockets
from test_app import (
    Client,
    LiveServer,
    create_table,
    log_of,
    moves_logged,
    moves_told,
    play_to_result,
)

from server.connection import Connection
from server.protocol import CloseCode
from server.rooms.room import Room
from server.transport import frame_taker, text_sender


async def test_frames_are_sent_in_order() -> None:
    sent: list[str] = []
    done = asyncio.Event()

    async def send(frame: str) -> None:
        sent.append(frame)
        if len(sent) == 3:
            done.set()

    conn = Connection(0, send, queue_size=4)
    writer = conn.start()
    assert all(conn.push_frame(f) for f in ("a", "b", "c"))
    await asyncio.wait_for(done.wait(), 10)
    assert sent == ["a", "b", "c"]
    assert conn.open
    writer.cancel()


async def test_client_that_cannot_keep_up_is_cut_off_with_4408() -> None:
    never = asyncio.Event()
    first_send = asyncio.Event()

    async def stuck_send(frame: str) -> None:
        first_send.set()
        await never.wait()

    conn = Connection(1, stuck_send, queue_size=2)
    writer = conn.start()
    assert conn.push_frame("in flight")
    await asyncio.wait_for(first_send.wait(), 10)
    assert conn.push_frame("queued 1")
    assert conn.push_frame("queued 2")
    assert not conn.push_frame("one too many")
    assert conn.close_code == CloseCode.TOO_SLOW
    assert not conn.open
    assert not conn.push_frame("after the cut")
    with pytest.raises(asyncio.CancelledError):
        await writer


async def test_server_side_shut_keeps_the_first_reason() -> None:
    async def send(frame: str) -> None:
        return None

    conn = Connection(0, send, queue_size=1)
    writer = conn.start()
    conn.shut(4503, "table unavailable")
    conn.shut(1001, "later reason")
    assert (conn.close_code, conn.close_reason) == (4503, "table unavailable")
    with pytest.raises(asyncio.CancelledError):
        await writer


async def test_nothing_is_queued_once_the_server_has_shut_the_connection() -> None:
    async def send(frame: str) -> None:
        return None

    conn = Connection(0, send, queue_size=4)
    writer = conn.start()
    conn.shut(1001, "going away")
    assert not conn.push_frame("after the shut")
    assert conn._queue.empty()
    with pytest.raises(asyncio.CancelledError):
        await writer


def test_queue_must_hold_at_least_one_frame() -> None:
    async def send(frame: str) -> None:
        return None

    with pytest.raises(ValueError, match="at least one"):
        Connection(0, send, queue_size=0)


class _Socket:
    """What ``Connection`` writes through at once: refuses, as a paused socket does, while
    ``refuse`` is set; otherwise takes the frame."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.refuse = True

    def send_now(self, frame: str) -> bool:
        if self.refuse:
            return False
        self.sent.append(frame)
        return True


async def test_frames_go_straight_to_a_socket_that_can_take_them() -> None:
    direct: list[str] = []

    async def send(frame: str) -> None:
        raise AssertionError("the writer task should have had nothing to send")

    def send_now(frame: str) -> bool:
        direct.append(frame)
        return True

    conn = Connection(0, send, queue_size=1, send_now=send_now)
    writer = conn.start()
    # More frames than the queue holds: none of them waited in it.
    assert all(conn.push_frame(f) for f in ("a", "b", "c"))
    assert direct == ["a", "b", "c"]
    assert conn._queue.empty()
    assert conn.open
    writer.cancel()


async def test_a_frame_never_overtakes_one_that_waits_for_the_socket() -> None:
    socket = _Socket()
    sent = socket.sent
    writable = asyncio.Event()
    first_send = asyncio.Event()

    async def send(frame: str) -> None:
        first_send.set()
        await writable.wait()
        sent.append(frame)

    conn = Connection(0, send, queue_size=4, send_now=socket.send_now)
    writer = conn.start()
    assert conn.push_frame("a")  # the socket would make it wait: the writer takes it
    await asyncio.wait_for(first_send.wait(), 10)
    socket.refuse = False
    assert conn.push_frame("b")  # the socket could take it, but "a" is still ahead
    assert conn.push_frame("c")
    assert sent == []
    writable.set()
    for _ in range(100):
        if len(sent) == 3:
            break
        await asyncio.sleep(0)
    assert sent == ["a", "b", "c"]
    # Once nothing waits, frames go straight to the socket again.
    assert conn.push_frame("d")
    assert sent == ["a", "b", "c", "d"]
    writer.cancel()


async def test_a_frame_never_overtakes_one_still_in_the_queue() -> None:
    socket = _Socket()
    sent = socket.sent

    async def send(frame: str) -> None:
        sent.append(frame)

    conn = Connection(0, send, queue_size=4, send_now=socket.send_now)
    writer = conn.start()
    await asyncio.sleep(0)  # the writer waits for its first frame
    assert conn.push_frame("a")  # queued: the writer has not run since
    socket.refuse = False
    assert conn.push_frame("b")
    for _ in range(100):
        if len(sent) == 2:
            break
        await asyncio.sleep(0)
    assert sent == ["a", "b"]
    writer.cancel()


def seat_zero_connection(live: LiveServer, table_id: str) -> Connection:
    """The server's ``Connection`` of seat 0's one socket at ``table_id``, which writes
    its frames through the transport's direct path."""
    room = live.registry.live(table_id)
    assert isinstance(room, Room)
    (conn,) = room._audience.humans[0]
    assert isinstance(conn, Connection)
    assert conn._send_now is not None
    return conn


async def test_a_game_socket_behind_the_server_writes_its_frames_at_once(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0)
    client = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    first = await client.next("state")
    # uvicorn's socket under this app is the transport's: frames need no task to send them.
    conn = seat_zero_connection(live, table["table"])
    end = await play_to_result(client, first)
    versions = [f["version"] for f in client.frames if f["type"] == "state"]
    assert versions == sorted(set(versions))
    assert versions[-1] == end["version"]
    log = await log_of(live.store, table["table"])
    assert moves_told(client.frames) == moves_logged(log[versions[0] :])
    assert conn.open
    await client.close()


async def test_a_game_socket_behind_the_server_hands_its_frames_to_the_session_at_once(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0)
    client = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    first = await client.next("state")
    conn = seat_zero_connection(live, table["table"])
    socket = conn._send_now.__self__  # type: ignore[union-attr]
    # Once seated, the socket's messages go to the session's reader, not through ASGI.
    take = socket.on_frame
    assert take is not None
    assert take.__qualname__ == "_FrameReader.take"
    handed: list[str | bytes] = []

    def noting(frame: str | bytes) -> None:
        handed.append(frame)
        take(frame)

    socket.on_frame = noting
    hint = json.dumps({"type": "hint", "version": first["version"]})
    await client.send(hint)
    assert (await client.next())["type"] == "hint"
    assert handed == [hint]
    await client.close()
    # The session hands the sink back as it ends.
    for _ in range(1000):
        if socket.on_frame is None:
            break
        await asyncio.sleep(0.01)
    assert socket.on_frame is None


async def test_frames_sent_together_are_answered_in_the_order_they_were_sent(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0)
    ws = await websockets.connect(live.ws_url)
    join = {"type": "join", "table": table["table"], "token": table["seats"][0]["token"]}
    # The first batch goes out with the join, before the session takes frames itself:
    # it is read through ASGI; later ones come straight from the socket.
    batches = [["ping", "not json"] * 5, ["not json", "ping", "ping", "not json"] * 5]
    await ws.send(json.dumps(join))
    for batch in batches:
        for text in batch:
            await ws.send(json.dumps({"type": "ping"}) if text == "ping" else text)
        answers: list[str] = []
        while len(answers) < len(batch):
            frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if frame["type"] in ("pong", "error"):
                answers.append("ping" if frame["type"] == "pong" else "not json")
        assert answers == batch
    await ws.close()


def test_a_send_that_is_not_the_transports_has_no_direct_path() -> None:
    async def send(message: object) -> None:
        return None

    assert text_sender(send) is None
    assert frame_taker(send) is None
    assert text_sender(Connection(0, send, 1).push_frame) is None


async def test_once_a_socket_stops_taking_frames_they_queue_and_a_full_queue_cuts_it_off(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0)
    # A client that stops reading: websockets reads no more once one frame waits unread.
    ws = await websockets.connect(live.ws_url, max_queue=1)
    join = {"type": "join", "table": table["table"], "token": table["seats"][0]["token"]}
    await ws.send(json.dumps(join))
    await asyncio.wait_for(ws.recv(), 10)
    conn = seat_zero_connection(live, table["table"])
    socket = conn._send_now.__self__  # type: ignore[union-attr]
    padding = json.dumps({"type": "padding", "data": "x" * 60_000})
    # Written at once until the kernel's buffers and the transport's are full and the
    # transport asks us to wait.
    written = 0
    while socket.writable.is_set():
        assert written < 2_000, "the transport never asked to wait"
        assert conn.push_frame(padding)
        written += 1
        await asyncio.sleep(0)
    assert conn._queue.empty()
    # From then on frames wait in the queue (the writer holds one), until it is full.
    queued = 0
    while conn.push_frame(padding):
        queued += 1
        assert queued <= 200, "a socket that takes nothing was never cut off"
    assert 1 <= queued <= 64 + 1
    assert conn.close_code == CloseCode.TOO_SLOW
    # Reading again, the client gets what was written, then the reason.
    received = 0
    with contextlib.suppress(websockets.ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), 10)
            received += 1
    assert received >= written
    assert ws.close_code == CloseCode.TOO_SLOW
