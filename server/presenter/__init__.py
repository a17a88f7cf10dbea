"""Between the wire and the rooms, without I/O: messages in, requests out; updates in, frames out.

The room actor deals in engine actions and seat views; ``server.protocol``
defines the frames.  This package is the only place that knows both, the way
a sans-I/O protocol object sits between a socket and an application:

- ``inbound``: ``read_join`` and ``read`` turn one client frame into what should
  happen (a join, a request for the room, or an answer for the sender alone);
- ``outbound``: ``frame`` turns a room's ``Update`` into one text frame, a whole
  ``state``/``watch`` frame (``full_frame``), or, for a socket that takes deltas
  (its ``Feed`` says so), what ``delta_frames`` makes;
- ``delta_frames``: a ``d`` frame from the picture the socket was last shown,
  made by ``server.deltas`` from two pictures of the one projection (so it carries
  nothing the full frame would not), or its whole picture as a ``p`` frame;
- ``table``: ``table_info``, the table part of every frame;
- ``refusals``: ``error_frame`` is the single mapping from a ``ServerError`` to an
  ``error`` frame (its reason's value is the wire code), and ``close_for`` the
  single mapping from a room's ``Closing`` to a WebSocket close code.

Each part imports only those listed below it in ``tests/test_layering.py``
(``PRESENTER_PARTS``).  ``server.connection`` and ``server.app`` do the sending and
receiving.
"""

from __future__ import annotations

from .delta_frames import Feed
from .inbound import (
    PONG,
    Answer,
    Inbound,
    Resync,
    ToRoom,
    read,
    read_join,
    read_watching,
    request_for,
)
from .outbound import frame, full_frame
from .refusals import WIRE_REASONS, close_for, error_frame, seat_refusal
from .table import table_info

__all__ = [
    "PONG",
    "WIRE_REASONS",
    "Answer",
    "Feed",
    "Inbound",
    "Resync",
    "ToRoom",
    "close_for",
    "error_frame",
    "frame",
    "full_frame",
    "read",
    "read_join",
    "read_watching",
    "request_for",
    "seat_refusal",
    "table_info",
]
