"""A bounded memo for pure functions of hashable, immutable arguments.

Why not ``functools.lru_cache``: each of its entries is a linked-list node the
cyclic garbage collector tracks, so a cache of a few hundred thousand entries
makes every full collection pause the whole process for 50-200 ms (measured in
the server under load).  A plain dict of immutable keys and values costs the
collector almost nothing.  When full, the memo drops its oldest 1/32 (a dict
keeps insertion order): for position-shaped keys a recent-use order buys
little, and dropping a small slice keeps the pause small too.  Clearing a
full 2^18-entry memo at once frees a quarter of a million tuples in one go,
about 60 ms with the process stopped: in the server every table waits for it,
and in a strong bot's decision it overran the budget (max 270 ms at a 100 ms
budget; dropping an eighth at a time: 134-138 ms; 1/16: 113-119 ms; 1/32:
108-113 ms, docs/bots.md).

The wrapper is a plain closure taking positional arguments only: a keyword
argument is refused (a ``TypeError``) rather than left out of the key, and a
call costs one dict lookup on a hit (the search makes millions).
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast

__all__ = ["EVICT_FRACTION", "Memoised", "memo", "memo_name", "memo_sizes", "memos"]

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Memoised(Protocol, Generic[P, R_co]):
    """A memoised function: call it with positional arguments; clear or size its cache."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co: ...

    @property
    def __wrapped__(self) -> Callable[P, R_co]: ...

    def cache_clear(self) -> None:
        """Forget every entry."""

    def cache_len(self) -> int:
        """How many entries the cache holds."""


# A full memo drops 1/EVICT_FRACTION of its entries, the oldest first.
EVICT_FRACTION = 32

# What a lookup returns for a key the cache does not hold (no function returns it).
_MISSING: Any = object()


def _drop_oldest(cache: dict[Any, Any], count: int) -> None:
    for key in list(itertools.islice(cache, count)):
        del cache[key]


def memo(maxsize: int) -> Callable[[Callable[P, R]], Memoised[P, R]]:
    """Memoise a pure function on its positional arguments, up to ``maxsize`` entries."""

    def wrap(fn: Callable[P, R]) -> Memoised[P, R]:
        cache: dict[Any, Any] = {}
        lookup = cache.get
        plain: Any = fn
        params = inspect.signature(fn).parameters.values()
        if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
            raise TypeError(f"{fn.__name__}: memo takes plain positional parameters only")
        evict = max(1, maxsize // EVICT_FRACTION)
        call: Any
        if len(params) == 1:
            # One argument is its own key: no tuple to build per call.
            def call(arg: Any) -> Any:
                value = lookup(arg, _MISSING)
                if value is not _MISSING:
                    return value
                value = plain(arg)
                if len(cache) >= maxsize:
                    _drop_oldest(cache, evict)
                cache[arg] = value
                return value

        else:

            def call(*args: Any) -> Any:
                value = lookup(args, _MISSING)
                if value is not _MISSING:
                    return value
                value = plain(*args)
                if len(cache) >= maxsize:
                    _drop_oldest(cache, evict)
                cache[args] = value
                return value

        functools.update_wrapper(call, fn)
        call.cache_clear = cache.clear
        call.cache_len = cache.__len__
        memoised = cast(Memoised[P, R], call)
        _MEMOS.append(memoised)
        return memoised

    return wrap


# Every memo of the process: they wrap module-level functions and live as long.
_MEMOS: list[Memoised[..., Any]] = []


def memos() -> tuple[Memoised[..., Any], ...]:
    """Every memo of the process (for diagnostics: ``bench/server.py`` sizes them)."""
    return tuple(_MEMOS)


def memo_name(m: Memoised[..., Any]) -> str:
    """``module.function`` of a memo, as ``memo_sizes`` names it."""
    return f"{m.__wrapped__.__module__}.{m.__wrapped__.__name__}"


def memo_sizes() -> dict[str, int]:
    """Entries held by each memo of the process (caches shared by every table)."""
    return {memo_name(m): m.cache_len() for m in _MEMOS}
