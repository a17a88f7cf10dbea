"""Logging for the server process: text or JSON lines, with repeated lines rate-limited.

A client must not be able to fill the disk through our log: the same message
(same logger, level and format string) is written at most ``limit`` times a
minute; the rest are counted, and one line per minute says how many were
dropped (``pdk_log_lines_suppressed_total`` counts them too).  uvicorn's
access lines, one per request served, each different, are not limited by
message; but the lines of refused requests (status 400 and up: a client
pipelining ``GET /nope`` gets thousands a second) are written at most
``refused_access_limit`` times a minute, the rest counted the same way.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import msgspec

from server import metrics
from server.log_redaction import RedactTokens, quiet_frame_loggers

__all__ = ["JsonFormatter", "RepeatLimit", "configure_logging"]

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
WINDOW_SECONDS = 60.0

_Key = tuple[str, int, str]

ACCESS_LOGGER = "uvicorn.access"
# The one key every refused request's access line counts under.
_REFUSED_ACCESS = "access lines of refused requests (status >= 400)"


def _refused_status(record: logging.LogRecord) -> bool:
    """Whether ``record`` is an access line of a refused request.  uvicorn passes the
    status as the last argument of its access line."""
    args = record.args
    if not isinstance(args, tuple) or not args:
        return False
    status = args[-1]
    return isinstance(status, int) and status >= 400


class RepeatLimit(logging.Filter):
    """Lets each distinct message through ``limit`` times per window, then counts it."""

    def __init__(
        self,
        limit: int,
        *,
        refused_access_limit: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._limit = limit
        self._refused_limit = limit if refused_access_limit is None else refused_access_limit
        self._clock = clock
        self._lock = threading.Lock()
        self._window_start = clock()
        self._seen: dict[_Key, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "pdk_summary", False):
            return True
        limit = self._limit
        if record.name == ACCESS_LOGGER:
            # A served request's line is each different and worth keeping; a refused
            # one costs the client nothing to cause, so those share one budget.
            if not _refused_status(record):
                return True
            key = (record.name, record.levelno, _REFUSED_ACCESS)
            limit = self._refused_limit
        else:
            key = (record.name, record.levelno, str(record.msg))
        with self._lock:
            dropped = self._roll_window()
            count = self._seen.get(key, 0) + 1
            self._seen[key] = count
        if dropped:
            _report_dropped(dropped)
        if count <= limit:
            return True
        metrics.log_lines_suppressed(1)
        return False

    def _limit_of(self, key: _Key) -> int:
        return self._refused_limit if key[0] == ACCESS_LOGGER else self._limit

    def _roll_window(self) -> dict[_Key, int]:
        now = self._clock()
        if now - self._window_start < WINDOW_SECONDS:
            return {}
        dropped = {k: n - self._limit_of(k) for k, n in self._seen.items() if n > self._limit_of(k)}
        self._seen.clear()
        self._window_start = now
        return dropped


# A %-style placeholder of a logging format string (``%s``, ``%.0fs``, ``%(name)s``), or
# an escaped ``%%``.
_PLACEHOLDER = re.compile(
    r"%%|%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa]"
)


def _report_dropped(dropped: dict[_Key, int]) -> None:
    logger = logging.getLogger("server.logs")
    for (name, _level, msg), count in dropped.items():
        # Repeats are counted per format string, whose arguments differ: show where
        # they went as "…", not as raw %s placeholders.
        shape = _PLACEHOLDER.sub(lambda m: "%" if m[0] == "%%" else "…", msg)
        logger.warning(
            "suppressed %d repeats of %s: %.120s",
            count,
            name,
            shape,
            extra={"pdk_summary": True},
        )


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return msgspec.json.encode(entry).decode()


def configure_logging(
    level: str, log_format: str, repeat_limit: int, refused_access_limit: int | None = None
) -> None:
    """Route every logger (uvicorn's included) to one stderr handler."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    handler.setFormatter(formatter)
    handler.addFilter(RepeatLimit(repeat_limit, refused_access_limit=refused_access_limit))
    handler.addFilter(RedactTokens())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
        logger.setLevel(level.upper())
    quiet_frame_loggers()
