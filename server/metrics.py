"""What operators can measure: ``GET /metrics`` in the Prometheus text format.

Every metric this server exports is defined here, once, and the rest of the
code records through the small functions below (``action_accepted``,
``refused``, ``rate_limited``, ``timed``...), so a metric's name and labels
live in one place.  prometheus-client does the bookkeeping and the text
format; its default registry also brings the process collectors (open file
descriptors, resident memory, CPU seconds) that a server under attack should
be watched by.

Adding a metric: define it below with the ``pdk_`` prefix, add a recording
function next to the others, and list it in docs/operations.md ("Metrics").

The four recorded on every action (actions, action latency, bot decisions,
Redis latency) are ``_Tally`` objects instead of prometheus-client's own
metrics: plain numbers that only the event loop's thread changes, turned into
metric families when scraped.  prometheus-client's metrics take a lock per
change (several per observation of a histogram) for threads this server does
not have on that path, and the per-action work is what bounds how many tables
a process holds (docs/performance.md).
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    Counter,
    Gauge,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = [
    "CONTENT_TYPE",
    "action_accepted",
    "bot_decided",
    "game_socket_closed",
    "game_socket_opened",
    "log_lines_suppressed",
    "observe_action_latency",
    "rate_limited",
    "redis_restarted",
    "redis_timed",
    "refused",
    "render",
    "strong_bot_fell_back",
    "track",
]

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Game actions take 0.1-50 ms; the long tail is what an attack shows up in.
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_REDIS_BUCKETS = (0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0)
_BOT_BUCKETS = (0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class _Tally(Collector):
    """A labelled counter (no ``buckets``) or histogram kept in plain Python numbers.

    Only the event loop's thread records; a scrape copies each series (one
    C-level copy, so a concurrent scrape from a worker thread never sees a
    half-made one).  A histogram's series is its bucket counts (one per upper
    bound, then one for anything above the last) and their sum.
    """

    def __init__(
        self, name: str, doc: str, labels: tuple[str, ...], buckets: tuple[float, ...] = ()
    ) -> None:
        self._name = name
        self._doc = doc
        self._labels = labels
        self._bounds = buckets
        self._series: dict[tuple[str, ...], list[float]] = {}
        REGISTRY.register(self)

    def inc(self, labels: tuple[str, ...]) -> None:
        series = self._series.get(labels)
        if series is None:
            series = self._series[labels] = [0.0]
        series[0] += 1

    def observe(self, labels: tuple[str, ...], value: float) -> None:
        series = self._series.get(labels)
        if series is None:
            series = self._series[labels] = [0.0] * (len(self._bounds) + 2)
        # A value equal to a bound counts in that bound's bucket ("le", less or equal).
        series[bisect_left(self._bounds, value)] += 1
        series[-1] += value

    def collect(self) -> Iterator[Metric]:
        series = list(self._series.items())
        if not self._bounds:
            counter = CounterMetricFamily(self._name, self._doc, labels=self._labels)
            for labels, (count,) in series:
                counter.add_metric(labels, count)
            yield counter
            return
        histogram = HistogramMetricFamily(self._name, self._doc, labels=self._labels)
        uppers = [*map(str, self._bounds), "+Inf"]
        for labels, values in series:
            counts = values[:-1]
            cumulative, running = [], 0.0
            for upper, count in zip(uppers, counts, strict=True):
                running += count
                cumulative.append((upper, running))
            histogram.add_metric(labels, cumulative, values[-1])
        yield histogram


_LIVE_TABLES = Gauge("pdk_live_tables", "Tables whose room is loaded in this process")
_OPEN_SOCKETS = Gauge("pdk_open_game_sockets", "Game WebSockets seated at a table")
_OPEN_CONNECTIONS = Gauge("pdk_open_connections", "TCP connections open (HTTP and WebSocket)")
_ACTIONS = _Tally(
    "pdk_actions", "Actions accepted and stored, by kind and who sent them", ("kind", "by")
)
_REFUSALS = Counter("pdk_refusals_total", "Frames and actions refused, by reason code", ["reason"])
_RATE_LIMITED = Counter(
    "pdk_rate_limited_total", "Requests refused by a limit, by limit name", ["limit"]
)
_ACTION_LATENCY = _Tally(
    "pdk_action_latency_seconds",
    "From a seat's frame arriving to the new state being queued to every seat",
    (),
    _LATENCY_BUCKETS,
)
_REDIS_LATENCY = _Tally(
    "pdk_redis_latency_seconds", "Redis round trips, by operation", ("op",), _REDIS_BUCKETS
)
_BOT_DECISION = _Tally(
    "pdk_bot_decision_seconds", "Bot thinking time, by level", ("level",), _BOT_BUCKETS
)
_STRONG_FALLBACKS = Counter(
    "pdk_strong_bot_fallbacks_total",
    "Strong-bot decisions that failed or ran out of time and played the normal bot's choice",
)
_REDIS_RESTARTS = Counter(
    "pdk_redis_restarts_total", "Times the embedded redis-server was restarted after it died"
)
_LOG_SUPPRESSED = Counter(
    "pdk_log_lines_suppressed_total", "Repeated log lines dropped by the log rate limit"
)


def track(
    *,
    live_tables: Callable[[], float] | None = None,
    open_connections: Callable[[], float] | None = None,
) -> None:
    """Let the gauges read the current numbers from their owners at scrape time."""
    if live_tables is not None:
        _LIVE_TABLES.set_function(live_tables)
    if open_connections is not None:
        _OPEN_CONNECTIONS.set_function(open_connections)


def game_socket_opened() -> None:
    _OPEN_SOCKETS.inc()


def game_socket_closed() -> None:
    _OPEN_SOCKETS.dec()


# Labelled children, looked up once per label set: ``labels()`` costs a lock and
# validation per call, paid on every action otherwise.  Label values come from
# fixed sets (kinds, reason codes, levels, operations), so these stay small.
_CHILDREN: dict[tuple[object, ...], Any] = {}


def _child(metric: Counter, *labels: str) -> Any:
    key = (metric, *labels)
    child = _CHILDREN.get(key)
    if child is None:
        child = _CHILDREN[key] = metric.labels(*labels)
    return child


def action_accepted(kind: str, *, by_bot: bool) -> None:
    _ACTIONS.inc((kind, "bot") if by_bot else (kind, "human"))


def refused(reason: str) -> None:
    _child(_REFUSALS, reason).inc()


def rate_limited(limit: str) -> None:
    _child(_RATE_LIMITED, limit).inc()


def observe_action_latency(seconds: float) -> None:
    _ACTION_LATENCY.observe((), seconds)


def redis_timed(op: str) -> _RedisTimed:
    """Time one Redis operation (failures included: a timeout is latency too)."""
    return _RedisTimed(op)


class _RedisTimed:
    """``redis_timed``'s block: a plain class, not a generator (every append enters one)."""

    __slots__ = ("_labels", "_started")

    def __init__(self, op: str) -> None:
        self._labels = (op,)
        self._started = time.perf_counter()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _REDIS_LATENCY.observe(self._labels, time.perf_counter() - self._started)


def bot_decided(level: str, seconds: float) -> None:
    _BOT_DECISION.observe((level,), seconds)


def strong_bot_fell_back() -> None:
    _STRONG_FALLBACKS.inc()


def redis_restarted() -> None:
    _REDIS_RESTARTS.inc()


def log_lines_suppressed(count: int) -> None:
    _LOG_SUPPRESSED.inc(count)


def render() -> bytes:
    """The whole registry in the Prometheus text format."""
    return generate_latest(REGISTRY)
