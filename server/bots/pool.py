"""The worker processes that think for strong bots, away from the event loop.

One ``ProcessPoolExecutor`` per server process, created on first use and
sized for the machine (at most two workers: a table waits on one decision at
a time, and the rest of the server needs a core).  Workers start with the
"spawn" method so that no lock or thread of the parent is copied into them.
``shutdown()`` stops them; it is safe to call at any time, and more than once.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor

import msgspec

from ..engine import Pass, Play, SeatView

__all__ = ["MAX_WORKERS", "get_pool", "shutdown", "think"]

MAX_WORKERS = 2

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def get_pool() -> ProcessPoolExecutor:
    """The worker pool, started on first use."""

    global _pool
    with _lock:
        if _pool is None:
            workers = max(1, min(MAX_WORKERS, (os.cpu_count() or 1)))
            _pool = ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("spawn")
            )
        return _pool


def shutdown() -> None:
    """Stop the workers (waiting for any decision in progress to end)."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def think(level: str, seed: int, view_bytes: bytes, budget: float, asked_at: float) -> bytes:
    """Runs in a worker: decode the view, let the bot choose, encode the action.

    The view crosses the process boundary as msgpack, the same bytes the wire
    would carry, so a worker sees nothing but the seat's view.  ``asked_at`` is
    ``time.monotonic()`` in the asking process when the decision was asked (the
    same clock in every process of the machine): time spent waiting for a free
    worker is spent from ``budget``.
    """
    from .strong import StrongBot

    view = msgspec.msgpack.decode(view_bytes, type=SeatView)
    if level == "strong":
        action = StrongBot(seed, budget).choose(view, asked_at=asked_at)
    else:
        from . import make_bot

        action = make_bot(level, seed).choose(view)
    return msgspec.msgpack.encode(action)


def decode_action(data: bytes) -> Play | Pass:
    """The action a worker answered, from its msgpack bytes."""

    return msgspec.msgpack.decode(data, type=Play | Pass)
