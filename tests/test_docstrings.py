"""Every public function, class and method of the engine and the bots says what it is for."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["server/engine", "server/bots"]


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

    for path in sorted((ROOT / package).glob("*.py")):
        walk(path, ast.parse(path.read_text()).body, "")
    return missing


@pytest.mark.parametrize("package", PACKAGES)
def test_public_functions_and_classes_have_docstrings(package: str) -> None:
    assert undocumented(package) == []
