"""The op language of a delta: a generic diff of two JSON values, and its patch.

``diff(old, new)`` is a structural diff of JSON values (``msgspec`` Structs among
them, compared field by field); ``patch(old, ops)`` is its inverse, the client's
apply (client/js/deltas.js does the same in JavaScript).  The table info is diffed
this way; a seat's view is diffed field by field on its wire form
(``server.deltas.builder``) into the same ops.  An op is a JSON array whose length
says what it does, on a path of ``/``-joined keys and list indices (``~0`` and
``~1`` escape ``~`` and ``/`` in a key, as in JSON Pointer; a null path is the
whole value, ``""`` the key ``""``):

- ``[path, value]``: set the key or list item at ``path`` to ``value`` (a
  list's length as the index appends one item);
- ``[[path, ...], value]``: set each of the paths to ``value`` (one value sent
  once for several places);
- ``[path]``: remove the key at ``path``;
- ``[path, index, count, items]``: in the list at ``path``, remove ``count``
  items at ``index`` and insert ``items`` there.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["Op", "PatchError", "copy", "diff", "patch"]

Op = list[Any]


class PatchError(ValueError):
    """A delta that does not fit the picture it is applied to (the client resyncs)."""


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1") if "~" in key or "/" in key else key


def _unescape(key: str) -> str:
    return key.replace("~1", "/").replace("~0", "~") if "~" in key else key


def _join(path: str | None, key: str | int) -> str:
    part = str(key) if isinstance(key, int) else _escape(key)
    return part if path is None else f"{path}/{part}"


def diff(old: Any, new: Any) -> list[Op]:
    """The ops that turn picture ``old`` into ``new``: JSON values, ``msgspec`` Structs
    among them (the server's pictures are its table info and view themselves)."""
    ops: list[Op] = []
    if old is not new:
        _Differ(ops).diff(old, new, None)
    return ops


def _same(a: Any, b: Any) -> bool:
    """JSON's equality.  ``True == 1`` and ``1 == 1.0`` in Python, also deep inside
    lists and dicts, but not in JSON: ``==`` first (in C, and it rejects nearly every
    pair that differs), then each scalar's type.  A tuple is a JSON array too: the
    server's pictures hold them (``to_builtins``)."""
    return a == b and _typed_alike(a, b)


def _typed_alike(a: Any, b: Any) -> bool:
    # Only for values already found ``==``: the same shape, each scalar of one type.
    if a is b:
        return True
    if isinstance(a, list | tuple):
        return all(map(_typed_alike, a, b))
    if isinstance(a, dict):
        return all(_typed_alike(v, b[k]) for k, v in a.items())
    return type(a) is type(b)


# A value this long (as JSON) is sent once per delta: again, it is one more path to set.
_COPY_OVER = 24
# An object of at most this many keys may be set whole rather than key by key.
_SMALL = 8
_encode = msgspec.json.Encoder().encode


class _Differ:
    __slots__ = ("_sent", "ops")

    def __init__(self, ops: list[Op]) -> None:
        self.ops = ops
        # The JSON of each container set whole so far, and the op that sets it.
        self._sent: dict[bytes, Op] = {}

    def diff(self, old: Any, new: Any, path: str | None) -> None:
        cls = type(new)
        if cls in _SCALARS:
            # A number, a string, a flag, null: most values a picture changes.
            if old != new or type(old) is not cls:
                self.set(path, new)
            return
        fields = _fields(cls)
        if fields is not _PLAIN and type(old) is cls:
            if fields is not None:
                self.diff_struct(old, new, fields, path)
                return
            old, new = msgspec.to_builtins(old), msgspec.to_builtins(new)
        if isinstance(old, dict) and isinstance(new, dict):
            # Compared key by key (not first as a whole): a picture's root always changed.
            outer, self.ops = self.ops, []
            for key, value in new.items():
                if key not in old:
                    self.set(_join(path, key), value)
                    continue
                before = old[key]
                # Most of a picture stays as it was: no path is made for that part.
                if _same(before, value):
                    continue
                self.diff(before, value, _join(path, key))
            for key in old:
                if key not in new:
                    self.ops.append([_join(path, key)])
            inner, self.ops = self.ops, outer
            self.whole_or_parts(path, new, len(new), inner)
        elif isinstance(old, list) and isinstance(new, list):
            self.diff_list(old, new, path)
        elif not _same(old, new):
            self.set(path, new)

    def diff_struct(
        self, old: Any, new: Any, fields: list[tuple[str, str]], path: str | None
    ) -> None:
        """A ``msgspec`` Struct (an object with fixed keys, as the JSON shows it), compared
        field by field in C without turning either into dicts first."""
        outer, self.ops = self.ops, []
        later = []
        olds, news = _astuple(old), _astuple(new)
        # Most fields are unchanged (often the very same object): found in one pass.
        changed = [
            i
            for i, (before, value) in enumerate(zip(olds, news, strict=True))
            if before is not value and (before != value or type(before) is not type(value))
        ]
        for i in changed:
            before, value, key = olds[i], news[i], fields[i][1]
            # The field's key comes escaped (``_fields``): joined here without a call.
            where = key if path is None else f"{path}/{key}"
            if type(value) in _SCALARS:
                # A number, a string, a flag, null: set (most changed fields are these).
                self.ops.append([where, value])
            elif isinstance(value, list):
                self.diff(before, value, where)
            else:
                later.append((before, value, where))
        # Lists first: a move appended to the deal's moves is then only copied to the
        # table's top (``whole_or_parts``), not sent again key by key.
        for before, value, where in later:
            self.diff(before, value, where)
        inner, self.ops = self.ops, outer
        self.whole_or_parts(path, new, len(fields), inner)

    def whole_or_parts(self, path: str | None, new: Any, keys: int, inner: list[Op]) -> None:
        # Several fields of a small object changed (the trick's top move): set it whole
        # when that is shorter (a copy of the same value sent earlier is shortest).
        if (
            len(inner) > 1
            and path is not None
            and keys <= _SMALL
            and (_encode(new) in self._sent or len(_encode(inner)) > len(_encode(new)) + len(path))
        ):
            if self._sent:
                # Those ops are dropped: a value set again below is set by a new op.
                dropped = {id(op) for op in inner}
                self._sent = {k: op for k, op in self._sent.items() if id(op) not in dropped}
            self.set(path, new)
        else:
            self.ops += inner

    def set(self, path: str | None, value: Any) -> None:
        if path is not None and (
            value and (isinstance(value, dict | list | tuple) or _fields(type(value)) is not _PLAIN)
        ):
            text = _encode(value)
            if len(text) >= _COPY_OVER:
                sent = self._sent.get(text)
                if sent is not None:
                    # The same value again (a move in the trick, the deal's moves and
                    # the table's top): one more path of the op that sets it.
                    first = sent[0]
                    if isinstance(first, list):
                        first.append(path)
                    else:
                        sent[0] = [first, path]
                    return
                op = [path, value]
                self._sent[text] = op
                self.ops.append(op)
                return
        self.ops.append([path, value])

    def diff_list(self, old: list[Any], new: list[Any], path: str | None) -> None:
        # Its callers have found the two lists different (or diff them item by item).
        n_old, n_new = len(old), len(new)
        if n_new > n_old and _same(new[:n_old], old):
            start = n_old  # appended to (a deal's moves): one compare in C
        else:
            start = 0
            limit = min(n_old, n_new)
            while start < limit and _same(old[start], new[start]):
                start += 1
        if n_new == 0:
            self.ops.append([path, []])  # emptied (the aids once played): shorter than a splice
            return
        end_old, end_new = n_old, n_new
        while end_old > start and end_new > start and _same(old[end_old - 1], new[end_new - 1]):
            end_old -= 1
            end_new -= 1
        if end_old - start == end_new - start:
            # Same length in the middle: item by item (a count changes, a flag flips).
            for i in range(start, end_old):
                self.diff(old[i], new[i], _join(path, i))
        elif end_old == start == n_old and end_new == n_new == n_old + 1:
            # One item appended (a move): set one past the end.
            self.set(_join(path, start), new[start])
        else:
            self.ops.append([path, start, end_old - start, new[start:end_new]])


_astuple = msgspec.structs.astuple
_SCALARS = frozenset({int, str, bool, float, type(None)})
# What ``_fields`` answers for a type that is no Struct (a dict, a list, a number...).
_PLAIN: list[tuple[str, str]] = []
_STRUCT_FIELDS: dict[type, list[tuple[str, str]] | None] = {}


def _fields(cls: type) -> list[tuple[str, str]] | None:
    """A Struct type's (attribute, JSON key escaped for a path) pairs; None when its
    JSON may leave a field out (``omit_defaults``): that one is compared as plain
    values; ``_PLAIN`` for any other type.  Cached per type:
    ``isinstance(x, msgspec.Struct)`` is slow."""
    fields = _STRUCT_FIELDS.get(cls, _PLAIN)
    if fields is _PLAIN and cls not in _STRUCT_FIELDS:
        config: Any = getattr(cls, "__struct_config__", None)
        names: tuple[str, ...] = getattr(cls, "__struct_fields__", ())
        keys: tuple[str, ...] = getattr(cls, "__struct_encode_fields__", ())
        fields = _STRUCT_FIELDS[cls] = (
            _PLAIN
            if config is None
            else None
            if config.omit_defaults
            else [(name, _escape(key)) for name, key in zip(names, keys, strict=True)]
        )
    return fields


def patch(picture: Any, ops: list[Op]) -> Any:
    """``picture`` with ``ops`` applied (a new value; ``picture`` is left as it was).
    ``PatchError`` when an op does not fit.

    Only the lists and dicts on the paths the ops change are copied; the rest of the
    new picture shares the old one's, so neither may be changed in place afterwards
    (the mirrors never do: every change goes through a patch).  A whole copy per
    frame was most of a scripted client's CPU in bench/server.py."""
    if not isinstance(ops, list):
        raise PatchError("the ops are a list")
    writer = _Writer(picture)
    for op in ops:
        writer.apply(op)
    return writer.root


def copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy(v) for v in value]
    return value


def _parts(path: Any) -> list[str]:
    if path is None:
        return []
    if not isinstance(path, str):
        raise PatchError(f"a path is a string or null, not {path!r}")
    return path.split("/")


def _index(node: list[Any], part: str, extra: int = 0) -> int:
    if not (part.isascii() and part.isdigit()) or int(part) >= len(node) + extra:
        raise PatchError(f"no item {part!r} in a list of {len(node)}")
    return int(part)


def _key(node: Any, part: str) -> int | str:
    """Where ``part`` leads in ``node`` (a list index or a dict key that is there)."""
    if isinstance(node, list):
        return _index(node, part)
    if isinstance(node, dict):
        key = _unescape(part)
        if key not in node:
            raise PatchError(f"no key {key!r}")
        return key
    raise PatchError(f"cannot go into a {type(node).__name__} at {part!r}")


class _Writer:
    """One patch in progress: the new picture, and the containers it made itself
    (``_own``: their ids, each held there so that no id is reused), which alone it may
    change in place; any other container on a changed path is copied first."""

    __slots__ = ("_own", "root")

    def __init__(self, picture: Any) -> None:
        self.root = picture
        self._own: dict[int, Any] = {}

    def _mine(self, node: Any) -> Any:
        if not isinstance(node, list | dict) or id(node) in self._own:
            return node
        mine = list(node) if isinstance(node, list) else dict(node)
        self._own[id(mine)] = mine
        return mine

    def _writable(self, parts: list[str]) -> Any:
        """The container at ``parts``, made this patch's own along the whole path."""
        node = self.root = self._mine(self.root)
        for part in parts:
            key = _key(node, part)
            child = node[key] = self._mine(node[key])
            node = child
        return node

    def apply(self, op: Any) -> None:
        if not isinstance(op, list) or len(op) not in (1, 2, 4):
            raise PatchError(f"an op is a list of 1, 2 or 4 items, not {op!r}")
        if len(op) == 4:
            _splice(self._writable(_parts(op[0])), op[1], op[2], op[3])
            return
        if len(op) == 2 and isinstance(op[0], list):
            if not op[0]:
                raise PatchError("a set names at least one path")
            for path in op[0]:
                if path is None:
                    raise PatchError("the picture itself is set alone")
                self._set(path, op[1])
            return
        if len(op) == 1:
            self._remove(op[0])
        else:
            self._set(op[0], op[1])

    def _remove(self, path: Any) -> None:
        parts = _parts(path)
        if not parts:
            raise PatchError("the picture itself cannot be removed")
        parent = self._writable(parts[:-1])
        key = _unescape(parts[-1])
        if not isinstance(parent, dict) or key not in parent:
            raise PatchError(f"nothing to remove at {path!r}")
        del parent[key]

    def _set(self, path: Any, new: Any) -> None:
        parts = _parts(path)
        # A copy: one value may be set at several paths, and none may share it.
        value = copy(new)
        if not parts:
            self.root = value
            return
        parent = self._writable(parts[:-1])
        last = parts[-1]
        if isinstance(parent, dict):
            parent[_unescape(last)] = value
        elif isinstance(parent, list):
            index = _index(parent, last, extra=1)
            if index == len(parent):
                parent.append(value)
            else:
                parent[index] = value
        else:
            raise PatchError(f"{path!r} goes through a {type(parent).__name__}")


def _splice(target: Any, index: Any, count: Any, items: Any) -> None:
    if not isinstance(target, list):
        raise PatchError("a splice is made on a list")
    if not _count(index) or not _count(count) or index + count > len(target):
        raise PatchError(f"cannot remove {count!r} at {index!r} of {len(target)}")
    if not isinstance(items, list):
        raise PatchError(f"a splice inserts a list, not {items!r}")
    target[index : index + count] = copy(items)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
