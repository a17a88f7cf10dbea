"""The emote rate limit, with the time passed in."""

from __future__ import annotations

import pytest

from server.rooms.emotes import EMOTES, RateLimit


def test_the_emote_set_is_small_and_fixed() -> None:
    assert "thumbs_up" in EMOTES
    assert 4 <= len(EMOTES) <= 12


def test_a_burst_is_allowed_then_one_per_refill_period() -> None:
    limit = RateLimit(burst=3, refill_seconds=2.0)
    assert [limit.allow(100.0) for _ in range(4)] == [True, True, True, False]
    assert limit.retry_after(100.0) == pytest.approx(2.0)
    assert not limit.allow(101.0)
    assert limit.allow(102.0)
    assert not limit.allow(102.0)


def test_a_long_quiet_time_refills_no_more_than_the_burst() -> None:
    limit = RateLimit(burst=2, refill_seconds=1.0)
    assert limit.allow(0.0)
    assert [limit.allow(1000.0) for _ in range(3)] == [True, True, False]


def test_a_limit_needs_a_positive_burst_and_refill() -> None:
    with pytest.raises(ValueError, match="rate limit"):
        RateLimit(burst=0)
    with pytest.raises(ValueError, match="rate limit"):
        RateLimit(refill_seconds=0)
