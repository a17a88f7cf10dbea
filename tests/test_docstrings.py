"""Every public function, class and method of the engine, the bots, the rooms, the wire
modules and the app says what it is for."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = [
    "server/engine",
    "server/bots",
    "server/rooms",
    "server/cluster",
    "server/protocol.py",
    "server/presenter",
    "server/connection.py",
    "server/errors.py",
    "server/app.py",
    "server/http_answers.py",
    "server/app_services.py",
    "server/table_routes.py",
    "server/operator_routes.py",
    "server/game_front.py",
]


def undocumented(package: str) -> list[str]:
    missing: list[str] = []

    def walk(path: Path, nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if node.name.startswith("_"):
                continue
            if ast.get_docstring(node) is None:
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {prefix}{node.name}")
            if isinstance(node, ast.ClassDef):
                walk(path, node.body, f"{node.name}.")

    where = ROOT / package
    for path in [where] if where.is_file() else sorted(where.glob("*.py")):
        walk(path, ast.parse(path.read_text()).body, "")
    return missing


@pytest.mark.parametrize("package", PACKAGES)
def test_public_functions_and_classes_have_docstrings(package: str) -> None:
    assert undocumented(package) == []
