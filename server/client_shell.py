"""The client's service worker (``/sw.js``), served with the shell it caches.

The browser client caches its own files (the shell: HTML, CSS, JS, fonts, strings, rules
pages, icons) so it opens without a network and says that the game needs the server
(docs/client.md, "Installable").  A cached shell must never outlive the client it was
taken from, so ``/sw.js`` is ``client/sw.js`` with its ``"__PDK_SHELL__"`` placeholder
replaced by ``{"version": ..., "files": [...]}``: the list of the client directory's
files and a digest of their contents.  Any change to any client file changes the
script's bytes; the browser, which revalidates the script on every load
(``Cache-Control: no-cache``), then installs the new worker, which caches the new
shell under the new version and deletes every older cache.  Nothing has to be bumped
by hand and the client keeps no build step.

The digest is kept while the files' sizes and modification times stay the same, so a
load costs one directory walk, not a read of every file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["MAX_SHELL_FILES", "SW_PATH", "Shell", "service_worker_route"]

SW_PATH = "/sw.js"
PLACEHOLDER = '"__PDK_SHELL__"'
# The client directory is the operator's, not a visitor's; the bound only keeps a
# misplaced directory (a checkout with its history in it) from becoming a huge script.
MAX_SHELL_FILES = 500
# What the worker script may do: fetch its own origin, nothing else.
_HEADERS = {
    "Cache-Control": "no-cache",
    "Service-Worker-Allowed": "/",
    "Content-Security-Policy": "default-src 'self'",
    "X-Content-Type-Options": "nosniff",
}

_Stamp = tuple[tuple[str, int, int], ...]


class Shell:
    """The shell of one client directory: its files and their version."""

    def __init__(self, client_dir: Path) -> None:
        self.client_dir = client_dir
        self._stamp: _Stamp | None = None
        self._shell: dict[str, object] = {}

    def _walk(self) -> _Stamp:
        found: list[tuple[str, int, int]] = []
        for root, dirs, files in os.walk(self.client_dir):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.startswith(".") or len(found) >= MAX_SHELL_FILES:
                    continue
                path = Path(root) / name
                rel = path.relative_to(self.client_dir).as_posix()
                if rel == SW_PATH.lstrip("/"):
                    continue  # the worker is not part of what it caches
                info = path.stat()
                found.append((rel, info.st_size, info.st_mtime_ns))
        return tuple(found)

    def current(self) -> dict[str, object]:
        """``{"version": hex digest, "files": [...]}`` of the directory as it is now."""
        stamp = self._walk()
        if stamp != self._stamp:
            digest = hashlib.sha256()
            for rel, _, _ in stamp:
                digest.update(rel.encode() + b"\0")
                digest.update(hashlib.sha256((self.client_dir / rel).read_bytes()).digest())
            # "./" is the page itself: the start URL opens it.
            files = ["./", *(rel for rel, _, _ in stamp)]
            self._shell = {"version": digest.hexdigest()[:16], "files": files}
            self._stamp = stamp
        return self._shell

    def script(self) -> str | None:
        """The worker script with this shell in it, or None without a ``sw.js``."""
        try:
            source = (self.client_dir / SW_PATH.lstrip("/")).read_text("utf-8")
        except OSError:
            return None
        return source.replace(PLACEHOLDER, json.dumps(self.current()), 1)


def service_worker_route(client_dir: Path) -> Route:
    """``GET /sw.js``: the worker, revalidated on every load, its shell filled in."""
    shell = Shell(client_dir)

    async def service_worker(request: Request) -> Response:
        script = shell.script()
        if script is None:
            return Response("no service worker\n", status_code=404, media_type="text/plain")
        return Response(script, media_type="text/javascript", headers=_HEADERS)

    return Route(SW_PATH, service_worker, methods=["GET", "HEAD"])
