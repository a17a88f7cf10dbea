"""What the matchmaker's tests share: its timings in milliseconds, queue members and
table ids unique within a test run."""

from __future__ import annotations

import itertools

from server.lobby.queue import Member

__all__ = ["DROP", "TTL", "WAIT", "member", "table_id"]

WAIT = 20_000
DROP = 10_000
TTL = 600_000
_ids = itertools.count()


def member(name: str) -> Member:
    return Member(name, f"name {name}", "#0072b2", f"hash-{name}")


def table_id(prefix: str = "table") -> str:
    return f"{prefix}-{next(_ids):06}"
