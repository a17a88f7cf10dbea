"""Rooms deal in engine actions and seat views: the wire format stays beside the protocol."""

from __future__ import annotations

import ast
from pathlib import Path

ROOMS = Path(__file__).resolve().parents[2] / "server" / "rooms"
WIRE = ("server.protocol", "server.presenter", "server.connection")


def wire_imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        hits = [n for n in names if n.startswith(WIRE)]
        found += hits[:1]
    return found


def test_no_room_module_imports_the_protocol_the_presenter_or_the_sockets() -> None:
    offenders = {
        path.name: wire_imports(path) for path in sorted(ROOMS.glob("*.py")) if wire_imports(path)
    }
    assert offenders == {}


def test_the_check_sees_a_wire_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from server import presenter\nfrom server.protocol import encode\n")
    assert wire_imports(module) == ["server.presenter", "server.protocol"]
