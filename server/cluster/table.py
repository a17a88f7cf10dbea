"""What a game socket's session talks to: its table, whichever process runs the room.

``TableHandle`` is the one face a table shows its sockets.  Two kinds stand
behind it: a ``LocalTable`` when the room runs in this process, and a
``Forwarder`` (``forward.py``) when another process owns the table.  The
session never asks which one it holds.

``read_frame`` is the one reading of a joined socket's frame, wherever the
frame is read (a local socket's session, the owner reading a forwarded frame, a
forwarder holding frames until it takes the table itself): a spectator's
frame, a ping or a refused frame (malformed JSON, invalid UTF-8, a second join)
is answered on the socket at once, and anything else is a request for the room.
"""

from __future__ import annotations

from typing import Protocol

from server import presenter
from server.connection import Connection
from server.rooms.room import Room
from server.rooms.seats import SPECTATOR

__all__ = ["LocalTable", "TableHandle", "read_frame"]


class TableHandle(Protocol):
    """A table as its sockets in this process see it."""

    @property
    def id(self) -> str:
        """The table's id."""
        ...

    @property
    def version(self) -> int:
        """The table's version as this process last knew it (for the versions of answers)."""
        ...

    async def attach(self, conn: Connection, token_hash: str | None = None) -> None:
        """Seat ``conn``, which joined with the token whose hash is ``token_hash``; its full
        state follows.  Raises ``RoomClosed``, or ``SeatError`` when the token opens nothing."""
        ...

    def detach(self, conn: Connection) -> None:
        """Unseat ``conn`` (its socket has gone)."""
        ...

    def take(self, conn: Connection, frame: str | bytes) -> None:
        """One frame from ``conn``'s socket, as it came off the wire: answered on the
        socket (``read_frame``) or handed on as a request for the room."""
        ...


def read_frame(
    conn: Connection, frame: str | bytes, max_bytes: int, version: int
) -> presenter.ToRoom | presenter.Resync | None:
    """The request ``frame`` makes of the room (a resync too: the room sends the full
    picture), or None when the frame was answered on ``conn`` alone (a spectator's
    frame, a ping, a refusal; ``version`` is the table's)."""
    if conn.seat == SPECTATOR:
        answer = presenter.read_watching(frame, max_bytes, version=version)
        if isinstance(answer, presenter.Resync):
            return answer
        conn.push_frame(answer)
        return None
    inbound = presenter.read(frame, max_bytes, seat=conn.seat, version=version)
    if isinstance(inbound, presenter.Answer):
        conn.push_frame(inbound.frame)
        return None
    return inbound


class LocalTable:
    """A table whose room runs in this process, for its local and forwarded sockets."""

    __slots__ = ("_max_bytes", "room")

    def __init__(self, room: Room, max_frame_bytes: int) -> None:
        self.room = room
        self._max_bytes = max_frame_bytes

    @property
    def id(self) -> str:
        """The table's id."""
        return self.room.id

    @property
    def version(self) -> int:
        """How many actions the room has accepted."""
        return self.room.version

    async def attach(self, conn: Connection, token_hash: str | None = None) -> None:
        """Seat ``conn`` in the room (see ``Room.attach``)."""
        await self.room.attach(conn, token_hash)

    def detach(self, conn: Connection) -> None:
        """Unseat ``conn`` from the room."""
        self.room.detach(conn)

    def take(self, conn: Connection, frame: str | bytes) -> None:
        """Read ``frame``; a request goes into the room's inbox."""
        request = read_frame(conn, frame, self._max_bytes, self.room.version)
        if isinstance(request, presenter.Resync):
            self.room.resync(conn)
        elif request is not None:
            self.room.submit(conn, request.version, request.request)
