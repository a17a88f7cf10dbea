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


def view_ops(old: list[Any], new: list[Any]) -> list[Op]:
    """The ops that turn wire form ``old`` into ``new`` (both of the same eyes)."""
    if len(old) != len(new):
        return [[None, new]]
    ops: list[Op] = []
    # One pass in C: most fields are unchanged (often the very same object).
    changed = compress(_INDICES, map(ne, old, new))
    for i in changed:
        before, value = old[i], new[i]
        path = _PATHS[i]
        if i in _APPENDED and len(value) > len(before) and value[: len(before)] == before:
            ops += [[f"{path}/{k}", value[k]] for k in range(len(before), len(value))]
        elif i in _ITEMS and len(value) == len(before):
            items = [
                [f"{path}/{k}", item]
                for k, (was, item) in enumerate(zip(before, value, strict=True))
                if was != item or type(was) is not type(item)
            ]
            ops += items if 2 * len(items) <= len(value) else [[path, value]]
        else:
            ops.append([path, value])
    return ops
