"""Frames a socket gets in one turn of the loop go out in one write (server.fast_paths
``WriteBatch``), in order, and a socket never holds more than the bound unwritten."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets
from test_app import Client, LiveServer, create_table
from test_socket_connection import seat_zero_connection
from websockets.frames import Frame, Opcode

from server.fast_paths import COALESCE_MAX_BYTES, DirectText, text_frame_head, write_batch


async def test_frames_of_one_turn_go_out_in_one_write_in_the_order_they_were_pushed(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0)
    client = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    await client.next("state")
    conn = seat_zero_connection(live, table["table"])
    batch = write_batch(asyncio.get_running_loop())
    frames, writes = batch.frames, batch.writes
    # No await between them: one turn of the loop.
    for n in range(10):
        assert conn.push_frame(json.dumps({"type": "padding", "n": n}))
    received = [(await client.next("padding"))["n"] for _ in range(10)]
    assert received == list(range(10))
    assert batch.frames - frames == 10
    assert batch.writes - writes == 1
    await client.close()


async def test_a_socket_writes_at_once_past_the_bound_instead_of_holding_more(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0)
    client = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    await client.next("state")
    conn = seat_zero_connection(live, table["table"])
    socket = conn._send_now.__self__  # type: ignore[union-attr]
    assert isinstance(socket, DirectText)
    size = COALESCE_MAX_BYTES // 3
    count = 0
    # In one turn, until the transport asks to wait (the frames then queue, as before).
    while socket.writable.is_set() and count < 200:
        frame = json.dumps({"type": "padding", "n": count, "data": "x" * size})
        assert conn.push_frame(frame)
        count += 1
        assert socket._held_bytes < COALESCE_MAX_BYTES
    received = [(await client.next("padding"))["n"] for _ in range(count)]
    assert received == list(range(count))
    await client.close()


async def test_a_close_right_after_held_frames_comes_after_them(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0)
    ws = await websockets.connect(live.ws_url)
    join = {"type": "join", "table": table["table"], "token": table["seats"][0]["token"]}
    await ws.send(json.dumps(join))
    assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "state"
    conn = seat_zero_connection(live, table["table"])
    for n in range(3):
        assert conn.push_frame(json.dumps({"type": "padding", "n": n}))
    conn.shut(4000, "test over")
    got = [json.loads(await asyncio.wait_for(ws.recv(), 10))["n"] for _ in range(3)]
    assert got == [0, 1, 2]
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await asyncio.wait_for(ws.recv(), 10)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 4000


@pytest.mark.parametrize("length", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_a_text_frame_written_directly_is_the_frame_websockets_would_write(length: int) -> None:
    data = bytes(range(256)) * (length // 256) + b"x" * (length % 256)
    expected = Frame(Opcode.TEXT, data).serialize(mask=False, extensions=[])
    assert text_frame_head(length) + data == expected
