"""A client's copy of its picture, rebuilt from the frames it is sent (as the browser does).

The reference the tests and bench/server.py rebuild views with; client/js/deltas.js
is the same in JavaScript.
"""

from __future__ import annotations

from typing import Any

from .digest import digest
from .ops import PatchError, copy, patch
from .wire import appended, expand, whole_events

__all__ = ["Mirror"]


class Mirror:
    """A client's copy of its picture, kept from the frames it is sent exactly as the
    browser keeps it (client/js/net.js).  ``take`` answers each ``p`` (whole picture)
    or ``d`` (delta) frame (decoded JSON) with the whole ``state``/``watch`` frame it
    stands for, or with the reason to ask for a resync (a ``ResyncReason`` value),
    after which it answers None to every delta until a whole picture comes (one
    resync asked, not one per frame).  A ``state``/``watch`` frame is handed on as it
    is (a socket that takes deltas is not sent one)."""

    __slots__ = ("_made", "_whole_frames", "kind", "lost", "picture", "version")

    def __init__(self, whole: bool = True) -> None:
        # ``whole=False``: a delta is answered with ``{}`` once it applies and its digest
        # matches, and no whole frame is built (the client reads what it needs from
        # ``picture``): bench/server.py's scripted humans, which share the machine with
        # the server they measure, build a view only when it is their turn.
        self._whole_frames = whole
        # {"t": table info, "v": the view's wire form}
        self.picture: Any = None
        self.version: int | None = None
        self.kind = "state"
        self.lost = False
        self._made: dict[str, Any] = {}

    def take(self, frame: dict[str, Any]) -> dict[str, Any] | str | None:
        """The whole frame ``frame`` stands for, why to resync, or None (waiting)."""
        if frame["type"] in ("state", "watch"):
            self.picture, self.version = None, frame["version"]
            return frame
        if frame["type"] == "p":
            try:
                whole = self._whole(frame["v"], frame["t"], frame["w"], frame.get("e", []))
            except PatchError:
                self.picture, self.lost = None, True
                return "patch"
            self.kind = frame["k"]
            self.picture = {"t": frame["t"], "v": frame["w"]}
            self.version = frame["v"]
            self.lost = False
            whole["type"] = self.kind
            return whole
        if self.lost:
            return None
        reason = self._patched(frame)
        if reason is not None:
            self.picture, self.lost = None, True
            return reason
        return self._made

    def _whole(self, version: int, table: Any, wire: Any, events: Any) -> dict[str, Any]:
        view = expand(wire)
        return {
            "type": self.kind,
            "version": version,
            "table": copy(table),
            "view": view,
            "events": whole_events(events, view),
        }

    def _patched(self, frame: dict[str, Any]) -> str | None:
        if self.picture is None or frame.get("f", frame["v"] - 1) != self.version:
            return "gap"
        try:
            picture = {
                "t": patch(self.picture["t"], frame.get("t", [])),
                "v": patch(self.picture["v"], frame["o"]),
            }
            if self._whole_frames:
                events = frame["e"] if "e" in frame else appended(self.picture["v"], picture["v"])
                self._made = self._whole(frame["v"], picture["t"], picture["v"], events)
        except PatchError:
            return "patch"
        if digest(picture) != frame["h"]:
            return "digest"
        self.picture, self.version = picture, frame["v"]
        return None
