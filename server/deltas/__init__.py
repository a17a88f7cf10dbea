"""Per-seat deltas: a socket's picture sent once, then only what changed in it.

A *picture* is what a whole frame shows apart from its events: ``{"t": table
info, "v": view}``, with the view in its wire form (``wire``: each move held
once, the aids as short strings; ``wire.expand`` gives back the very view a
``state`` frame carries).  The presenter makes both of the one projection there
is (``engine.seat_view``/``public_view`` and ``presenter.table_info``), so a
delta, made from two pictures of the same eyes, can only carry what the whole
frame would have shown.

- ``ops``: the op language (``diff``, used for the table info, and ``patch``);
- ``builder``: ``view_ops``, the ops between two wire forms of a view;
- ``wire``: ``compact``/``expand``, and the events as a delta carries them;
- ``digest``: CRC-32 of a picture's canonical JSON, the check after patching;
- ``mirror``: ``Mirror``, the client's bookkeeping in Python (tests, benches).

docs/protocol.md ("Deltas") describes the frames.
"""

from __future__ import annotations

from .builder import view_ops
from .digest import (
    MAX_SAFE_INTEGER,
    canonical,
    digest,
    digest_of,
    picture_digest,
    public_crc,
    seat_digest,
    table_prefix,
    wire_json,
)
from .mirror import Mirror
from .ops import Op, PatchError, diff, patch
from .wire import (
    Seen,
    appended,
    compact,
    compact_events,
    compact_public,
    compact_seat,
    expand,
    seen,
    whole_events,
)

__all__ = [
    "MAX_SAFE_INTEGER",
    "Mirror",
    "Op",
    "PatchError",
    "Seen",
    "appended",
    "canonical",
    "compact",
    "compact_events",
    "compact_public",
    "compact_seat",
    "diff",
    "digest",
    "digest_of",
    "expand",
    "patch",
    "picture_digest",
    "public_crc",
    "seat_digest",
    "seen",
    "table_prefix",
    "view_ops",
    "whole_events",
    "wire_json",
]
