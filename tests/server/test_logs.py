"""Log lines as written: repeats summarised without raw placeholders, JSON rendered."""

from __future__ import annotations

import json
import logging

from server.logs import WINDOW_SECONDS, JsonFormatter, RepeatLimit


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
