"""Who the client is: the TCP peer, unless that peer is a reverse proxy we trust.

Per-client limits (connections, table creation) count by this address, so it
must not be something a client can choose: a forwarded-for header is believed
only from the configured trusted proxies (``--trusted-proxies``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

__all__ = ["TrustedProxies", "client_address"]


class TrustedProxies:
    """Which TCP peers are reverse proxies whose client-address header we believe."""

    def __init__(self, networks: Iterable[str], header: str) -> None:
        self._networks = [ipaddress.ip_network(n, strict=False) for n in networks]
        self.header = header.lower().encode("latin-1")

    def __bool__(self) -> bool:
        return bool(self._networks)

    def trusts(self, host: str | None) -> bool:
        if not self._networks or host is None:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self._networks)


def client_address(
    peer: str | None, headers: Sequence[tuple[bytes, bytes]], proxies: TrustedProxies
) -> str:
    """The client's address: the TCP peer, unless that peer is a trusted proxy.

    Behind trusted proxies the header (``X-Forwarded-For: client, proxy1, proxy2``)
    is read from the right, skipping our own proxies; the first address that is
    not one of them is the client.  A header from an untrusted peer is ignored,
    so nobody can pick their own address to dodge a per-client limit.
    """
    host = peer or "unknown"
    if not proxies.trusts(peer):
        return host
    hops: list[str] = []
    for name, value in headers:
        if name.lower() == proxies.header:
            hops.extend(h.strip() for h in value.decode("latin-1").split(","))
    for hop in reversed(hops):
        if not hop:
            continue
        if not proxies.trusts(hop):
            return hop
        host = hop
    return host
