"""The numbers that bound what clients can make this process hold, fitted to the machine.

``Limits`` gathers the transport's settings (connection caps, deadlines, send
buffers, trusted proxies); the connection cap is lowered to fit the process's
file-descriptor limit, which ``raise_fd_limit`` first raises to its hard limit.
"""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass

from server.config import Settings
from server.proxies import TrustedProxies

__all__ = ["FD_RESERVE", "LISTEN_BACKLOG", "Limits", "raise_fd_limit"]

log = logging.getLogger(__name__)

# Connections the kernel queues for us, and that asyncio may accept in one go
# before any of them reaches the guard (it accepts up to ``backlog`` per wake-up).
LISTEN_BACKLOG = 128
# File descriptors kept free when the connection cap is fitted to the limit.  An
# accepted socket reaches the guard two loop turns after accept() (asyncio hands it
# to a task, which makes the transport, which schedules connection_made), and the
# listener accepts a burst on each turn: up to three bursts are open before the
# guard can refuse or evict for them.  Plus what the process itself holds (Redis
# pool and pub/sub connections, log files, the bots' worker pool: 20-100).
FD_RESERVE = 3 * LISTEN_BACKLOG + 128


def raise_fd_limit() -> int:
    """Raise the soft file-descriptor limit to the hard one; returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


@dataclass(frozen=True)
class Limits:
    max_connections: int
    max_connections_per_client: int
    request_timeout: float
    send_timeout: float
    send_buffer_bytes: int
    proxies: TrustedProxies

    @classmethod
    def from_settings(cls, settings: Settings, fd_limit: int | None = None) -> Limits:
        cap = settings.max_connections
        if fd_limit is not None and cap > fd_limit - FD_RESERVE:
            fitted = max(16, fd_limit - FD_RESERVE)
            log.warning(
                "max_connections %d does not fit the file-descriptor limit %d; using %d",
                cap,
                fd_limit,
                fitted,
            )
            cap = fitted
        return cls(
            max_connections=cap,
            max_connections_per_client=min(settings.max_connections_per_client, cap),
            request_timeout=float(settings.request_timeout_seconds),
            send_timeout=float(settings.send_timeout_seconds),
            send_buffer_bytes=settings.send_buffer_bytes,
            proxies=TrustedProxies(settings.trusted_proxies, settings.client_ip_header),
        )
