"""``/sw.js``: the client's service worker, served with the shell it caches (the client
directory's files) and a version that changes with any of them (server/client_shell.py)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from server.client_shell import MAX_SHELL_FILES, Shell, service_worker_route

SW = 'const SHELL = "__PDK_SHELL__";\nself.addEventListener("fetch", () => {});\n'


def client_dir(tmp_path: Path) -> Path:
    root = tmp_path / "client"
    (root / "js").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html>")
    (root / "js" / "main.js").write_text("// main")
    (root / ".hidden").write_text("not served as part of the shell")
    (root / "sw.js").write_text(SW)
    return root


def get_sw(root: Path) -> Response:
    """The route's answer to a GET, called as Starlette would call it."""
    route = service_worker_route(root)
    scope = {"type": "http", "method": "GET", "path": "/sw.js", "headers": []}
    response: Response = asyncio.run(route.endpoint(Request(scope)))
    return response


def shell_of(script: str) -> dict[str, object]:
    match = re.search(r"const SHELL = (\{.*\});", script)
    assert match, script
    value: dict[str, object] = json.loads(match.group(1))
    return value


def test_the_worker_is_served_with_its_shell_and_revalidated_every_time(tmp_path: Path) -> None:
    root = client_dir(tmp_path)
    answer = get_sw(root)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/javascript")
    assert answer.headers["cache-control"] == "no-cache"
    assert answer.headers["content-security-policy"] == "default-src 'self'"
    shell = shell_of(bytes(answer.body).decode())
    # The page itself, every file but the worker and hidden ones, in a stable order.
    assert shell["files"] == ["./", "index.html", "js/main.js"]
    assert re.fullmatch(r"[0-9a-f]{16}", str(shell["version"]))


def test_a_changed_client_file_changes_the_version_and_an_unchanged_one_does_not(
    tmp_path: Path,
) -> None:
    root = client_dir(tmp_path)
    shell = Shell(root)
    first = shell.current()["version"]
    assert shell.current()["version"] == first
    main = root / "js" / "main.js"
    main.write_text("// main, changed")
    # Same size and time as before would read as unchanged: move the time on explicitly.
    stamp = main.stat().st_mtime_ns + 1_000_000_000
    os.utime(main, ns=(stamp, stamp))
    second = shell.current()["version"]
    assert second != first
    (root / "js" / "new.js").write_text("// a new module")
    third = shell.current()
    assert third["version"] != second
    assert "js/new.js" in third["files"]  # type: ignore[operator]


def test_no_worker_file_is_a_404_and_the_shell_is_bounded(tmp_path: Path) -> None:
    root = client_dir(tmp_path)
    (root / "sw.js").unlink()
    assert get_sw(root).status_code == 404
    for i in range(MAX_SHELL_FILES + 5):
        (root / f"f{i:04}.txt").write_text("x")
    assert len(Shell(root).current()["files"]) == MAX_SHELL_FILES + 1  # type: ignore[arg-type]
