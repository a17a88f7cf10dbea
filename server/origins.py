"""Which web pages may use this server: the ``Origin`` check for POSTs and WebSockets.

Browsers send ``Origin`` with every WebSocket handshake and every POST, and a
page cannot forge it; so a page on another site cannot open game sockets or
create tables through a visitor's browser.  Programs that are not browsers
send no ``Origin`` and are let through: they could claim any origin anyway,
and the per-client limits apply to them like everyone else.

With no allowed origins configured, only the server's own origin is allowed:
the ``Origin`` must name the scheme, host and port the request was sent to (an
``https://`` page is not this plain-http server's own, even on the same host).
Behind a proxy that rewrites ``Host`` or ends TLS, list the public origins.

That alone would let DNS rebinding in: a page of ``rebind.evil.example``,
whose name the attacker then points at this server's (private) address, sends
``Host: rebind.evil.example`` and a matching ``Origin``.  So every request's
``Host`` must also be one of the server's own names (``HostAllowList``): the
host names of the allowed origins, the localhost names, and the address the
server is bound to (any IP address when it listens on all of them; an address
is never a rebinding, which needs a name).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

__all__ = ["HostAllowList", "connection_origin_allowed", "host_header", "origin_allowed"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _authority(scheme: str, host: str, port: int | None) -> tuple[str, int | None]:
    return host.lower().rstrip("."), port if port is not None else _DEFAULT_PORTS.get(scheme)


def connection_origin_allowed(connection: HTTPConnection, allowed: Sequence[str]) -> bool:
    """``origin_allowed`` for a request or a socket's handshake, read from its headers
    and scope: what creating a table and opening a game socket both ask."""
    headers = connection.headers
    return origin_allowed(
        headers.get("origin"), headers.get("host"), allowed, connection.scope["scheme"]
    )


def origin_allowed(
    origin: str | None, host: str | None, allowed: Sequence[str], scheme: str = "http"
) -> bool:
    """Whether a request carrying ``Origin: origin`` and ``Host: host``, received over
    ``scheme`` (the ASGI scope's: ``http``/``ws`` or ``https``/``wss``), may proceed."""
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
    if parts.scheme != _PAGE_SCHEMES.get(scheme, scheme):
        return False
    return _authority(parts.scheme, parts.hostname, port) == _authority(
        parts.scheme, served.hostname, served_port
    )


# The page scheme that matches each ASGI scope scheme.
_PAGE_SCHEMES = {"ws": "http", "wss": "https"}
_LOCAL_NAMES = ("localhost",)
_ANY_ADDRESS = ("", "0.0.0.0", "::")


def host_header(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The ``Host`` header of an ASGI scope's raw headers, or None."""
    for name, value in headers:
        if name == b"host":
            return value.decode("latin-1")
    return None


def _hostname(host: str) -> str | None:
    """The host name of a ``Host`` header (port and IPv6 brackets dropped), lower case."""
    try:
        name = urlsplit(f"http://{host.strip()}").hostname
    except ValueError:
        return None
    return name.rstrip(".") if name else None


class HostAllowList:
    """The names this server answers to (see the module's docstring)."""

    def __init__(self, allowed_origins: Sequence[str], bind_host: str) -> None:
        self._any = "*" in allowed_origins
        names = {_hostname(urlsplit(o).netloc) for o in allowed_origins if o != "*"}
        bind = bind_host.strip().strip("[]").lower()
        self._any_address = bind in _ANY_ADDRESS
        names.add(bind)
        self._names = frozenset(n for n in names if n)

    def allows(self, host: str | None) -> bool:
        """Whether a request with ``Host: host`` is meant for this server.  No ``Host``
        (HTTP/1.0, programs) passes: a browser always sends one."""
        if host is None or self._any:
            return True
        name = _hostname(host)
        if not name:
            return False
        if name in self._names or name in _LOCAL_NAMES or name.endswith(".localhost"):
            return True
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False
        return self._any_address or address.is_loopback
