"""Who may see the operator's details and use the operator's HTTP routes.

Two kinds of callers count as the operator:

- a request whose ``Authorization: Bearer`` token equals the ``--admin-token``
  setting (compared in constant time; with no token set, nobody is one this way);
- a request from this very host: the TCP peer is a loopback address and the
  request carries no forwarding header at all (a proxy on the same host adds
  one, so a client behind it is never taken for the operator).

The first may use every operator route (deleting tables); the second only sees
details (``/healthz``'s process fields, ``/api/usage``): tools on the host such
as health checks, benches and tests keep working with no token to hand out.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Sequence

__all__ = ["bearer_token", "from_this_host", "is_admin"]

# Headers a proxy puts the original client in; any of them means "not from here".
_FORWARDING_HEADERS = frozenset({b"x-forwarded-for", b"forwarded", b"x-real-ip"})


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header ('' when none)."""
    if not authorization or not authorization.startswith("Bearer "):
        return ""
    return authorization.removeprefix("Bearer ").strip()


def is_admin(authorization: str | None, admin_token: str | None) -> bool:
    """Whether the request's bearer token is the admin token (never, when unset)."""
    if not admin_token:
        return False
    offered = bearer_token(authorization)
    # Constant time: how long the comparison takes says nothing about the token.
    return hmac.compare_digest(offered.encode(), admin_token.encode())


def from_this_host(
    peer: str | None, headers: Sequence[tuple[bytes, bytes]], client_ip_header: str
) -> bool:
    """Whether a request came straight from this host (loopback peer, no proxy)."""
    try:
        if peer is None or not ipaddress.ip_address(peer).is_loopback:
            return False
    except ValueError:
        return False
    forwarding = _FORWARDING_HEADERS | {client_ip_header.lower().encode()}
    return not any(name.lower() in forwarding for name, _ in headers)
