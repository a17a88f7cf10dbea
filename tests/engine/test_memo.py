"""The engine's memo caches pure functions on their positional arguments only."""

from __future__ import annotations

import pytest

from server.engine.memo import EVICT_FRACTION, memo


def test_memo_calls_the_function_once_per_distinct_arguments() -> None:
    calls: list[tuple[int, int]] = []

    @memo(8)
    def add(a: int, b: int) -> int:
        calls.append((a, b))
        return a + b

    assert add(1, 2) == add(1, 2) == 3
    assert add(2, 1) == 3
    assert calls == [(1, 2), (2, 1)]


def test_memo_refuses_keyword_arguments_instead_of_leaving_them_out_of_the_key() -> None:
    @memo(8)
    def scale(x: int, factor: int = 2) -> int:
        return x * factor

    @memo(8)
    def double(x: int) -> int:
        return 2 * x

    assert scale(3, 3) == 9
    with pytest.raises(TypeError):
        scale(3, factor=5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        double(x=3)  # type: ignore[call-arg]


def test_memo_refuses_to_wrap_a_function_with_keyword_only_parameters() -> None:
    def pick(x: int, *, high: bool) -> int:
        return x if high else -x

    with pytest.raises(TypeError, match="positional"):
        memo(8)(pick)


def test_a_full_memo_drops_only_its_oldest_slice() -> None:
    calls: list[int] = []
    size = 4 * EVICT_FRACTION  # a full memo drops its oldest 4 entries

    @memo(size)
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    for x in range(size):
        square(x)
    assert square.cache_len() == size
    square(size)  # full: 0..3 dropped, then this one stored
    assert square.cache_len() == size - 3
    calls.clear()
    for x in range(4, size + 1):
        square(x)
    assert calls == []  # every newer entry survived
    square(3)
    assert calls == [3]
    square.cache_clear()
    assert square.cache_len() == 0


def test_a_tiny_full_memo_drops_at_least_one_entry() -> None:
    @memo(2)
    def square(x: int) -> int:
        return x * x

    square(1)
    square(2)
    square(3)
    assert square.cache_len() == 2
