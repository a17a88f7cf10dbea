"""The digest a delta carries: CRC-32 of a picture's canonical JSON.

Canonical JSON: keys sorted, no spaces, ``msgspec``'s string escapes (which are
``JSON.stringify``'s); an integer a JavaScript number cannot hold exactly (the
fairness seed) written as ``null``.  The digest is that JSON's CRC-32 as 8
lowercase hex digits.  docs/protocol.md ("Deltas") says why CRC-32.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

__all__ = [
    "MAX_SAFE_INTEGER",
    "canonical",
    "digest",
    "digest_of",
    "picture_digest",
    "public_crc",
    "seat_digest",
    "table_prefix",
    "wire_json",
]

# The largest integer a JavaScript number holds exactly (Number.MAX_SAFE_INTEGER).
MAX_SAFE_INTEGER = (1 << 53) - 1

_canonical = msgspec.json.Encoder(order="sorted")
# Sixteen digits in a row may be a number beyond MAX_SAFE_INTEGER (digits in a string
# are a false alarm the exact walk then clears): every digit read as a 9, then one find,
# is a few times cheaper than a regular expression.
_NINES = bytes.maketrans(b"0123456789", b"9999999999")
_SIXTEEN_NINES = b"9" * 16


def canonical(picture: Any) -> bytes:
    """The picture's canonical JSON, the bytes its digest is taken of (see the module)."""
    data = _canonical.encode(picture)
    if data.translate(_NINES).find(_SIXTEEN_NINES) >= 0:
        plain = msgspec.to_builtins(picture)
        if _has_unsafe_int(plain):
            data = _canonical.encode(_nulled(plain))
    return data


def digest(picture: Any) -> str:
    """CRC-32 of ``canonical(picture)``, as 8 lowercase hex digits."""
    return f"{zlib.crc32(canonical(picture)):08x}"


def digest_of(parts: dict[str, bytes]) -> str:
    """``digest`` of an object whose values' ``canonical`` JSON is given (the table
    info's is made once for every seat), its CRC-32 chained over the pieces."""
    crc = 0
    separator = b"{"
    for key in sorted(parts):
        crc = zlib.crc32(separator + _canonical.encode(key) + b":", crc)
        crc = zlib.crc32(parts[key], crc)
        separator = b","
    return f"{zlib.crc32(b'}' if parts else b'{}', crc):08x}"


def _unsafe(value: Any) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    )


def _has_unsafe_int(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_unsafe_int(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_unsafe_int(v) for v in value)
    return _unsafe(value)


def _nulled(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _nulled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nulled(v) for v in value]
    return None if _unsafe(value) else value


_plain = msgspec.json.Encoder()


def wire_json(wire: list[Any]) -> bytes:
    """A view's wire form's canonical JSON: its plain JSON, for it holds no object (no
    key to sort) and no integer beyond ``MAX_SAFE_INTEGER`` (``server.deltas.wire``)."""
    return _plain.encode(wire)


def table_prefix(table_canonical: bytes) -> int:
    """The CRC-32 of a picture's canonical JSON up to its view, ``{"t":<table>,"v":``:
    the same for every seat's picture of one table info."""
    return zlib.crc32(b',"v":', zlib.crc32(table_canonical, zlib.crc32(b'{"t":')))


def picture_digest(prefix: int, view_json: bytes) -> str:
    """``digest({"t": table, "v": wire})`` from ``table_prefix(canonical(table))`` and
    ``wire_json(wire)``: two CRC-32 steps per seat."""
    return f"{zlib.crc32(b'}', zlib.crc32(view_json, prefix)):08x}"


def public_crc(prefix: int, public: list[Any]) -> int:
    """The CRC-32 of a picture's canonical JSON up to the end of its view's public fields
    (``{"t":<table>,"v":[f0,...,f15``) from ``prefix = table_prefix(...)`` and the wire
    form's public fields: the same for every seat of one table at one version."""
    return zlib.crc32(memoryview(wire_json(public))[:-1], prefix)


def seat_digest(crc: int, seat: list[Any] | None) -> str:
    """``digest`` of the picture whose wire form is the public fields ``public_crc``
    covered then ``seat``'s own fields (None: a spectator's, which has none)."""
    if seat is None:
        return f"{zlib.crc32(b']}', crc):08x}"
    crc = zlib.crc32(memoryview(wire_json(seat))[1:], zlib.crc32(b",", crc))
    return f"{zlib.crc32(b'}', crc):08x}"
