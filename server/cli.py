"""The ``paodekuai`` command (also ``python -m server``).

``paodekuai serve`` starts the embedded Redis unless a Redis URL is given, then
runs uvicorn on ``server.app.create_app(settings, redis_url)``.  SIGINT and
SIGTERM both mean "shut down cleanly": the server stops listening, hands its
tables over (every lease released, so other processes take them at once),
uvicorn drains its connections, then the embedded Redis gets its SHUTDOWN (so
the AOF is flushed), and the exit status is 0.

``paodekuai tables delete ID...`` removes tables from Redis (an operator's
decision: abuse, a table that must go): the external Redis of
``--redis-url``/``PAODEKUAI_REDIS_URL``, else the running embedded one's socket
in the data dir.  Exit status 0 when every table was there, 1 when some were
not, 2 when Redis cannot be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from types import FrameType
from urllib.parse import urlsplit, urlunsplit

import uvicorn

from server import metrics
from server.config import OPTIONS, ConfigError, Settings, load_settings
from server.logs import configure_logging
from server.redis_embedded import SOCKET_NAME, EmbeddedRedis, EmbeddedRedisError

__all__ = ["browser_url", "build_parser", "main", "redact_url", "serve", "settings_from_args"]

log = logging.getLogger("server.cli")

# Allocations between young collections (CPython default: 700), and young
# collections between two of the middle generation (default 10); see tune_gc.
GC_YOUNG_THRESHOLD = 3_000
GC_MIDDLE_THRESHOLD = 10

_DEFAULTS = Settings()
# Shown in --help; the data dir default is relative to where the command runs.
_DEFAULT_TEXT: Mapping[str, str] = {
    "redis_url": "embedded Redis",
    "data_dir": "./data",
    "table_ttl_seconds": "7d",
    "client_dir": "client/ next to the server package",
    "allowed_origins": "the server's own origin",
    "trusted_proxies": "none",
    "request_timeout_seconds": "10s",
    "join_timeout_seconds": "30s",
    "keepalive_timeout_seconds": "5s",
    "send_timeout_seconds": "10s",
    "allow_fixed_seeds": "no",
    "unjoined_table_ttl_seconds": "10m",
    "table_ttl_per_action_seconds": "1h",
    "admin_token": "unset (operator routes off)",
}


class _ShutdownRequested(Exception):
    """Raised by our SIGTERM handler so ``finally`` blocks run, as KeyboardInterrupt does."""


def _package_version() -> str:
    try:
        return version("paodekuai")
    except PackageNotFoundError:
        return "source checkout"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paodekuai",
        description="Self-hosted server for Pao De Kuai (跑得快), the three-player shedding game.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_package_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve_parser = commands.add_parser(
        "serve",
        help="run the game server",
        description="Run the game server. Every flag falls back to its environment variable, "
        "then to the default.",
    )
    for option in OPTIONS:
        default = _DEFAULT_TEXT.get(option.field, str(getattr(_DEFAULTS, option.field)))
        serve_parser.add_argument(
            option.flag,
            dest=option.field,
            metavar=option.metavar,
            default=None,  # None = "not given", so the environment can fill it in
            help=f"{option.help} [env {option.env}; default {default}]",
        )
    tables_parser = commands.add_parser(
        "tables",
        help="operator's table commands",
        description="Operator's table commands, straight on Redis.",
    )
    table_commands = tables_parser.add_subparsers(
        dest="table_command", required=True, metavar="ACTION"
    )
    delete_parser = table_commands.add_parser(
        "delete",
        help="delete tables by id",
        description="Delete tables by id.  Put -- before the ids: one id in 64 begins with -.",
    )
    delete_parser.add_argument("ids", nargs="+", metavar="ID", help="table ids")
    delete_parser.add_argument(
        "--redis-url",
        default=None,
        help="the server's Redis [env PAODEKUAI_REDIS_URL; default: the embedded Redis "
        "of --data-dir]",
    )
    delete_parser.add_argument(
        "--data-dir",
        default=None,
        help="the embedded Redis's data dir [env PAODEKUAI_DATA_DIR; default ./data]",
    )
    return parser


def settings_from_args(
    args: argparse.Namespace, environ: Mapping[str, str], *, check_paths: bool = True
) -> Settings:
    flags = {option.field: getattr(args, option.field) for option in OPTIONS}
    return load_settings(flags, environ, check_paths=check_paths)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "serve":
        try:
            settings = settings_from_args(args, os.environ)
        except ConfigError as exc:
            # argparse's error format and exit status 2, like any other bad flag.
            print(f"paodekuai serve: error: {exc.message} [{exc.reason.value}]", file=sys.stderr)
            return 2
        return serve(settings)
    if args.command == "tables":
        return _delete_tables(args, os.environ)
    parser.error(f"unknown command {args.command!r}")


def _delete_tables(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    url = args.redis_url or environ.get("PAODEKUAI_REDIS_URL") or None
    if url is None:
        data_dir = args.data_dir or environ.get("PAODEKUAI_DATA_DIR") or "data"
        socket_path = os.path.abspath(os.path.join(data_dir, SOCKET_NAME))
        if not os.path.exists(socket_path):
            print(
                f"paodekuai tables: error: no Redis at {socket_path} (is the server running? "
                "give --redis-url for an external Redis)",
                file=sys.stderr,
            )
            return 2
        url = f"unix://{socket_path}"
    try:
        found = asyncio.run(_delete_on(url, args.ids))
    except (OSError, ConnectionError) as exc:
        print(f"paodekuai tables: error: Redis {redact_url(url)}: {exc}", file=sys.stderr)
        return 2
    for table_id, there in found.items():
        print(f"{'deleted' if there else 'not found'} {table_id}")
    return 0 if all(found.values()) else 1


async def _delete_on(url: str, ids: list[str]) -> dict[str, bool]:
    from redis.exceptions import RedisError

    from server.cluster.connect import connect
    from server.rooms.store import TableStore
    from server.rooms.tables import delete_tables

    try:
        clients = await connect(url)
    except RedisError as exc:
        raise ConnectionError(str(exc)) from None
    store = TableStore(clients.tables, _DEFAULTS.table_ttl_seconds)
    try:
        await clients.tables.ping()  # an unreachable Redis is said so, whatever the ids
        return await delete_tables(store, ids)
    except RedisError as exc:
        raise ConnectionError(str(exc)) from None
    finally:
        await store.aclose()
        await clients.aclose()


def browser_url(host: str, port: int) -> str:
    """The address a person should open for a server listening on ``host``."""
    if host in ("0.0.0.0", "::", ""):
        host = "localhost"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def redact_url(url: str) -> str:
    """``url`` with any password replaced, fit for logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:" if parts.username else ":"
    return urlunsplit(parts._replace(netloc=f"{user}***@{netloc}"))


class _Server(uvicorn.Server):
    """uvicorn's server, announcing the URL only once the socket is really listening."""

    def __init__(
        self,
        config: uvicorn.Config,
        on_started: Callable[[], None],
        on_stopping: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(config)
        self._on_started = on_started
        self._on_stopping = on_stopping

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_started()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # Hand the tables over before the sockets close: stop listening (reconnects go
        # to the other processes), release every lease, then let uvicorn drain.
        for server in self.servers:
            server.close()
        await self._on_stopping()
        await super().shutdown(sockets)


def _raise_shutdown(signum: int, frame: FrameType | None) -> None:
    raise _ShutdownRequested(signal.Signals(signum).name)


def serve(settings: Settings) -> int:
    """Run until SIGINT/SIGTERM; returns the process exit status."""
    configure_logging(
        settings.log_level,
        settings.log_format,
        settings.log_repeat_limit,
        settings.refused_access_log_limit,
    )
    previous_sigterm = signal.signal(signal.SIGTERM, _raise_shutdown)
    embedded: EmbeddedRedis | None = None
    try:
        if settings.redis_url is None:
            embedded = EmbeddedRedis(settings.data_dir)
            redis_url = embedded.start()
            embedded.supervise(on_restart=metrics.redis_restarted)
            log.info("storage: embedded Redis in %s (append-only, fsync always)", settings.data_dir)
        else:
            redis_url = settings.redis_url
            log.info("storage: external Redis at %s", redact_url(redis_url))

        # Imported late: the web app pulls in the whole game, which --help does not need.
        from server.app import create_app
        from server.transport import uvicorn_config

        app = create_app(settings, redis_url)
        config = uvicorn_config(app, settings)
        url = browser_url(settings.host, settings.port)
        tune_gc()

        def announce() -> None:
            print(f"Pao De Kuai is ready: open {url}", flush=True)

        async def hand_over() -> None:
            node = getattr(app.state, "node", None)
            if node is not None:
                await node.drain()
            feed = getattr(app.state, "lobby_feed", None)
            if feed is not None:
                await feed.close()

        _Server(config, announce, hand_over).run()
        return 0
    except EmbeddedRedisError as exc:
        log.error("cannot start the embedded Redis [%s]: %s", exc.reason.value, exc.message)
        return 1
    except (KeyboardInterrupt, _ShutdownRequested):
        return 0
    except SystemExit as exc:
        # uvicorn exits this way when it cannot bind or the app's startup fails.
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        if embedded is not None:
            embedded.stop()
        signal.signal(signal.SIGTERM, previous_sigterm)
        log.info("stopped")


def tune_gc() -> None:
    """Keep the cyclic collector's pauses out of players' latency.

    Measured with 200 live tables: full collections paused the event loop for
    60-140 ms about every 2 s, which was the whole p99.  Everything loaded at
    start-up is frozen (never scanned again), and young collections run less
    often, so full ones come about ten times more rarely; the game's own data
    is acyclic and freed by reference counting, so little waits for them.

    Young collections every 3,000 allocations and middle ones every 10 young
    collections (30,000 allocations): once the bots' plans stopped outliving their
    first collection (``server.bots.plan``), little survives a young collection,
    and smaller generations are scanned faster per object as well as for less
    time at once.  Against 10,000 and 5 at 1,000 tables: the collector's time
    over a run 0.84-0.85 s against 1.01-1.04 s, the longest young and middle
    pauses 6-10 and 14-17 ms against 20-22 and 37-38 ms, and in three
    interleaved pairs p99 17-25 ms against 27-46 ms at the same CPU per action
    (docs/performance.md, session 9).  Full collections stay as rare (one per
    run at 200 and at 1,000 tables).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, GC_MIDDLE_THRESHOLD, 100)


if __name__ == "__main__":
    sys.exit(main())
