"""Secrets: table ids and seat tokens.

Redis keeps only a token's SHA-256, so a leaked dump does not let anyone sit
down at a table; comparing digests with ``hmac.compare_digest`` keeps the check
constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence

__all__ = [
    "hash_token",
    "invite_path",
    "new_table_id",
    "new_token",
    "seat_for_token",
    "valid_table_id",
]

_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def new_table_id() -> str:
    """A fresh, unguessable table id (22 URL-safe characters)."""
    return secrets.token_urlsafe(16)


def new_token() -> str:
    """A fresh seat token (32 URL-safe characters); only its hash is stored."""
    return secrets.token_urlsafe(24)


def valid_table_id(table_id: str) -> bool:
    """Table ids become Redis key parts: only the shapes ``new_table_id`` makes pass."""
    return _TABLE_ID.fullmatch(table_id) is not None


def hash_token(token: str) -> str:
    """The SHA-256 hex digest Redis keeps in place of ``token``."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def seat_for_token(token: str, seat_hashes: Sequence[str | None]) -> int | None:
    """The seat whose stored hash matches ``token``, comparing against every seat."""
    digest = hash_token(token)
    found: int | None = None
    # No early exit: the time taken does not depend on which seat (if any) matched.
    for seat, stored in enumerate(seat_hashes):
        if stored is not None and hmac.compare_digest(digest, stored) and found is None:
            found = seat
    return found


def invite_path(table_id: str, seat: int | None, token: str) -> str:
    """The link to hand out: a seat invite, or the watch link when ``seat`` is None."""
    key = "watch" if seat is None else "token"
    return f"/#table={table_id}&{key}={token}"
