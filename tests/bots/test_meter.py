"""The bots report each decision to the hooks the process installs, and import no metrics."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

import server.bots as bots
from server.bots.meter import METER, Meter
from server.engine import BOT_HINTS, PRESETS, new_match, seat_view


@pytest.fixture
def reports() -> Iterator[list[object]]:
    seen: list[object] = []
    before = Meter(METER.decided, METER.fell_back, METER.thinking)

    @contextlib.contextmanager
    def thinking() -> Iterator[None]:
        seen.append("thinking")
        yield

    bots.report_to(
        decided=lambda level, seconds: seen.append((level, seconds >= 0)),
        fell_back=lambda: seen.append("fell back"),
        thinking=thinking,
    )
    yield seen
    bots.report_to(decided=before.decided, fell_back=before.fell_back, thinking=before.thinking)


def test_an_inline_decision_reports_its_thinking_and_its_level(reports: list[object]) -> None:
    state = new_match(PRESETS["classic"], 21, 1)
    bots.decide_now("normal", 3, seat_view(state, state.deal.turn, hints=BOT_HINTS))
    assert reports == ["thinking", ("normal", True)]


async def test_a_strong_bot_that_falls_back_reports_it(
    reports: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_pool() -> None:
        raise RuntimeError("pool is gone")

    monkeypatch.setattr(bots, "get_pool", broken_pool)
    state = new_match(PRESETS["classic"], 21, 1)
    await bots.decide("strong", 3, seat_view(state, state.deal.turn, hints=BOT_HINTS), 0.1)
    assert reports == ["thinking", "fell back", ("strong", True)]
