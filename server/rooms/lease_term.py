"""Until when a room's lease is surely its own, and the renewal that makes sure of it
before the room tells a socket anything."""

from __future__ import annotations

from .clock import WallClock
from .store import Lease, TableStore

__all__ = ["LeaseTerm"]


class LeaseTerm:
    """A room's lease and until when (``clock``) it is surely still held: the registry
    moves that on with each renewal it makes (``renewed``)."""

    __slots__ = ("_clock", "_seconds", "_store", "_until", "lease")

    def __init__(
        self, store: TableStore, lease: Lease, clock: WallClock, seconds: float, until: float
    ) -> None:
        self._store = store
        self.lease = lease
        self._clock = clock
        self._seconds = seconds
        self._until = until

    def renewed(self, until: float) -> None:
        """The lease is surely held until ``until`` (the lease clock): a renewal sent that
        long before it ends succeeded."""
        self._until = max(self._until, until)

    async def hold(self) -> None:
        """Make sure the lease is ours before handling anything that may tell a socket.

        A write checks the lease itself, but a join, a leave or a resync tells the
        sockets without writing: a process that stalled past its lease (SIGSTOP, a
        swapped-out host) would wake up and send them states of a table another
        process has moved on since.  Once the lease may have run out, this renews it
        before the room goes on; ``LeaseLost`` closes the room instead.
        """
        if self._clock.now() < self._until:
            return
        sent = self._clock.now()
        await self._store.renew(self.lease, round(self._seconds * 1000))
        self._until = sent + self._seconds
