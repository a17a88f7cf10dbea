"""The ops that bring one wire form of a view to the next (``server.deltas.wire``).

Both wire forms come from the one projection, so the ops carry nothing the newer
view would not show.  They are ``server.deltas.ops``'s ops, on paths of the wire
form's indices: a changed field is set whole (``["8", 2]``: the turn), except that
moves and results appended are set one past the end (``["4/17", [1, "5S5H",
"pair", "5", 1]]``) and a list of numbers or flags of the same length is set item by
item where that is shorter (``["9/1", 13]``: seat 1 holds 13 cards).  One compare
of the two lists finds the changed fields: most of a view stays as it was (each
field holds values of one JSON type, so ``!=`` is JSON's inequality there).
"""

from __future__ import annotations

from itertools import compress
from operator import ne
from typing import Any

from .ops import Op
from .wire import MOVES

__all__ = ["view_ops"]

_RESULTS = 1
_APPENDED = frozenset({MOVES, _RESULTS})
# Fields that are lists of numbers or flags (counts, last cards, bomb points, totals,
# winners, the counter): an item that changed is one short op.
_ITEMS = frozenset({9, 10, 11, 12, 15, 19})
_PATHS = [str(i) for i in range(32)]
_INDICES = range(32)
# "field/item" for every item a frame is likely to name (a deal's moves, a match's
# results, a list of numbers), made once: a delta is made for every seat after every
# action, and formatting a path costs as much as comparing the list.
_ITEM_PATHS = [
    [f"{i}/{k}" for k in range(192 if i in _APPENDED else 16)] if i in _APPENDED | _ITEMS else []
    for i in _INDICES
]


def view_ops(old: list[Any], new: list[Any], first: int = 0) -> list[Op]:
    """The ops that turn wire form ``old`` into ``new`` (both of the same eyes).

    ``first``: the two are the wire forms' fields from that index on (a seat's own
    fields, its public ones being shared by the table's seats), and so are the ops."""
    if len(old) != len(new):
        return [[None, new]] if not first else [[_PATHS[i], v] for i, v in enumerate(new, first)]
    ops: list[Op] = []
    # One pass in C: most fields are unchanged (often the very same object).
    for i in compress(_INDICES[first:], map(ne, old, new)):
        before, value = old[i - first], new[i - first]
        paths = _ITEM_PATHS[i]
        if paths and len(value) <= len(paths):
            n = len(before)
            if i in _APPENDED:
                if len(value) > n and value[:n] == before:
                    ops += map(list, zip(paths[n : len(value)], value[n:], strict=True))
                    continue
            elif len(value) == n:
                # Each field's items are of one JSON type, so ``!=`` is JSON's there.
                changed = list(compress(_INDICES, map(ne, before, value)))
                if 2 * len(changed) <= n:
                    ops += [[paths[k], value[k]] for k in changed]
                    continue
        ops.append([_PATHS[i], value])
    return ops
