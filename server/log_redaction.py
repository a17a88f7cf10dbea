"""No token material in the logs, whoever logs it.

At ``--log-level debug`` the websockets library logs every frame, in and out,
shortened to its head and tail (through uvicorn's ``uvicorn.error`` logger): a
join frame showed 21 of a seat token's 32 characters, with or without the
``token`` key before them, and an invite frame the friend's whole token.
``RedactTokens``, on the one log handler (``server.logs``), logs a frame as its
kind and size only (frames hold hands and seeds too), and cuts the value out of
anything else that looks like a token field, an invite link or a bearer header,
before the record is formatted.  The websockets library's own loggers are kept
at INFO at most (``quiet_frame_loggers``).
"""

from __future__ import annotations

import logging
import re

from websockets.frames import Frame

__all__ = ["FRAME_LOGGERS", "REDACTED", "RedactTokens", "quiet_frame_loggers", "redact"]

REDACTED = "[redacted]"

# "token": "...", 'token': '...', token=..., watch=..., Bearer ...: the value, even
# cut short by a truncated frame (no closing quote).
_TOKEN_VALUE = re.compile(
    r"""(?P<key>(?:["']?(?:token|watch|admin_token)["']?\s*[:=]\s*["']?)|(?:Bearer\s+))"""
    r"""(?P<value>[A-Za-z0-9_\-.~+/]{4,}=*)""",
    re.IGNORECASE,
)

# Loggers that dump frames at DEBUG.
FRAME_LOGGERS = ("websockets", "websockets.server", "websockets.client")


def redact(text: str) -> str:
    """``text`` with every token value replaced by ``REDACTED``."""
    return _TOKEN_VALUE.sub(lambda m: m["key"] + REDACTED, text)


class RedactTokens(logging.Filter):
    """A handler filter: every record's message goes out with token values redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, Frame) for a in record.args):
            record.args = tuple(_frame_summary(a) for a in record.args)
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: let the handler report it as usual
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def quiet_frame_loggers() -> None:
    """Keep the frame-dumping loggers at INFO at most, whatever the root level."""
    level = max(logging.INFO, logging.getLogger().level)
    for name in FRAME_LOGGERS:
        logging.getLogger(name).setLevel(level)


def _frame_summary(arg: object) -> object:
    if not isinstance(arg, Frame):
        return arg
    return f"{arg.opcode.name} [{len(arg.data)} bytes, not logged]"
