"""The log as written (server.logs): repeated lines summarised without raw placeholders,
JSON rendered, and refused requests' access lines held to their own limit."""

from __future__ import annotations

import json
import logging

from server.logs import ACCESS_LOGGER, WINDOW_SECONDS, JsonFormatter, RepeatLimit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def access_line(status: int, path: str = "/nope") -> logging.LogRecord:
    """An access line as uvicorn writes it: the status is the last argument."""
    return logging.LogRecord(
        ACCESS_LOGGER,
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("203.0.113.9:5000", "GET", path, "1.1", status),
        None,
    )


def test_refused_requests_access_lines_are_written_at_most_the_limit_a_minute() -> None:
    clock = Clock()
    limit = RepeatLimit(10, refused_access_limit=3, clock=clock)
    kept = [limit.filter(access_line(404, f"/nope{i}")) for i in range(100)]
    assert kept == [True] * 3 + [False] * 97
    # Other refusals share the budget: a different status or path is no way around it.
    assert not limit.filter(access_line(400))
    assert not limit.filter(access_line(405, "/api/tables"))


def test_served_requests_access_lines_are_all_written() -> None:
    limit = RepeatLimit(10, refused_access_limit=0, clock=Clock())
    assert all(limit.filter(access_line(200, f"/page{i}")) for i in range(100))
    assert all(limit.filter(access_line(304)) for _ in range(100))
    assert not limit.filter(access_line(404))


def test_a_minute_later_refused_lines_are_written_again_and_the_dropped_are_counted(
    caplog: logging.LogCaptureFixture,
) -> None:
    clock = Clock()
    limit = RepeatLimit(10, refused_access_limit=2, clock=clock)
    for _ in range(50):
        limit.filter(access_line(404))
    clock.now = 61.0
    with caplog.at_level(logging.WARNING, logger="server.logs"):
        assert limit.filter(access_line(404))
    summaries = [r.getMessage() for r in caplog.records if r.name == "server.logs"]
    assert len(summaries) == 1
    assert "suppressed 48 repeats of uvicorn.access" in summaries[0]
    assert "refused requests" in summaries[0]


def test_the_refused_budget_defaults_to_the_repeat_limit() -> None:
    limit = RepeatLimit(4, clock=Clock())
    assert [limit.filter(access_line(404)) for _ in range(6)] == [True] * 4 + [False] * 2


class Lines(logging.Handler):
    def __init__(self, formatter: logging.Formatter) -> None:
        super().__init__()
        self.setFormatter(formatter)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_the_summary_of_dropped_repeats_shows_the_message_not_its_placeholders() -> None:
    now = [0.0]
    lines = Lines(logging.Formatter("%(name)s: %(message)s"))
    lines.addFilter(RepeatLimit(2, clock=lambda: now[0]))
    for name in ("server.test_logs", "server.logs"):
        logging.getLogger(name).addHandler(lines)
    log = logging.getLogger("server.test_logs")
    try:
        for n in range(5):
            log.warning("table %s: lease lost after %.1fs (100%% gone)", f"t{n}", n / 3)
        now[0] = WINDOW_SECONDS
        log.warning("another line, in the next minute")
    finally:
        for name in ("server.test_logs", "server.logs"):
            logging.getLogger(name).removeHandler(lines)
    assert lines.lines[:2] == [
        "server.test_logs: table t0: lease lost after 0.0s (100% gone)",
        "server.test_logs: table t1: lease lost after 0.3s (100% gone)",
    ]
    assert lines.lines[2] == (
        "server.logs: suppressed 3 repeats of server.test_logs: "
        "table …: lease lost after …s (100% gone)"
    )
    assert "%" not in lines.lines[2].replace("100%", "")


def test_a_json_line_holds_the_rendered_message() -> None:
    record = logging.LogRecord(
        "server.app", logging.WARNING, __file__, 1, "cannot read table %s: %r", ("t1", "x"), None
    )
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "cannot read table t1: 'x'"
    assert (line["level"], line["logger"]) == ("warning", "server.app")
