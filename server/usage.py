"""What this process has spent: CPU time in all, CPU time in bots' thinking, actions.

Operators and ``bench/server.py`` read it from ``GET /api/usage`` to tell how
much a table costs: process CPU per accepted action, split into bots' thinking
(timed around each inline decision) and everything else.  Counting is a few
additions per action; nothing here allocates per call.
"""

from __future__ import annotations

import asyncio
import os
import time

from server.engine.memo import memo_sizes

__all__ = ["USAGE", "Usage"]


class Usage:
    """Counters of one process (one instance, ``USAGE``)."""

    __slots__ = ("actions", "bot_cpu_seconds", "bot_decisions")

    def __init__(self) -> None:
        self.actions = 0
        self.bot_cpu_seconds = 0.0
        self.bot_decisions = 0

    def action_accepted(self) -> None:
        self.actions += 1

    def bot_thinking(self) -> _BotThinking:
        """Charge the CPU time of this thread inside the ``with`` block to bots' thinking.

        Only for code that does not await: a suspension would charge other
        tasks' work to the bot.
        """
        return _BotThinking(self)

    def snapshot(self, tables: int) -> dict[str, object]:
        return {
            "pid": os.getpid(),
            # The process's own CPU time (user + system, every thread; children excluded).
            "cpu_seconds": time.process_time(),
            "bot_cpu_seconds": self.bot_cpu_seconds,
            "bot_decisions": self.bot_decisions,
            "actions": self.actions,
            "tables": tables,
            "rss_bytes": _rss_bytes(),
            # Entries of the memo caches every table shares (each bounded by its maxsize).
            "shared_cache_entries": memo_sizes(),
            # Which event loop runs the server (uvloop when installed, as it is by default).
            "event_loop": _event_loop(),
        }


class _BotThinking:
    """``Usage.bot_thinking``'s block: a plain class, as cheap as a context manager gets
    (every inline bot decision enters one)."""

    __slots__ = ("_started", "_usage")

    def __init__(self, usage: Usage) -> None:
        self._usage = usage
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.thread_time()

    def __exit__(self, *exc: object) -> None:
        usage = self._usage
        usage.bot_cpu_seconds += time.thread_time() - self._started
        usage.bot_decisions += 1


def _event_loop() -> str:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return "none"
    return f"{type(loop).__module__}.{type(loop).__qualname__}"


def _rss_bytes() -> int:
    """Resident memory now (Linux); 0 where /proc is not there."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


USAGE = Usage()
