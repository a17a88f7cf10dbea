"""Quick reactions: a fixed set of emotes (no free text, so nothing to moderate), rate limited.

Each seat (and each spectator socket) has a token bucket: ``EMOTE_BURST`` emotes at
once, then one more every ``EMOTE_REFILL_SECONDS``.  The clock is passed in.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

__all__ = ["EMOTES", "EMOTE_BURST", "EMOTE_REFILL_SECONDS", "Emote", "RateLimit"]

Emote: TypeAlias = Literal["thumbs_up", "laugh", "wow", "sad", "angry", "clap", "think", "wave"]
EMOTES: tuple[str, ...] = get_args(Emote)
EMOTE_BURST = 3
EMOTE_REFILL_SECONDS = 2.0


class RateLimit:
    """A token bucket: ``allow(now)`` spends a token if one is left."""

    def __init__(self, burst: int = EMOTE_BURST, refill_seconds: float = EMOTE_REFILL_SECONDS):
        if burst < 1 or refill_seconds <= 0:
            raise ValueError("a rate limit needs a burst of at least 1 and a positive refill")
        self._burst = burst
        self._refill = refill_seconds
        self._tokens = float(burst)
        self._at: float | None = None

    def allow(self, now: float) -> bool:
        """Whether one more emote may go out at ``now`` (spends a token if so)."""
        if self._at is not None:
            self._tokens = min(self._burst, self._tokens + (now - self._at) / self._refill)
        self._at = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

    def retry_after(self, now: float) -> float:
        """Seconds until ``allow`` would succeed."""
        tokens = self._tokens
        if self._at is not None:
            tokens = min(self._burst, tokens + (now - self._at) / self._refill)
        return max(0.0, (1 - tokens) * self._refill)
