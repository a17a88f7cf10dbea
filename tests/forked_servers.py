"""Test servers forked from a process that has imported the server once.

A run starts about 170 servers, and a fresh ``python -m server serve`` spends
most of its start-up CPU importing (uvicorn, redis-py, starlette and our own
modules: 0.3-0.5 s of the 0.45-1.0 s a start to ``/healthz`` costs).  So each
test process keeps one *zygote*: a Python started once, with those modules
imported, that forks a child per server.  The child is a server process like any
other (its own pid, sockets, log and environment; SIGKILL ends it), running the
same ``server.cli.main`` that ``python -m server`` runs, and it exits as that
would: through ``sys.exit``, its interpreter's own shutdown and ``atexit``.

What differs from a fresh interpreter is only what the zygote did once: the
imports, and the settings a Python reads at its start (``PYTHON*`` variables,
the hash seed).  A request whose ``PYTHON*`` variables differ from the zygote's
gets a fresh interpreter instead (``ServerProcess`` falls back to ``Popen``), as
does every request when ``PDK_FORK_SERVERS=0``.

The zygote is the children's parent, so it reaps them: each start gets a socket
pair of its own, on which the zygote sends the child's pid, then its exit status
(``subprocess`` semantics: a negative number for a signal).  ``ForkedChild``
reads them with the part of ``subprocess.Popen``'s interface ``ServerProcess``
uses.  The zygote exits when the test process that started it closes its
control socket (or dies).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ForkedChild", "can_fork", "fork_server", "server_env"]

REPO_ROOT = Path(__file__).resolve().parent.parent

# What ``python -m server serve`` imports before it answers ``/healthz``
# (``python -X importtime``): the CLI, the app it builds, and what uvicorn loads
# by name at run time.
_PRELOAD = ("server.cli", "server.app", "uvicorn.loops.uvloop", "encodings.idna")

_REQUEST_LIMIT = 1 << 20  # a request is argv, environment and paths: a few KiB


def can_fork(env: Mapping[str, str]) -> bool:
    """Whether a server with environment ``env`` may be forked from the zygote."""
    if os.environ.get("PDK_FORK_SERVERS") == "0" or not _pidfds():
        return False
    zygote_env = _made.env if _made is not None else server_env()
    return _interpreter_settings(env) == _interpreter_settings(zygote_env)


def fork_server(args: Sequence[str], *, env: Mapping[str, str], log_path: Path) -> ForkedChild:
    """Start ``server.cli.main(args)`` in a child of the zygote, output appended to
    ``log_path``, in the repository's root, with exactly ``env`` as its environment."""
    return _zygote().fork(
        {"args": list(args), "env": dict(env), "log": str(log_path), "cwd": str(REPO_ROOT)}
    )


@functools.cache
def _pidfds() -> bool:
    """Whether this kernel gives pidfds (Linux 5.3 and later), which the zygote waits on."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


class ForkedChild:
    """A forked server as ``subprocess.Popen`` shows a child: ``pid``, ``poll``,
    ``wait``, ``send_signal``, ``kill``, ``returncode``."""

    def __init__(self, pid: int, channel: _Lines) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._channel = channel
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        return self._read(0.0)

    def wait(self, timeout: float | None = None) -> int:
        status = self._read(timeout)
        if status is None:
            raise subprocess.TimeoutExpired(f"forked server (pid {self.pid})", timeout or 0.0)
        return status

    def send_signal(self, sig: int) -> None:
        # As Popen does: never signal a pid whose exit was already reported (the
        # zygote has reaped it, so the number may belong to another process now).
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _read(self, timeout: float | None) -> int | None:
        with self._lock:
            if self.returncode is None:
                try:
                    reply = self._channel.read(timeout)
                except TimeoutError:
                    return None
                self._channel.close()
                if reply is None:
                    raise RuntimeError(f"the zygote went away before server pid {self.pid} ended")
                self.returncode = int(reply["exit"])
            return self.returncode


class _Lines:
    """JSON lines from a socket (the zygote's pid, then exit status, may come in one
    read when a server exits at once)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""

    def read(self, timeout: float | None) -> dict[str, Any] | None:
        """The next line; None at end of file; TimeoutError after ``timeout`` s (0:
        only what has come)."""
        self._sock.settimeout(timeout)
        while b"\n" not in self._buffer:
            try:
                chunk = self._sock.recv(4096)
            except BlockingIOError as exc:  # timeout 0 makes the socket non-blocking
                raise TimeoutError from exc
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> None:
        self._sock.close()


class _Zygote:
    def __init__(self) -> None:
        # Records, not a stream: each start's request and descriptor arrive alone, even
        # when several threads start servers at once.
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._control = ours
        self.env = server_env()
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from tests.forked_servers import _zygote_main; _zygote_main()"],
            cwd=REPO_ROOT,
            env=self.env,
            stdin=theirs.fileno(),
            stdout=subprocess.DEVNULL,
        )
        theirs.close()
        self._lock = threading.Lock()

    def fork(self, request: Mapping[str, object]) -> ForkedChild:
        mine, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                message = json.dumps(request).encode() + b"\n"
                socket.send_fds(self._control, [message], [child_end.fileno()])
        finally:
            child_end.close()
        channel = _Lines(mine)
        reply = channel.read(60.0)  # the zygote forks at once; only a wedged one is slower
        if reply is None or "pid" not in reply:
            channel.close()
            raise RuntimeError(f"the zygote did not fork a server: {reply!r}")
        return ForkedChild(int(reply["pid"]), channel)

    def close(self) -> None:
        self._control.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


_made: _Zygote | None = None
_made_lock = threading.Lock()


def _zygote() -> _Zygote:
    global _made
    with _made_lock:
        if _made is None:
            _made = _Zygote()
            atexit.register(_made.close)
        return _made


def server_env() -> dict[str, str]:
    """The environment every test server starts from (and the zygote runs in): this
    process's, never a developer's PAODEKUAI_* variables, output unbuffered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAODEKUAI_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _interpreter_settings(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PYTHON")}


# ------------------------------------------------------------------ the zygote itself


def _zygote_main() -> None:
    """Import the server, then fork a server per request until stdin closes.

    Runs in the zygote (fd 0 is the control socket).  A forked child returns from
    ``_serve`` only by ``SystemExit`` or an exception, which nothing here catches,
    so it leaves the way ``python -m server`` does."""
    import importlib

    for name in _PRELOAD:
        importlib.import_module(name)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a ^C is for the tests, which stop us
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    waiting: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, channel)
    while True:
        for key, _ in selector.select():
            if key.fileobj is control:
                message, fds, _flags, _addr = socket.recv_fds(control, _REQUEST_LIMIT, 1)
                if not message:
                    return  # the test process is done (or gone)
                channel = socket.socket(fileno=fds[0])
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    control.close()
                    for _pid, other in waiting.values():
                        other.close()
                    for pidfd in waiting:
                        os.close(pidfd)
                    channel.close()
                    _serve(json.loads(message))
                pidfd = os.pidfd_open(pid)
                waiting[pidfd] = (pid, channel)
                selector.register(pidfd, selectors.EVENT_READ)
                _send(channel, {"pid": pid})
            else:
                pidfd = key.fd
                selector.unregister(pidfd)
                os.close(pidfd)
                pid, channel = waiting.pop(pidfd)
                _, status = os.waitpid(pid, 0)
                _send(channel, {"exit": os.waitstatus_to_exitcode(status)})
                channel.close()


def _send(channel: socket.socket, message: Mapping[str, object]) -> None:
    with contextlib.suppress(OSError):  # the test gave up on this server; still reap it
        channel.sendall(json.dumps(message).encode() + b"\n")


def _serve(request: Mapping[str, object]) -> None:
    """The forked child: become ``python -m server <args>`` with the request's
    environment, directory and output, and exit with its status."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    log = os.open(str(request["log"]), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    # PYTHONUNBUFFERED's streams: a test reads the log while the server runs.
    sys.stdout = _unbuffered(1, "strict")
    sys.stderr = _unbuffered(2, "backslashreplace")
    os.chdir(str(request["cwd"]))
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)
    args = request["args"]
    assert isinstance(args, list)
    sys.argv = ["paodekuai", *args]
    from server.cli import main

    sys.exit(main(args))


def _unbuffered(fd: int, errors: str) -> io.TextIOWrapper:
    stream = open(fd, "w", buffering=1, encoding="utf-8", errors=errors, closefd=False)  # noqa: SIM115
    stream.reconfigure(write_through=True)
    return stream
