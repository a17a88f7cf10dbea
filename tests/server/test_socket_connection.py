"""Connections never make the room wait: a client that falls behind is cut off."""

from __future__ import annotations

import asyncio

import pytest

from server.connection import Connection
from server.protocol import CloseCode


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
