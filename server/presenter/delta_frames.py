"""Delta frames: for a socket that takes deltas, a ``d`` frame from the picture its
``Feed`` last showed, or its whole picture as a ``p`` frame.

``server.deltas`` makes the wire form, the ops and the digest of two pictures of
the one projection (so a delta carries nothing the whole frame would not); this
module makes each of them once per update, the seat's sockets sharing it, and at
a table with more than one socket the public fields' part once per broadcast
(``_Public``) for every seat and spectator whose view shows the same.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import astuple

from server import deltas
from server.deltas import Seen
from server.engine import PublicView, SeatView
from server.protocol import DeltaMsg, PictureMsg, TableInfo, encode
from server.rooms.updates import StateUpdate, TableSnapshot, WatchUpdate

from .table import table_info_of

__all__ = ["Feed", "frame_for"]


class Feed:
    """What one socket was last shown: its picture, what its view was made from and its
    version.

    ``deltas``: the socket joined asking for deltas; otherwise every change is
    sent whole and nothing is kept.  Written only by ``frame``, in the order the
    socket's frames are queued (the order it receives them).
    """

    __slots__ = ("deltas", "picture", "public", "seen", "version")

    def __init__(self, deltas: bool = False) -> None:
        self.deltas = deltas
        # {"t": table info, "v": the view's wire form}, and what the next wire form
        # reuses of the view it is of (not the view: its lists would be kept until the
        # next frame, for every collection meanwhile to scan).
        self.picture: dict[str, Any] | None = None
        self.seen: Seen | None = None
        # The wire form's public fields (``_Public.wire``): whose ops are shared.
        self.public: list[Any] | None = None
        self.version = -1


class _Public:
    """What every socket of one table at one version shares of its picture (a table
    with more than one socket: seats and spectators): the wire form of the view's
    public fields (``deltas.compact_public``), the digest's CRC-32 as far as them, the
    ops to them from an earlier version's, the events as deltas carry them.  Made by
    the first socket's frame, kept in the snapshot's ``frames``
    (one per broadcast, the last version's), used by another socket's only when its
    view's public fields equal ``source``'s: a picture holds only what its own view shows."""

    __slots__ = (
        "_fields",
        "crc",
        "events",
        "events_of",
        "ops",
        "ops_from",
        "source",
        "version",
        "wire",
    )

    def __init__(
        self, version: int, source: SeatView | PublicView, wire: list[Any], crc: int
    ) -> None:
        self.version, self.source, self.wire, self.crc = version, source, wire, crc
        # The ops to ``wire`` from ``ops_from``, an earlier version's (the one the
        # table's sockets were last shown, as a rule the same for all of them).
        self.ops_from: list[Any] | None = None
        self.ops: list[Any] = []
        self.events_of: list[Any] | None = None
        self.events: list[Any] = []
        self._fields: tuple[Any, ...] | None = None

    def fields(self) -> tuple[Any, ...]:
        """``source``'s public fields, for the table's other sockets to compare theirs
        with (made when the second one comes)."""
        if self._fields is None:
            self._fields = astuple(self.source)[:_PUBLIC_FIELDS]
        return self._fields


# A view's public fields come first (``engine.view._Public``), as in the wire form.
_PUBLIC_FIELDS = len(deltas.wire.PUBLIC_FIELDS)


def _lent(feed: Feed) -> tuple[Seen, list[Any]] | None:
    """What the view ``feed`` last showed was made from, and its wire form, whose moves'
    wire forms the next one reuses (None before its first picture)."""
    if feed.seen is None or feed.picture is None:
        return None
    return feed.seen, feed.picture["v"]


def _public(update: StateUpdate | WatchUpdate, feed: Feed) -> _Public:
    """The table's shared part of ``update``'s picture (``_Public``), made once per
    snapshot and version for every seat and spectator whose view's public fields are
    the same.  ``feed``'s picture lends its moves' wire forms (each move is made into
    one once)."""
    view = update.view
    shared: _Public | None = update.table.frames.get("public")
    if (
        shared is not None
        and shared.version == update.version
        and (shared.source is view or shared.fields() == astuple(view)[:_PUBLIC_FIELDS])
    ):
        return shared
    wire = deltas.compact_public(view, _lent(feed))
    shared = _Public(
        update.version, view, wire, deltas.public_crc(_table_prefix(update.table), wire)
    )
    update.table.frames["public"] = shared
    return shared


def _picture(
    update: StateUpdate | WatchUpdate, feed: Feed
) -> tuple[dict[str, Any], str, _Public | None]:
    """The picture a socket taking deltas keeps of ``update`` (``{"t": table info, "v":
    the view's wire form}``, of the very table info and view a whole frame encodes), its
    digest, and the part of it the table's other sockets share (None at a table with one
    socket), made once per update; the table info and the shared part once per snapshot.
    ``feed``'s picture lends its moves' wire forms (each move is made into one once)."""
    made: tuple[dict[str, Any], str, _Public | None] | None = update.frames.get("picture")
    if made is None:
        table, view = update.table, update.view
        shared: _Public | None = None
        if sum(table.connected) + (table.spectators > 0) < 2:
            # Nobody to share with: the wire form whole, in one pass.
            wire = deltas.compact(view, _lent(feed))
            digest = deltas.picture_digest(_table_prefix(table), deltas.wire_json(wire))
        else:
            shared = _public(update, feed)
            if isinstance(view, SeatView):
                own = deltas.compact_seat(view)
                wire = shared.wire + own
                digest = deltas.seat_digest(shared.crc, own)
            else:
                wire, digest = shared.wire, deltas.seat_digest(shared.crc, None)
        shown = {"t": table_info_of(table), "v": wire}
        made = update.frames["picture"] = (shown, digest, shared)
    return made


def _picture_frame(
    update: StateUpdate | WatchUpdate, shown: dict[str, Any], digest: str, shared: _Public | None
) -> str:
    """The whole picture as a ``p`` frame, made once per update."""
    text: str | None = update.frames.get("p")
    if text is None:
        text = update.frames["p"] = encode(
            PictureMsg(
                version=update.version,
                kind="state" if isinstance(update, StateUpdate) else "watch",
                table=shown["t"],
                wire=shown["v"],
                digest=digest,
                events=_compact_events(update, shared),
            )
        )
    return text


def _table_ops(base: TableInfo, table: TableSnapshot) -> list[Any]:
    """The ops from table info ``base`` to ``table``'s, made once per snapshot and base."""
    info = table_info_of(table)
    if base is info:
        return []
    # Looked up before comparing: the table's other sockets hold the same base.
    key = f"ops {id(base)}"
    made: tuple[TableInfo, list[Any]] | None = table.frames.get(key)
    if made is None or made[0] is not base:
        made = table.frames[key] = (base, [] if base == info else deltas.diff(base, info))
    return made[1]


def _compact_events(update: StateUpdate | WatchUpdate, shared: _Public | None) -> list[Any]:
    """The update's events as delta frames carry them, made once per update, or once
    per broadcast with ``shared`` (its view holds the moves the events are of as this
    one does)."""
    if shared is None:
        events: list[Any] | None = update.frames.get("events")
        if events is None:
            events = update.frames["events"] = deltas.compact_events(
                update.events, update.view.moves
            )
        return events
    if shared.events_of is not update.events:
        shared.events = deltas.compact_events(update.events, update.view.moves)
        shared.events_of = update.events
    return shared.events


def _delta_events(
    update: StateUpdate | WatchUpdate, shared: _Public | None, old: list[Any], new: list[Any]
) -> Any:
    """A delta's events: None (left out) when they are exactly the moves it appends."""
    events = _compact_events(update, shared)
    if events == deltas.appended(old, new):
        return None
    return events


def _view_ops(
    shared: _Public | None, base_public: list[Any] | None, old: list[Any], new: list[Any]
) -> list[Any]:
    """The ops from wire form ``old`` to ``new``; with ``shared``, those of the public
    fields made once per earlier public fields (``base_public``, ``old``'s), for every
    socket of the table."""
    if shared is None or base_public is None or len(old) != len(new):
        return deltas.view_ops(old, new)
    if shared.ops_from is not base_public:
        shared.ops = deltas.view_ops(base_public, shared.wire)
        shared.ops_from = base_public
    if len(new) == _PUBLIC_FIELDS:
        return shared.ops
    return shared.ops + deltas.view_ops(old[_PUBLIC_FIELDS:], new[_PUBLIC_FIELDS:], _PUBLIC_FIELDS)


def _table_prefix(table: TableSnapshot) -> int:
    """The CRC-32 of a picture's JSON up to its view (``server.deltas.table_prefix``),
    made once per snapshot for every seat."""
    crc: int | None = table.frames.get("table crc")
    if crc is None:
        crc = table.frames["table crc"] = deltas.table_prefix(
            deltas.canonical(table_info_of(table))
        )
    return crc


# A delta this long is compared with the whole frame, and the shorter one is sent (a
# new deal changes most of a picture).
_COMPARE_OVER = 1024


def frame_for(update: StateUpdate | WatchUpdate, feed: Feed) -> str | None:
    """The frame that brings ``feed`` to ``update`` (None: it already shows it), and
    ``feed`` moved on to it."""
    shown, digest, shared = _picture(update, feed)
    base, base_version, base_public = feed.picture, feed.version, feed.public
    feed.picture, feed.version = shown, update.version
    feed.seen = deltas.seen(update.view)
    feed.public = None if shared is None else shared.wire
    if base is None or update.full:
        return _picture_frame(update, shown, digest, shared)
    # The seat's sockets usually hold the same picture: one delta made for all of them.
    made: tuple[dict[str, Any], str | None] | None = update.frames.get(id(base))
    if made is None or made[0] is not base:
        ops = _view_ops(shared, base_public, base["v"], shown["v"])
        table_ops = _table_ops(base["t"], update.table)
        text: str | None = None
        # A change nobody sees (a new watch link's hash) is not worth a frame.
        if ops or table_ops or update.events or update.version != base_version:
            text = encode(
                DeltaMsg(
                    version=update.version,
                    base=None if base_version == update.version - 1 else base_version,
                    ops=ops,
                    table_ops=table_ops,
                    digest=digest,
                    events=_delta_events(update, shared, base["v"], shown["v"]),
                )
            )
            if len(text) > _COMPARE_OVER:
                whole = _picture_frame(update, shown, digest, shared)
                if len(whole) <= len(text):
                    text = whole
        made = update.frames[id(base)] = (base, text)
    return made[1]
