"""Server settings: one frozen Struct, read from CLI flags, then environment, then defaults.

Every setting is described once in ``OPTIONS`` (its flag, its ``PAODEKUAI_*``
variable, how to parse it); the CLI and docs/operations.md follow that table.
An empty environment variable counts as unset, so ``PAODEKUAI_REDIS_URL=`` in a
compose file means "use the embedded Redis".
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Literal, NamedTuple, TypeAlias, get_args
from urllib.parse import urlsplit

import msgspec

from server.errors import ServerError

__all__ = [
    "DEFAULT_CLIENT_DIR",
    "LOG_LEVELS",
    "MAX_BOT_SPEED_MS",
    "OPTIONS",
    "ConfigError",
    "ConfigReason",
    "LogLevel",
    "Option",
    "Settings",
    "load_settings",
    "parse_duration",
    "prepare_paths",
]

LogLevel: TypeAlias = Literal["critical", "error", "warning", "info", "debug"]
LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)

# The browser client sits next to the package in a source checkout or an
# editable install; a plain `pip install .` does not carry it, so such
# deployments (the Docker image) set PAODEKUAI_CLIENT_DIR.
DEFAULT_CLIENT_DIR = Path(__file__).resolve().parent.parent / "client"

# The longest pause a table may set before each bot move (the table setting and the
# in-game control share it).
MAX_BOT_SPEED_MS = 5000

_REDIS_SCHEMES = ("redis", "rediss", "unix")
_MIN_TTL_SECONDS = 60
_MAX_FRAME_BYTES = 16 * 1024 * 1024


class ConfigReason(StrEnum):
    """Why a setting was refused (printed by the CLI, which exits with status 2)."""

    BAD_VALUE = "bad_value"
    BAD_PORT = "bad_port"
    BAD_REDIS_URL = "bad_redis_url"
    BAD_LOG_LEVEL = "bad_log_level"
    DATA_DIR_UNUSABLE = "data_dir_unusable"
    CLIENT_DIR_MISSING = "client_dir_missing"


class ConfigError(ServerError, ValueError):
    """A setting is invalid; ``field`` names it, ``reason`` is the stable code."""

    reason: ConfigReason

    def __init__(self, reason: ConfigReason, field: str, message: str) -> None:
        super().__init__(reason, message)
        self.field = field

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason.value!r}, {self.field!r}, {self.message!r})"


class Settings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything the server reads at start-up.  Values are checked on construction.

    - ``redis_url``: an external Redis; ``None`` runs the embedded one in ``data_dir``.
    - ``table_ttl_seconds``: a table untouched this long expires from Redis.
    - ``max_frame_bytes``: larger WebSocket frames from a client are refused.
    - ``outgoing_queue_size``: messages buffered per socket before a slow
      client is dropped (close code 4408).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    redis_url: str | None = None
    data_dir: Path = Path("data")
    table_ttl_seconds: int = 7 * 24 * 3600
    max_frame_bytes: int = 16 * 1024
    outgoing_queue_size: int = 64
    log_level: LogLevel = "info"
    client_dir: Path = DEFAULT_CLIENT_DIR

    def __post_init__(self) -> None:
        if not self.host.strip():
            raise ConfigError(ConfigReason.BAD_VALUE, "host", "host must not be empty")
        if not 1 <= self.port <= 65535:
            raise ConfigError(
                ConfigReason.BAD_PORT, "port", f"port must be 1..65535, not {self.port}"
            )
        if self.redis_url is not None:
            _check_redis_url(self.redis_url)
        if self.table_ttl_seconds < _MIN_TTL_SECONDS:
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "table_ttl_seconds",
                f"table TTL must be at least {_MIN_TTL_SECONDS}s, not {self.table_ttl_seconds}s",
            )
        if not 1024 <= self.max_frame_bytes <= _MAX_FRAME_BYTES:
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "max_frame_bytes",
                f"max frame size must be 1024..{_MAX_FRAME_BYTES} bytes, "
                f"not {self.max_frame_bytes}",
            )
        if not 1 <= self.outgoing_queue_size <= 100_000:
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "outgoing_queue_size",
                f"outgoing queue size must be 1..100000, not {self.outgoing_queue_size}",
            )
        if self.log_level not in LOG_LEVELS:
            raise ConfigError(
                ConfigReason.BAD_LOG_LEVEL,
                "log_level",
                f"log level must be one of {', '.join(LOG_LEVELS)}, not {self.log_level!r}",
            )

    @property
    def embedded_redis(self) -> bool:
        return self.redis_url is None


def _check_redis_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in _REDIS_SCHEMES:
        raise ConfigError(
            ConfigReason.BAD_REDIS_URL,
            "redis_url",
            f"Redis URL must start with {', '.join(s + '://' for s in _REDIS_SCHEMES)}; "
            f"got {url!r}",
        )
    if parts.scheme == "unix" and not parts.path:
        raise ConfigError(
            ConfigReason.BAD_REDIS_URL, "redis_url", f"unix Redis URL has no socket path: {url!r}"
        )
    if parts.scheme != "unix" and not parts.hostname:
        raise ConfigError(
            ConfigReason.BAD_REDIS_URL, "redis_url", f"Redis URL has no host: {url!r}"
        )


_DURATION = re.compile(r"(?P<amount>\d+)\s*(?P<unit>[smhdw]?)", re.IGNORECASE)
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> int:
    """Seconds in ``"604800"``, ``"90s"``, ``"30m"``, ``"12h"``, ``"7d"`` or ``"2w"``."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a duration such as 3600, 30m, 12h or 7d")
    return int(match["amount"]) * _UNIT_SECONDS[match["unit"].lower()]


def _parse_int(text: str) -> int:
    try:
        return int(text.strip().replace("_", ""))
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None


def _parse_text(text: str) -> str:
    return text.strip()


def _parse_optional_text(text: str) -> str | None:
    return text.strip() or None


def _parse_path(text: str) -> Path:
    return Path(text.strip()).expanduser()


def _parse_log_level(text: str) -> str:
    return text.strip().lower()


class Option(NamedTuple):
    field: str
    flag: str
    env: str
    metavar: str
    parse: Callable[[str], object]
    help: str


OPTIONS: tuple[Option, ...] = (
    Option("host", "--host", "PAODEKUAI_HOST", "ADDR", _parse_text,
           "interface to listen on (0.0.0.0 for every interface)"),
    Option("port", "--port", "PAODEKUAI_PORT", "PORT", _parse_int,
           "TCP port for HTTP and WebSocket"),
    Option("redis_url", "--redis-url", "PAODEKUAI_REDIS_URL", "URL", _parse_optional_text,
           "external Redis (redis://host:6379/0, rediss://..., unix:///path.sock); "
           "unset: run the embedded Redis in the data dir"),
    Option("data_dir", "--data-dir", "PAODEKUAI_DATA_DIR", "DIR", _parse_path,
           "where the embedded Redis keeps its append-only file, socket and log"),
    Option("table_ttl_seconds", "--table-ttl", "PAODEKUAI_TABLE_TTL", "DURATION", parse_duration,
           "idle tables expire after this long (seconds, or 30m, 12h, 7d, 2w)"),
    Option("max_frame_bytes", "--max-frame-bytes", "PAODEKUAI_MAX_FRAME_BYTES", "BYTES",
           _parse_int, "largest WebSocket frame accepted from a client"),
    Option("outgoing_queue_size", "--outgoing-queue-size", "PAODEKUAI_OUTGOING_QUEUE_SIZE", "N",
           _parse_int, "messages queued per socket before a slow client is dropped"),
    Option("log_level", "--log-level", "PAODEKUAI_LOG_LEVEL", "LEVEL", _parse_log_level,
           f"one of {', '.join(LOG_LEVELS)}"),
    Option("client_dir", "--client-dir", "PAODEKUAI_CLIENT_DIR", "DIR", _parse_path,
           "directory holding the browser client (index.html)"),
)  # fmt: skip


def load_settings(
    flags: Mapping[str, str | None],
    environ: Mapping[str, str],
    *,
    check_paths: bool = True,
) -> Settings:
    """Settings from ``flags`` (field name -> raw text, None = not given), then ``environ``.

    Errors name where the bad value came from (``--port`` or ``PAODEKUAI_PORT``).
    With ``check_paths`` the data dir (when the embedded Redis will use it) is
    created and tested for writing, and the client dir must exist.
    """
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    for option in OPTIONS:
        raw = flags.get(option.field)
        source = option.flag
        if raw is None:
            raw = environ.get(option.env) or None
            source = option.env
        if raw is None:
            continue
        sources[option.field] = source
        try:
            values[option.field] = option.parse(raw)
        except ValueError as exc:
            raise ConfigError(ConfigReason.BAD_VALUE, option.field, f"{source}: {exc}") from None
    try:
        settings = msgspec.structs.replace(Settings(), **values)
    except ConfigError as exc:
        origin = sources.get(exc.field)
        if origin is None:
            raise
        raise ConfigError(exc.reason, exc.field, f"{origin}: {exc.message}") from None
    settings = msgspec.structs.replace(
        settings,
        data_dir=settings.data_dir.absolute(),
        client_dir=settings.client_dir.absolute(),
    )
    if check_paths:
        prepare_paths(settings)
    return settings


def prepare_paths(settings: Settings) -> None:
    """Create the data dir if the embedded Redis needs it, and check both dirs are usable."""
    if settings.embedded_redis:
        _ensure_writable_dir(settings.data_dir)
    if not settings.client_dir.is_dir():
        raise ConfigError(
            ConfigReason.CLIENT_DIR_MISSING,
            "client_dir",
            f"client dir {settings.client_dir} does not exist or is not a directory "
            "(set --client-dir or PAODEKUAI_CLIENT_DIR to the repository's client/ folder)",
        )


def _ensure_writable_dir(path: Path) -> None:
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        # os.access lies for root and on read-only mounts; writing is the real test.
        with tempfile.TemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise ConfigError(
            ConfigReason.DATA_DIR_UNUSABLE,
            "data_dir",
            f"data dir {path} is not a writable directory: {exc.strerror or exc}",
        ) from None
