"""Server settings: one frozen Struct, read from CLI flags, then environment, then defaults.

Every setting is described once in ``OPTIONS`` (its flag, its ``PAODEKUAI_*``
variable, how to parse it); the CLI and docs/operations.md follow that table.
An empty environment variable counts as unset, so ``PAODEKUAI_REDIS_URL=`` in a
compose file means "use the embedded Redis".
"""

from __future__ import annotations

import ipaddress
import re
import tempfile
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Literal, NamedTuple, TypeAlias, get_args
from urllib.parse import urlsplit

import msgspec

from server.errors import ServerError
from server.redis_sentinel import SENTINEL_SCHEMES, parse_sentinel_url

__all__ = [
    "DEFAULT_CLIENT_DIR",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "OPTIONS",
    "ConfigError",
    "ConfigReason",
    "LogFormat",
    "LogLevel",
    "Option",
    "Settings",
    "load_settings",
    "parse_duration",
    "prepare_paths",
]

LogLevel: TypeAlias = Literal["critical", "error", "warning", "info", "debug"]
LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)
LogFormat: TypeAlias = Literal["text", "json"]
LOG_FORMATS: tuple[str, ...] = get_args(LogFormat)

# An installed wheel carries the browser client as package data (server/webclient,
# pyproject.toml); a source checkout or an editable install has no such directory
# and serves the checkout's client/ next to the package, so edits show at once.
_PACKAGED_CLIENT_DIR = Path(__file__).resolve().parent / "webclient"
DEFAULT_CLIENT_DIR = (
    _PACKAGED_CLIENT_DIR
    if _PACKAGED_CLIENT_DIR.is_dir()
    else Path(__file__).resolve().parent.parent / "client"
)

_REDIS_SCHEMES = ("redis", "rediss", "unix", *SENTINEL_SCHEMES)
_MIN_TTL_SECONDS = 60
_MAX_FRAME_BYTES = 16 * 1024 * 1024
# Below half a second a busy event loop could miss renewals; above a minute
# players wait too long after a crash.
_MIN_LEASE_SECONDS = 0.5
_MAX_LEASE_SECONDS = 60.0


class ConfigReason(StrEnum):
    """Why a setting was refused (printed by the CLI, which exits with status 2)."""

    BAD_VALUE = "bad_value"
    BAD_PORT = "bad_port"
    BAD_REDIS_URL = "bad_redis_url"
    BAD_LOG_LEVEL = "bad_log_level"
    DATA_DIR_UNUSABLE = "data_dir_unusable"
    CLIENT_DIR_MISSING = "client_dir_missing"


class ConfigError(ServerError[ConfigReason], ValueError):
    """A setting is invalid; ``field`` names it, ``reason`` is the stable code."""

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
    - ``lease_seconds``: how long a table's ownership outlives its owner's last
      renewal, so the longest its players wait for another process after the
      owner died (see docs/operations.md).
    - ``max_spectators``: sockets that may watch one table (0: no watching).
    - ``max_sockets_per_seat``: sockets one seat may have at once; a newer one ends
      the oldest (close 4409).

    The rest bound what one client can make the server hold (docs/operations.md,
    "Limits"): connections in total and per client address, seconds to send a
    request, to idle between requests and to drain its output, socket send
    buffers, repeated log lines, table creation, seat actions.  Origins and
    trusted proxies decide who may talk to the server and who it is.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    redis_url: str | None = None
    data_dir: Path = Path("data")
    table_ttl_seconds: int = 7 * 24 * 3600
    max_frame_bytes: int = 16 * 1024
    outgoing_queue_size: int = 64
    lease_seconds: float = 3.0
    max_spectators: int = 20
    max_sockets_per_seat: int = 4
    log_level: LogLevel = "info"
    client_dir: Path = DEFAULT_CLIENT_DIR
    log_format: LogFormat = "text"
    max_connections: int = 1000
    max_connections_per_client: int = 64
    request_timeout_seconds: int = 10
    join_timeout_seconds: int = 30
    keepalive_timeout_seconds: int = 5
    send_timeout_seconds: int = 10
    send_buffer_bytes: int = 64 * 1024
    log_repeat_limit: int = 10
    # Access lines of refused requests (status >= 400) written a minute; the rest counted.
    refused_access_log_limit: int = 60
    allowed_origins: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()
    client_ip_header: str = "x-forwarded-for"
    tables_per_minute: int = 20
    max_tables: int = 100_000
    actions_per_second: int = 10
    allow_fixed_seeds: bool = False
    history_deals: int = 100
    history_cache_deals: int = 10_000
    history_per_minute: int = 30
    # Budgets and store protection (server.budgets, server.rooms.tables, docs/operations.md).
    tables_per_minute_total: int = 600
    unjoined_table_ttl_seconds: int = 600
    table_ttl_per_action_seconds: int = 3600
    # Cluster routing (server.cluster.node, "Handover"): a table whose sockets have all
    # come from one other process this long, and owned here this long, moves there; 0: never.
    handover_seconds: float = 5.0
    admin_token: str | None = None
    # Redis failover (server.rooms.redis_failover, docs/operations.md "Redis itself"):
    # replicas that must hold a write before anyone is told of it (WAIT), and how long
    # to wait for them before the write counts as failed.
    redis_replica_acks: int = 0
    redis_replica_ack_timeout_seconds: float = 1.0
    # Players, room codes, the lobby and quick match (server.players, server.lobby,
    # docs/operations.md "Players and the lobby").
    player_ttl_seconds: int = 180 * 24 * 3600
    player_writes_per_minute: int = 10
    codes_per_minute: int = 20
    max_open_tables: int = 200
    lobby_watchers: int = 500
    lobby_watchers_per_minute: int = 20
    queue_joins_per_minute: int = 20
    queue_polls_per_second: int = 5
    match_wait_seconds: int = 20
    queue_drop_seconds: int = 10
    max_queued: int = 10_000
    # Quick-match tables started with bots that later players may join (lobby/fillable.py).
    quick_match_fill_tables: int = 200
    quick_match_fill_seconds: int = 900
    quick_match_claim_seconds: int = 60
    # Ratings and leaderboards (server.ratings, docs/operations.md "Ratings").
    rating_retention_seconds: int = 30 * 24 * 3600
    leaderboard_size: int = 1000
    rating_jobs: int = 10_000
    profiles_per_minute: int = 60
    # Players' entropy (server.rooms.entropy): the longest a deal waits for client seeds.
    entropy_wait_seconds: float = 2.0

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
        if self.rating_retention_seconds < self.table_ttl_seconds:
            # A table reloaded with its match over re-derives the match's rating job;
            # the markers that make it count once must outlive the table.
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "rating_retention_seconds",
                "rating retention must be at least the table TTL "
                f"({self.table_ttl_seconds}s), not {self.rating_retention_seconds}s",
            )
        if self.log_level not in LOG_LEVELS:
            raise ConfigError(
                ConfigReason.BAD_LOG_LEVEL,
                "log_level",
                f"log level must be one of {', '.join(LOG_LEVELS)}, not {self.log_level!r}",
            )
        if self.log_format not in LOG_FORMATS:
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "log_format",
                f"log format must be one of {', '.join(LOG_FORMATS)}, not {self.log_format!r}",
            )
        for field, low, high in _RANGES:
            value = getattr(self, field)
            if not low <= value <= high:
                raise ConfigError(
                    ConfigReason.BAD_VALUE, field, f"{field} must be {low}..{high}, not {value}"
                )
        if self.max_connections_per_client > self.max_connections:
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "max_connections_per_client",
                f"max_connections_per_client ({self.max_connections_per_client}) must not "
                f"exceed max_connections ({self.max_connections})",
            )
        for origin in self.allowed_origins:
            _check_origin(origin)
        for network in self.trusted_proxies:
            _check_network(network)
        if self.admin_token is not None and len(self.admin_token) < _MIN_ADMIN_TOKEN_CHARS:
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "admin_token",
                f"the admin token must be at least {_MIN_ADMIN_TOKEN_CHARS} characters",
            )
        if not re.fullmatch(r"[A-Za-z0-9-]+", self.client_ip_header):
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "client_ip_header",
                f"client IP header must be a header name, not {self.client_ip_header!r}",
            )
        if self.redis_replica_acks and self.redis_url is None:
            raise ConfigError(
                ConfigReason.BAD_VALUE,
                "redis_replica_acks",
                "the embedded Redis has no replicas: replica acknowledgements need --redis-url",
            )

    @property
    def embedded_redis(self) -> bool:
        return self.redis_url is None


# Inclusive bounds of the numeric limits; the low ends keep a typo from disabling one.
_RANGES: tuple[tuple[str, float, float], ...] = (
    ("max_frame_bytes", 1024, _MAX_FRAME_BYTES),
    ("outgoing_queue_size", 1, 100_000),
    ("lease_seconds", _MIN_LEASE_SECONDS, _MAX_LEASE_SECONDS),
    ("max_spectators", 0, 10_000),
    ("max_sockets_per_seat", 1, 64),
    ("max_connections", 16, 1_000_000),
    ("max_connections_per_client", 1, 1_000_000),
    ("request_timeout_seconds", 1, 3600),
    ("join_timeout_seconds", 1, 3600),
    ("keepalive_timeout_seconds", 1, 3600),
    ("send_timeout_seconds", 1, 3600),
    ("send_buffer_bytes", 4096, 64 * 1024 * 1024),
    ("log_repeat_limit", 1, 1_000_000),
    ("refused_access_log_limit", 0, 1_000_000),
    ("tables_per_minute", 1, 1_000_000),
    ("max_tables", 1, 100_000_000),
    ("actions_per_second", 1, 10_000),
    ("history_deals", 1, 1000),
    ("history_cache_deals", 0, 10_000_000),
    ("history_per_minute", 1, 1_000_000),
    ("tables_per_minute_total", 1, 10_000_000),
    ("unjoined_table_ttl_seconds", 60, 7 * 24 * 3600),
    ("table_ttl_per_action_seconds", 0, 7 * 24 * 3600),
    ("redis_replica_acks", 0, 16),
    ("redis_replica_ack_timeout_seconds", 0.01, 60),
    ("player_ttl_seconds", 3600, 5 * 365 * 24 * 3600),
    ("player_writes_per_minute", 1, 1_000_000),
    ("codes_per_minute", 1, 1_000_000),
    ("max_open_tables", 1, 100_000),
    ("lobby_watchers", 0, 1_000_000),
    ("lobby_watchers_per_minute", 1, 1_000_000),
    ("queue_joins_per_minute", 1, 1_000_000),
    ("queue_polls_per_second", 1, 1000),
    ("match_wait_seconds", 1, 3600),
    ("queue_drop_seconds", 2, 3600),
    ("max_queued", 3, 10_000_000),
    ("quick_match_fill_tables", 0, 1_000_000),
    ("quick_match_fill_seconds", 10, 7 * 24 * 3600),
    ("quick_match_claim_seconds", 5, 3600),
    ("rating_retention_seconds", 3600, 5 * 365 * 24 * 3600),
    ("leaderboard_size", 10, 1_000_000),
    ("rating_jobs", 1, 1_000_000),
    ("profiles_per_minute", 1, 1_000_000),
    ("entropy_wait_seconds", 0, 30),
    ("handover_seconds", 0, 3600),
)
# Guessing a token this long by trying is hopeless (``secrets.token_urlsafe(24)`` is 32).
_MIN_ADMIN_TOKEN_CHARS = 24


def _check_origin(origin: str) -> None:
    if origin == "*":
        return
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
        raise ConfigError(
            ConfigReason.BAD_VALUE,
            "allowed_origins",
            f"an allowed origin is scheme://host[:port] with no path (or *), not {origin!r}",
        )


def _check_network(network: str) -> None:
    try:
        ipaddress.ip_network(network, strict=False)
    except ValueError:
        raise ConfigError(
            ConfigReason.BAD_VALUE,
            "trusted_proxies",
            f"a trusted proxy is an IP address or network (10.0.0.0/8), not {network!r}",
        ) from None


def _check_redis_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in _REDIS_SCHEMES:
        raise ConfigError(
            ConfigReason.BAD_REDIS_URL,
            "redis_url",
            f"Redis URL must start with {', '.join(s + '://' for s in _REDIS_SCHEMES)}; "
            f"got {url!r}",
        )
    if parts.scheme in SENTINEL_SCHEMES:
        try:
            parse_sentinel_url(url)
        except ValueError as exc:
            raise ConfigError(ConfigReason.BAD_REDIS_URL, "redis_url", str(exc)) from None
        return
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


def _parse_seconds(text: str) -> float:
    """Seconds in ``"3"``, ``"2.5"``, ``"2.5s"`` or ``"1500ms"``."""
    clean = text.strip().lower()
    scale = 1.0
    if clean.endswith("ms"):
        clean, scale = clean[:-2], 0.001
    elif clean.endswith("s"):
        clean = clean[:-1]
    try:
        return float(clean) * scale
    except ValueError:
        raise ValueError(f"{text!r} is not a duration such as 3, 2.5s or 1500ms") from None


def _parse_text(text: str) -> str:
    return text.strip()


def _parse_optional_text(text: str) -> str | None:
    return text.strip() or None


def _parse_path(text: str) -> Path:
    return Path(text.strip()).expanduser()


def _parse_word(text: str) -> str:
    return text.strip().lower()


def _parse_list(text: str) -> tuple[str, ...]:
    return tuple(item.strip().rstrip("/") for item in text.split(",") if item.strip())


def _parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{text!r} is not yes/no (or true/false, on/off, 1/0)")


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
           "external Redis (redis://host:6379/0, rediss://..., unix:///path.sock, "
           "redis+sentinel://host:26379,host:26379/service/0); "
           "unset: run the embedded Redis in the data dir"),
    Option("data_dir", "--data-dir", "PAODEKUAI_DATA_DIR", "DIR", _parse_path,
           "where the embedded Redis keeps its append-only file, socket and log"),
    Option("table_ttl_seconds", "--table-ttl", "PAODEKUAI_TABLE_TTL", "DURATION", parse_duration,
           "idle tables expire after this long (seconds, or 30m, 12h, 7d, 2w)"),
    Option("max_frame_bytes", "--max-frame-bytes", "PAODEKUAI_MAX_FRAME_BYTES", "BYTES",
           _parse_int, "largest WebSocket frame accepted from a client"),
    Option("outgoing_queue_size", "--outgoing-queue-size", "PAODEKUAI_OUTGOING_QUEUE_SIZE", "N",
           _parse_int, "messages queued per socket before a slow client is dropped"),
    Option("lease_seconds", "--lease-ttl", "PAODEKUAI_LEASE_TTL", "SECONDS", _parse_seconds,
           "a table's owner lease (3, 2.5s, 1500ms): the longest its players wait "
           "for another process after the owner died"),
    Option("max_spectators", "--max-spectators", "PAODEKUAI_MAX_SPECTATORS", "N", _parse_int,
           "sockets that may watch one table (0: no watching)"),
    Option("max_sockets_per_seat", "--max-sockets-per-seat",
           "PAODEKUAI_MAX_SOCKETS_PER_SEAT", "N", _parse_int,
           "sockets one seat may have at once; a newer one ends the oldest"),
    Option("log_level", "--log-level", "PAODEKUAI_LOG_LEVEL", "LEVEL", _parse_word,
           f"one of {', '.join(LOG_LEVELS)}"),
    Option("client_dir", "--client-dir", "PAODEKUAI_CLIENT_DIR", "DIR", _parse_path,
           "directory holding the browser client (index.html)"),
    Option("log_format", "--log-format", "PAODEKUAI_LOG_FORMAT", "FORMAT", _parse_word,
           "text, or json (one object per line, for log shippers)"),
    Option("max_connections", "--max-connections", "PAODEKUAI_MAX_CONNECTIONS", "N", _parse_int,
           "open TCP connections in total (lowered to fit the file-descriptor limit)"),
    Option("max_connections_per_client", "--max-connections-per-client",
           "PAODEKUAI_MAX_CONNECTIONS_PER_CLIENT", "N", _parse_int,
           "open TCP connections from one client address"),
    Option("request_timeout_seconds", "--request-timeout", "PAODEKUAI_REQUEST_TIMEOUT",
           "DURATION", parse_duration, "time a client has to send a whole HTTP request"),
    Option("join_timeout_seconds", "--join-timeout", "PAODEKUAI_JOIN_TIMEOUT", "DURATION",
           parse_duration, "time a game socket has to send its join after it opens"),
    Option("keepalive_timeout_seconds", "--keepalive-timeout", "PAODEKUAI_KEEPALIVE_TIMEOUT",
           "DURATION", parse_duration, "an idle keep-alive HTTP connection is closed after this"),
    Option("send_timeout_seconds", "--send-timeout", "PAODEKUAI_SEND_TIMEOUT", "DURATION",
           parse_duration, "a socket whose output does not drain for this long is aborted"),
    Option("send_buffer_bytes", "--send-buffer-bytes", "PAODEKUAI_SEND_BUFFER_BYTES", "BYTES",
           _parse_int, "kernel send buffer of each client socket"),
    Option("log_repeat_limit", "--log-repeat-limit", "PAODEKUAI_LOG_REPEAT_LIMIT", "N",
           _parse_int, "the same log message at most this often a minute; the rest are counted"),
    Option("refused_access_log_limit", "--refused-access-log-limit",
           "PAODEKUAI_REFUSED_ACCESS_LOG_LIMIT", "N", _parse_int,
           "access lines of refused requests (status 400 and up) written a minute; "
           "the rest are counted"),
    Option("allowed_origins", "--allowed-origins", "PAODEKUAI_ALLOWED_ORIGINS", "LIST",
           _parse_list, "browser origins allowed to create tables and open game sockets "
           "(comma-separated https://host[:port], or *); unset: the server's own origin"),
    Option("trusted_proxies", "--trusted-proxies", "PAODEKUAI_TRUSTED_PROXIES", "LIST",
           _parse_list, "addresses/networks of reverse proxies whose client IP header is "
           "believed (comma-separated); unset: the TCP peer is the client"),
    Option("client_ip_header", "--client-ip-header", "PAODEKUAI_CLIENT_IP_HEADER", "NAME",
           _parse_text, "header a trusted proxy puts the client address in"),
    Option("tables_per_minute", "--tables-per-minute", "PAODEKUAI_TABLES_PER_MINUTE", "N",
           _parse_int, "tables one client address may create a minute"),
    Option("max_tables", "--max-tables", "PAODEKUAI_MAX_TABLES", "N", _parse_int,
           "tables stored at once (created within the table TTL)"),
    Option("actions_per_second", "--actions-per-second", "PAODEKUAI_ACTIONS_PER_SECOND", "N",
           _parse_int, "frames one seat may send a second (bursts of twice that)"),
    Option("allow_fixed_seeds", "--allow-fixed-seeds", "PAODEKUAI_ALLOW_FIXED_SEEDS", "BOOL",
           _parse_bool, "testing only: accept a client-chosen seed on tables with several "
           "humans (a chosen seed lets its chooser know every hand)"),
    Option("history_deals", "--history-deals", "PAODEKUAI_HISTORY_DEALS", "N", _parse_int,
           "finished deals in one history answer (a page; ten pages reach back)"),
    Option("history_cache_deals", "--history-cache-deals", "PAODEKUAI_HISTORY_CACHE_DEALS",
           "N", _parse_int, "finished deals kept replayed for history answers, over all "
           "tables (about 3.3 KB each; 0: replay every request)"),
    Option("history_per_minute", "--history-per-minute", "PAODEKUAI_HISTORY_PER_MINUTE", "N",
           _parse_int, "history requests one seat, and one client address, may make a minute"),
    Option("tables_per_minute_total", "--tables-per-minute-total",
           "PAODEKUAI_TABLES_PER_MINUTE_TOTAL", "N", _parse_int,
           "tables all clients together may create a minute (shared by every process)"),
    Option("unjoined_table_ttl_seconds", "--unjoined-table-ttl", "PAODEKUAI_UNJOINED_TABLE_TTL",
           "DURATION", parse_duration, "a table nobody plays at expires after this long"),
    Option("table_ttl_per_action_seconds", "--table-ttl-per-action",
           "PAODEKUAI_TABLE_TTL_PER_ACTION", "DURATION", parse_duration,
           "each action played adds this much to a table's lifetime, up to --table-ttl"),
    Option("handover_seconds", "--handover-after", "PAODEKUAI_HANDOVER_AFTER", "SECONDS",
           _parse_seconds, "a table whose sockets all reach one other process this long "
           "(and owned here this long) moves to it (0: never)"),
    Option("admin_token", "--admin-token", "PAODEKUAI_ADMIN_TOKEN", "TOKEN",
           _parse_optional_text, "bearer token of the operator's HTTP routes (deleting "
           "tables, /healthz details, /api/usage); unset: those routes are off. Prefer "
           "the environment variable: a flag shows in the process list"),
    Option("redis_replica_acks", "--redis-replica-acks", "PAODEKUAI_REDIS_REPLICA_ACKS", "N",
           _parse_int, "replicas that must hold each write before anyone is told of it "
           "(Redis WAIT; 0: the primary alone, as with a single Redis)"),
    Option("redis_replica_ack_timeout_seconds", "--redis-replica-ack-timeout",
           "PAODEKUAI_REDIS_REPLICA_ACK_TIMEOUT", "SECONDS", _parse_seconds,
           "how long a write waits for those replicas (1, 500ms) before it counts as failed"),
    Option("player_ttl_seconds", "--player-ttl", "PAODEKUAI_PLAYER_TTL", "DURATION",
           parse_duration, "a player identity unused this long is deleted, with its statistics"),
    Option("player_writes_per_minute", "--player-writes-per-minute",
           "PAODEKUAI_PLAYER_WRITES_PER_MINUTE", "N", _parse_int,
           "identities one client address may create, and profile changes one player may "
           "make, a minute"),
    Option("codes_per_minute", "--codes-per-minute", "PAODEKUAI_CODES_PER_MINUTE", "N",
           _parse_int, "room code look-ups and joins one client address may make a minute"),
    Option("max_open_tables", "--max-open-tables", "PAODEKUAI_MAX_OPEN_TABLES", "N",
           _parse_int, "tables the lobby lists at once (shared by every process)"),
    Option("lobby_watchers", "--lobby-watchers", "PAODEKUAI_LOBBY_WATCHERS", "N", _parse_int,
           "lobby event streams one process serves at once (0: no live lobby)"),
    Option("lobby_watchers_per_minute", "--lobby-watchers-per-minute",
           "PAODEKUAI_LOBBY_WATCHERS_PER_MINUTE", "N", _parse_int,
           "lobby event streams one client address may open a minute"),
    Option("queue_joins_per_minute", "--queue-joins-per-minute",
           "PAODEKUAI_QUEUE_JOINS_PER_MINUTE", "N", _parse_int,
           "quick-match joins one player, and one client address, may make a minute"),
    Option("queue_polls_per_second", "--queue-polls-per-second",
           "PAODEKUAI_QUEUE_POLLS_PER_SECOND", "N", _parse_int,
           "quick-match status requests one player may make a second"),
    Option("match_wait_seconds", "--match-wait", "PAODEKUAI_MATCH_WAIT", "DURATION",
           parse_duration, "a quick-match player waiting this long is seated with bots"),
    Option("queue_drop_seconds", "--queue-drop", "PAODEKUAI_QUEUE_DROP", "DURATION",
           parse_duration, "a queued player not heard from this long leaves the queue"),
    Option("max_queued", "--max-queued", "PAODEKUAI_MAX_QUEUED", "N", _parse_int,
           "players all quick-match queues together may hold"),
    Option("quick_match_fill_tables", "--quick-match-fill-tables",
           "PAODEKUAI_QUICK_MATCH_FILL_TABLES", "N", _parse_int,
           "quick-match tables started with bots whose bot seats later players may take "
           "(shared by every process; 0: none)"),
    Option("quick_match_fill_seconds", "--quick-match-fill", "PAODEKUAI_QUICK_MATCH_FILL",
           "DURATION", parse_duration,
           "the longest a table started with bots takes later quick-match players"),
    Option("quick_match_claim_seconds", "--quick-match-claim", "PAODEKUAI_QUICK_MATCH_CLAIM",
           "DURATION", parse_duration,
           "how long a bot seat given to a quick-match player waits for their socket "
           "before it is offered to the next player"),
    Option("rating_retention_seconds", "--rating-retention", "PAODEKUAI_RATING_RETENTION",
           "DURATION", parse_duration, "how long a settled match's rating result and "
           "its per-player markers are kept (a retry older than this would count again)"),
    Option("leaderboard_size", "--leaderboard-size", "PAODEKUAI_LEADERBOARD_SIZE", "N",
           _parse_int, "players each leaderboard keeps (the best ones)"),
    Option("rating_jobs", "--rating-jobs", "PAODEKUAI_RATING_JOBS", "N", _parse_int,
           "finished matches one process may hold waiting to be rated"),
    Option("profiles_per_minute", "--profiles-per-minute", "PAODEKUAI_PROFILES_PER_MINUTE",
           "N", _parse_int, "profile and leaderboard reads one client address may make a minute"),
    Option("entropy_wait_seconds", "--entropy-wait-seconds", "PAODEKUAI_ENTROPY_WAIT_SECONDS",
           "SECONDS", _parse_seconds, "the longest a deal waits for the players' client "
           "seeds (a table's first deal: from its first join); then it is dealt without"),
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
            "(set --client-dir or PAODEKUAI_CLIENT_DIR to the repository's client/ folder, "
            "or leave both unset to serve the one the installed package carries)",
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
