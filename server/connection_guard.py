"""Who holds our connections, and whom to close when they are all taken.

Every TCP connection, HTTP or game socket, takes one of ``max_connections``
slots, and one address may hold at most ``max_connections_per_client`` of
them.  A full server does not simply refuse the newcomer: then a handful of
addresses that open sockets and hold them (silent, never joining, or seated at
tables of their own) would lock every honest player and ``/healthz`` out.  It
closes one connection to make room, chosen so that only those who hold more
than the newcomer lose one (docs/operations.md, "Who is closed when the server
is full"):

1. a game socket that has not joined yet, oldest first;
2. then an HTTP connection waiting for a request (idle keep-alive), oldest
   first;
3. then a seated game socket of the address holding the most connections:
   among its sockets, the one at the table holding the most sockets, then the
   one idle the longest;

and always of an address that holds at least two more connections than the
newcomer's, so that each eviction makes the shares more even, never less.

An HTTP request in progress is never closed (the request deadline bounds it).
If nobody qualifies the newcomer is refused: the server is full of addresses
that hold at most one more than it does.  So an address at or below its fair
share never loses a connection to make room for one that would then hold
more, and attackers at their share cannot make the server churn their own
sockets (each churn would cost a whole handshake).

Addresses are grouped as a client would be: an IPv6 address by its /64 (one
host gets a whole /64), a trusted proxy's game sockets by the client its
header names once the handshake is read (``rekey``).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import OrderedDict
from collections.abc import Callable
from enum import IntEnum
from typing import Protocol

from server import metrics

__all__ = ["ConnectionGuard", "Guarded", "Stage", "address_key"]


class Stage(IntEnum):
    """Where a connection is, in the order they are closed to make room."""

    UNJOINED = 0  # a game socket that has not joined a table yet
    HTTP = 1  # an HTTP connection (closed only while it waits for a request)
    SEATED = 2  # a game socket that joined a table (seat or gallery)


class Guarded(Protocol):
    """What the guard needs from a connection's protocol."""

    def waiting_for_request(self) -> bool:
        """True for an HTTP connection with no request in progress."""
        ...

    def evict(self) -> None:
        """Close the connection now to make room (its ``release`` follows)."""
        ...


class _Slot:
    __slots__ = ("key", "last_active", "owner", "stage", "table")

    def __init__(self, owner: Guarded, key: str, now: float) -> None:
        self.owner = owner
        self.key = key
        self.stage = Stage.HTTP
        self.table: str | None = None
        self.last_active = now


def address_key(host: str | None) -> str:
    """The group an address counts in: itself, or its /64 for IPv6."""
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped
        if mapped is not None:
            return str(mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host


class ConnectionGuard:
    """Counts open connections by transport (a WebSocket upgrade keeps its slot)."""

    def __init__(
        self,
        max_connections: int,
        max_per_client: int,
        exempt: Callable[[str | None], bool],
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._max = max_connections
        self._max_per_client = max_per_client
        # Trusted proxies: many clients share their address (their real clients are
        # counted once known, see ``rekey``).
        self._exempt = exempt
        self._clock = clock or asyncio.get_running_loop().time
        self._slots: dict[object, _Slot] = {}
        # Admission order per stage: the oldest first.
        self._stages: dict[Stage, OrderedDict[object, _Slot]] = {s: OrderedDict() for s in Stage}
        self._per_key: dict[str, int] = {}
        self._per_table: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._slots)

    def held(self, host: str | None) -> int:
        """Connections held by ``host``'s address group."""
        return self._per_key.get(address_key(host), 0)

    def admit(self, transport: object, owner: Guarded, host: str | None) -> bool:
        """Register ``owner`` for ``transport``; False when a cap refuses it.

        The same transport admitted again (the WebSocket protocol taking over an
        upgraded HTTP connection) keeps its slot and becomes an unjoined socket.
        """
        slot = self._slots.get(transport)
        if slot is not None:
            slot.owner = owner
            self._move(transport, slot, Stage.UNJOINED)
            return True
        key = address_key(host)
        exempt = self._exempt(host)
        held = 0 if exempt else self._per_key.get(key, 0)
        if held >= self._max_per_client:
            metrics.rate_limited("connections_per_client")
            return False
        if len(self._slots) >= self._max and not self._evict_for(held):
            metrics.rate_limited("connections")
            return False
        slot = _Slot(owner, key, self._clock())
        self._slots[transport] = slot
        self._stages[Stage.HTTP][transport] = slot
        self._per_key[key] = self._per_key.get(key, 0) + 1
        return True

    def rekey(self, transport: object, host: str | None) -> bool:
        """Count ``transport`` for ``host`` from now on (the client a trusted proxy named);
        False when that client already holds its share (the caller closes it)."""
        slot = self._slots.get(transport)
        key = address_key(host)
        if slot is None or slot.key == key:
            return True
        if self._per_key.get(key, 0) >= self._max_per_client and not self._exempt(host):
            metrics.rate_limited("connections_per_client")
            return False
        self._drop_key(slot.key)
        slot.key = key
        self._per_key[key] = self._per_key.get(key, 0) + 1
        return True

    def seated(self, transport: object, table: str) -> None:
        """The game socket on ``transport`` joined ``table``."""
        slot = self._slots.get(transport)
        if slot is None or slot.stage is Stage.SEATED:
            return
        slot.table = table
        self._per_table[table] = self._per_table.get(table, 0) + 1
        self._move(transport, slot, Stage.SEATED)
        slot.last_active = self._clock()

    def active(self, transport: object) -> None:
        """The connection sent something: it is not idle."""
        slot = self._slots.get(transport)
        if slot is not None:
            slot.last_active = self._clock()

    def release(self, transport: object) -> None:
        slot = self._slots.pop(transport, None)
        if slot is None:
            return
        del self._stages[slot.stage][transport]
        self._drop_key(slot.key)
        if slot.table is not None:
            left = self._per_table[slot.table] - 1
            if left:
                self._per_table[slot.table] = left
            else:
                del self._per_table[slot.table]

    def _move(self, transport: object, slot: _Slot, stage: Stage) -> None:
        del self._stages[slot.stage][transport]
        slot.stage = stage
        self._stages[stage][transport] = slot

    def _drop_key(self, key: str) -> None:
        left = self._per_key[key] - 1
        if left:
            self._per_key[key] = left
        else:
            del self._per_key[key]

    def _evict_for(self, held: int) -> bool:
        """Close one connection for a newcomer whose address holds ``held``."""
        found = self._victim(held)
        if found is None:
            return False
        transport, slot = found
        # Released first: the slot is free even if closing takes a moment.
        self.release(transport)
        metrics.rate_limited(f"connections_evicted_{slot.stage.name.lower()}")
        slot.owner.evict()
        return True

    def _victim(self, held: int) -> tuple[object, _Slot] | None:
        # Only an address holding at least two more than the newcomer's loses one: the
        # shares get more even, never less, and attackers at their share cannot make
        # the server churn their own sockets (each churn is a whole handshake).
        need = held + 2
        per_key = self._per_key
        # Unjoined sockets, then idle HTTP: the oldest first.
        for transport, slot in self._stages[Stage.UNJOINED].items():
            if per_key[slot.key] >= need:
                return transport, slot
        for transport, slot in self._stages[Stage.HTTP].items():
            if per_key[slot.key] >= need and slot.owner.waiting_for_request():
                return transport, slot
        # Seated sockets: of the address holding the most, at the table holding the
        # most, the one idle the longest.
        seated = self._stages[Stage.SEATED]
        top = max((per_key[slot.key] for slot in seated.values()), default=0)
        if top < need:
            return None
        per_table = self._per_table
        best: tuple[object, _Slot] | None = None
        best_rank = (0, 0.0)
        for transport, slot in seated.items():
            if per_key[slot.key] != top:
                continue
            rank = (-per_table.get(slot.table or "", 0), slot.last_active)
            if best is None or rank < best_rank:
                best, best_rank = (transport, slot), rank
        return best
