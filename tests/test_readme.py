"""README's Quick start: exactly two lines, one that installs the server alone and starts
it, one that installs the test extras and runs the suite; .ci/run runs that second line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quick_start_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line for line in block.splitlines() if line.strip()]


def test_quick_start_is_two_lines_server_alone_then_tests() -> None:
    serve, test = (re.sub(r"\s+#.*$", "", line) for line in quick_start_lines())
    # Each makes its own virtual environment: Debian's Python refuses a bare pip install.
    for line in (serve, test):
        assert line.startswith("python3 -m venv .venv && .venv/bin/pip install ")
    assert ".venv/bin/pip install . &&" in serve
    assert "[test]" not in serve
    assert serve.endswith(".venv/bin/paodekuai serve --client-dir client")
    assert ".venv/bin/pip install '.[test]' &&" in test
    assert test.endswith(".venv/bin/python -m pytest")


def test_ci_runs_exactly_the_readmes_test_line() -> None:
    script = (ROOT / ".ci" / "run").read_text("utf-8")
    extract = re.search(r"test_command=\$\((.*)\)\n", script)
    assert extract is not None
    assert 'eval "$test_command"' in script
    found = subprocess.run(
        ["bash", "-c", extract.group(1)], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert found == re.sub(r"\s+#.*$", "", quick_start_lines()[1])
