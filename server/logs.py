"""Logging for the server process: text or JSON lines, with repeated lines rate-limited.

A client must not be able to fill the disk through our log: the same message
(same logger, level and format string) is written at most ``limit`` times a
minute; the rest are counted, and one line per minute says how many were
dropped (``pdk_log_lines_suppressed_total`` counts them too).  uvicorn's
access lines, one per request served, are not limited.
"""

from __future__ import annotations

import logging
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


class RepeatLimit(logging.Filter):
    """Lets each distinct message through ``limit`` times per window, then counts it."""

    def __init__(self, limit: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._limit = limit
        self._clock = clock
        self._lock = threading.Lock()
        self._window_start = clock()
        self._seen: dict[_Key, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        # Access lines are one short line per request served (bounded by the
        # connection limits), and each is different; everything else repeats.
        if getattr(record, "pdk_summary", False) or record.name == "uvicorn.access":
            return True
        key = (record.name, record.levelno, str(record.msg))
        with self._lock:
            dropped = self._roll_window()
            count = self._seen.get(key, 0) + 1
            self._seen[key] = count
        if dropped:
            _report_dropped(dropped)
        if count <= self._limit:
            return True
        metrics.log_lines_suppressed(1)
        return False

    def _roll_window(self) -> dict[_Key, int]:
        now = self._clock()
        if now - self._window_start < WINDOW_SECONDS:
            return {}
        dropped = {k: n - self._limit for k, n in self._seen.items() if n > self._limit}
        self._seen.clear()
        self._window_start = now
        return dropped


def _report_dropped(dropped: dict[_Key, int]) -> None:
    logger = logging.getLogger("server.logs")
    for (name, _level, msg), count in dropped.items():
        logger.warning(
            "suppressed %d repeats of %s: %.120s",
            count,
            name,
            msg,
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


def configure_logging(level: str, log_format: str, repeat_limit: int) -> None:
    """Route every logger (uvicorn's included) to one stderr handler."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    handler.setFormatter(formatter)
    handler.addFilter(RepeatLimit(repeat_limit))
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
