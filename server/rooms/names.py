"""Player names: what a person may call themselves at a table.

A name is shown to every seat and spoken by screen readers, so it is plain text:
1 to ``MAX_NAME_CHARS`` characters once trimmed, no markup characters, no control
or invisible formatting characters.  The same check serves ``POST /api/tables``
and the ``rename`` message.
"""

from __future__ import annotations

import unicodedata

__all__ = ["MARKUP", "MAX_NAME_CHARS", "MAX_RAW_NAME_CHARS", "NameRefused", "clean_name"]

MAX_NAME_CHARS = 24
# The longest raw text a client may send as a name (the create request and the
# ``rename`` message), so that nothing longer is ever normalised.
MAX_RAW_NAME_CHARS = 64
MARKUP = frozenset("<>&\"'`")


class NameRefused(ValueError):
    """The name is empty, too long, or holds markup or control characters."""


def clean_name(raw: str) -> str:
    """``raw`` trimmed and NFC-normalised; raises ``NameRefused`` saying what is wrong."""
    if len(raw) > MAX_RAW_NAME_CHARS:
        raise NameRefused(f"a name has at most {MAX_NAME_CHARS} characters, not {len(raw)}")
    name = unicodedata.normalize("NFC", raw).strip()
    if not name:
        raise NameRefused("a name needs at least one visible character")
    if len(name) > MAX_NAME_CHARS:
        raise NameRefused(f"a name has at most {MAX_NAME_CHARS} characters, not {len(name)}")
    if bad := sorted({ch for ch in name if ch in MARKUP}):
        raise NameRefused(f"a name may not hold markup characters ({' '.join(bad)})")
    # Category C: control, format (invisible direction marks), surrogates, private, unassigned.
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise NameRefused("a name may not hold control or invisible characters")
    return name
