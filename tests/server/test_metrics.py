"""The metrics recorded on every action: counters and histograms as Prometheus reads them."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from server import metrics


def _samples() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for s in family.samples
    }


def _delta(
    before: dict[tuple[str, tuple[tuple[str, str], ...]], float],
    after: dict[tuple[str, tuple[tuple[str, str], ...]], float],
    name: str,
    **labels: str,
) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_actions_are_counted_by_kind_and_by_who_sent_them() -> None:
    before = _samples()
    metrics.action_accepted("play", by_bot=True)
    metrics.action_accepted("play", by_bot=True)
    metrics.action_accepted("pass", by_bot=False)
    after = _samples()
    assert _delta(before, after, "pdk_actions_total", kind="play", by="bot") == 2
    assert _delta(before, after, "pdk_actions_total", kind="pass", by="human") == 1
    assert _delta(before, after, "pdk_actions_total", kind="pass", by="bot") == 0


def test_a_latency_on_a_bucket_bound_counts_in_that_bucket_and_buckets_are_cumulative() -> None:
    before = _samples()
    for seconds in (0.001, 0.003, 0.004, 60.0):
        metrics.observe_action_latency(seconds)
    after = _samples()

    def bucket(le: str) -> float:
        return _delta(before, after, "pdk_action_latency_seconds_bucket", le=le)

    assert bucket("0.001") == 1
    assert bucket("0.0025") == 1
    assert bucket("0.005") == 3
    assert bucket("5.0") == 3
    assert bucket("+Inf") == 4
    assert _delta(before, after, "pdk_action_latency_seconds_count") == 4
    assert abs(_delta(before, after, "pdk_action_latency_seconds_sum") - 60.008) < 1e-9


def test_bot_decisions_and_redis_round_trips_are_timed_per_label() -> None:
    before = _samples()
    metrics.bot_decided("easy", 0.0002)
    metrics.bot_decided("normal", 0.002)
    with metrics.redis_timed("append"):
        pass
    after = _samples()
    name = "pdk_bot_decision_seconds_bucket"
    assert _delta(before, after, name, level="easy", le="0.0005") == 1
    assert _delta(before, after, name, level="normal", le="0.001") == 0
    assert _delta(before, after, name, level="normal", le="0.005") == 1
    assert _delta(before, after, "pdk_redis_latency_seconds_count", op="append") == 1
