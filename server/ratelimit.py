"""Token buckets: ``rate`` events a second on average, bursts of up to ``burst``.

One ``RateLimiter`` holds a bucket per key (a client address, a seat).  Keys
whose bucket has refilled completely carry no information and are dropped when
the table grows, so an attacker cycling through keys cannot grow it without
bound either.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

__all__ = ["RateLimiter"]

# Above this many keys, full (idle) buckets are swept before adding another.
_SWEEP_AT = 10_000


class RateLimiter:
    def __init__(
        self, rate: float, burst: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limiter needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        # key -> (tokens, when they were counted)
        self._buckets: dict[Hashable, tuple[float, float]] = {}

    def allow(self, key: Hashable, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens from ``key``'s bucket; False (nothing taken) when too few."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= _SWEEP_AT:
                self._sweep(now)
            tokens = self.burst
        else:
            tokens = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
        if tokens < cost:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - cost, now)
        return True

    def retry_after(self, key: Hashable, cost: float = 1.0) -> float:
        """Seconds until ``allow(key, cost)`` would succeed."""
        bucket = self._buckets.get(key)
        if bucket is None:
            return 0.0
        tokens = min(self.burst, bucket[0] + (self._clock() - bucket[1]) * self.rate)
        return max(0.0, (cost - tokens) / self.rate)

    def forget(self, key: Hashable) -> None:
        self._buckets.pop(key, None)

    def __len__(self) -> int:
        return len(self._buckets)

    def _sweep(self, now: float) -> None:
        full = [
            key
            for key, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
