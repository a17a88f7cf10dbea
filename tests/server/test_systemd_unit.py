"""deploy/paodekuai.service: systemd reads it without a complaint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent.parent.parent / "deploy" / "paodekuai.service"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_the_shipped_unit_verifies_and_is_hardened(tmp_path: Path) -> None:
    text = UNIT.read_text()
    # The unit runs the venv's paodekuai; verify it against this one's.
    here = Path(sys.executable).parent / "paodekuai"
    copy = tmp_path / UNIT.name
    copy.write_text(text.replace("/opt/paodekuai/bin/paodekuai", str(here)))
    verified = subprocess.run(
        ["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stderr.strip() == ""
    for option in ("NoNewPrivileges=yes", "ProtectSystem=strict", "CapabilityBoundingSet=\n"):
        assert option in text
