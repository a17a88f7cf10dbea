"""The light FIFO the rooms and sockets use in place of asyncio.Queue."""

from __future__ import annotations

import asyncio

import pytest

from server.inbox import Inbox


async def test_items_come_out_in_the_order_they_went_in() -> None:
    inbox: Inbox[int] = Inbox()
    for n in range(5):
        inbox.put_nowait(n)
    assert inbox.qsize() == 5
    assert [await inbox.get() for _ in range(3)] == [0, 1, 2]
    assert [inbox.get_nowait(), inbox.get_nowait()] == [3, 4]
    assert inbox.empty()


async def test_a_waiting_consumer_wakes_for_the_next_item() -> None:
    inbox: Inbox[str] = Inbox()
    consumer = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    assert not consumer.done()
    inbox.put_nowait("frame")
    assert await asyncio.wait_for(consumer, 5) == "frame"


async def test_a_bounded_inbox_refuses_past_its_size_like_asyncio_queue() -> None:
    inbox: Inbox[int] = Inbox(2)
    inbox.put_nowait(1)
    inbox.put_nowait(2)
    with pytest.raises(asyncio.QueueFull):
        inbox.put_nowait(3)
    assert inbox.get_nowait() == 1
    inbox.put_nowait(3)
    assert [inbox.get_nowait(), inbox.get_nowait()] == [2, 3]
    with pytest.raises(asyncio.QueueEmpty):
        inbox.get_nowait()


async def test_a_cancelled_wait_takes_nothing_and_the_next_get_still_works() -> None:
    inbox: Inbox[int] = Inbox()
    consumer = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    inbox.put_nowait(7)
    assert await asyncio.wait_for(inbox.get(), 5) == 7


async def test_a_second_waiting_consumer_is_refused() -> None:
    inbox: Inbox[int] = Inbox()
    first = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="one consumer"):
        await inbox.get()
    inbox.put_nowait(1)
    assert await asyncio.wait_for(first, 5) == 1
