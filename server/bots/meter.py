"""What the bots report about their decisions, and to whom: hooks the process installs.

The bots sit below the server's metrics and usage counters (docs/architecture.md,
"Layers"), so they do not import them: this module defines what a decision
reports (its level and wall time, a strong bot's fallback, the CPU spent
thinking inline), and the process that serves tables (``server.app``) installs
the hooks that record it.  Until then every report goes nowhere.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

__all__ = ["METER", "Meter", "report_to"]


def _ignore_decision(level: str, seconds: float) -> None:
    pass


def _ignore() -> None:
    pass


@dataclass(slots=True)
class Meter:
    """The three reports a decision makes."""

    # A decision of ``level`` answered after ``seconds`` (fallbacks included).
    decided: Callable[[str, float], None] = _ignore_decision
    # A strong bot failed or overran and the table got the normal bot's play.
    fell_back: Callable[[], None] = _ignore
    # The block in which a bot thinks on the event loop's thread (never awaits).
    thinking: Callable[[], AbstractContextManager[object]] = nullcontext


METER = Meter()


def report_to(
    *,
    decided: Callable[[str, float], None],
    fell_back: Callable[[], None],
    thinking: Callable[[], AbstractContextManager[object]],
) -> None:
    """Send every later decision's reports to these hooks (one set per process)."""
    METER.decided = decided
    METER.fell_back = fell_back
    METER.thinking = thinking
