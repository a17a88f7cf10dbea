"""A bounded memo for pure functions of hashable, immutable arguments.

Why not ``functools.lru_cache``: each of its entries is a linked-list node the
cyclic garbage collector tracks, so a cache of a few hundred thousand entries
makes every full collection pause the whole process for 50-200 ms (measured in
the server under load).  A plain dict of immutable keys and values costs the
collector almost nothing.  When full, the memo starts over: for position-shaped
keys a recent-use order buys little, and clearing is O(1) amortised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

__all__ = ["Memo", "memo"]

P = ParamSpec("P")
R = TypeVar("R")


class Memo(Generic[P, R]):
    """Calls ``fn`` once per distinct positional arguments, up to ``maxsize`` entries."""

    def __init__(self, fn: Callable[P, R], maxsize: int) -> None:
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.maxsize = maxsize
        self._cache: dict[Any, R] = {}

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        key = args[0] if len(args) == 1 else args
        cache = self._cache
        try:
            return cache[key]
        except KeyError:
            pass
        value = self.__wrapped__(*args, **kwargs)
        if len(cache) >= self.maxsize:
            cache.clear()
        cache[key] = value
        return value

    def cache_clear(self) -> None:
        self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)


def memo(maxsize: int) -> Callable[[Callable[P, R]], Memo[P, R]]:
    def wrap(fn: Callable[P, R]) -> Memo[P, R]:
        return Memo(fn, maxsize)

    return wrap
