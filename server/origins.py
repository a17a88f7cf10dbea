"""Which web pages may use this server: the ``Origin`` check for POSTs and WebSockets.

Browsers send ``Origin`` with every WebSocket handshake and every POST, and a
page cannot forge it; so a page on another site cannot open game sockets or
create tables through a visitor's browser.  Programs that are not browsers
send no ``Origin`` and are let through: they could claim any origin anyway,
and the per-client limits apply to them like everyone else.

With no allowed origins configured, only the server's own origin is allowed:
the ``Origin`` must name the host (and port) the request was sent to.  Behind
a proxy that rewrites ``Host``, list the public origins explicitly.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

__all__ = ["origin_allowed"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _authority(scheme: str, host: str, port: int | None) -> tuple[str, int | None]:
    return host.lower().rstrip("."), port if port is not None else _DEFAULT_PORTS.get(scheme)


def origin_allowed(origin: str | None, host: str | None, allowed: Sequence[str]) -> bool:
    """Whether a request carrying ``Origin: origin`` and ``Host: host`` may proceed."""
    if origin is None:
        return True
    origin = origin.strip()
    if allowed:
        return "*" in allowed or origin.rstrip("/").lower() in (a.lower() for a in allowed)
    if not origin or origin == "null" or host is None:
        return False
    try:
        parts = urlsplit(origin)
        port = parts.port
        served = urlsplit(f"{parts.scheme}://{host.strip()}")
        served_port = served.port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname or not served.hostname:
        return False
    return _authority(parts.scheme, parts.hostname, port) == _authority(
        parts.scheme, served.hostname, served_port
    )
