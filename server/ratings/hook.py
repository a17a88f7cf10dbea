"""Where a finished match leaves the room actor: one call, never blocking it.

The room calls ``match_finished`` after the write that ended a match, and again
whenever it loads a table whose current match has ended (a new owner after a
crash or a handover re-derives a job the old owner may not have finished).  Jobs
are idempotent by (table, match number), so a second call costs a look-up only.
A process that runs no rating worker (tests of the room alone) drops the call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from server import engine
from server.rooms.log import TableMeta

from .record import MatchRecord, record_of

__all__ = ["install", "match_finished"]

log = logging.getLogger(__name__)

_sink: Callable[[MatchRecord], None] | None = None


def install(sink: Callable[[MatchRecord], None] | None) -> None:
    """Send every finished match of this process to ``sink`` (None: drop them)."""
    global _sink
    _sink = sink


def match_finished(meta: TableMeta, state: engine.MatchState, match_no: int) -> None:
    """Hand the ended match to the rating worker, if the process runs one."""
    if _sink is None:
        return
    record = record_of(meta, state, match_no)
    if record is None:
        return
    try:
        _sink(record)
    except Exception:  # the actor must not stop for a rating
        log.exception("table %s: rating job not queued", meta.id)
