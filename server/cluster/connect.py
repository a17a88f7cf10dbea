"""Opening Redis: a single server, a primary found through Sentinel, or a Redis Cluster.

A ``redis+sentinel://`` URL (``server.redis_sentinel``) asks the sentinels for
the primary each time a connection is opened, so after a failover new
connections go to the new primary.  Otherwise single server or cluster is read
from the server itself (``INFO cluster``), so one URL setting serves both.
Besides the client for the tables, the ``Bus`` needs a plain connection to
subscribe on: on a cluster any node will do, because a classic
PUBLISH is delivered cluster-wide.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

from server.redis_sentinel import is_sentinel_url, parse_sentinel_url
from server.rooms.store import Redis

__all__ = ["POOL_SIZE", "POOL_TIMEOUT_SECONDS", "RedisClients", "connect"]

POOL_SIZE = 32
POOL_TIMEOUT_SECONDS = 10.0
# Asking one sentinel where the primary is: a sentinel that does not answer in this
# long is skipped for the next (each connection that is opened asks).
SENTINEL_TIMEOUT_SECONDS = 1.0


@dataclass
class RedisClients:
    """The Redis clients of one process: tables (cluster-aware), one node, its pool."""

    tables: Redis
    # A plain client of one node: the bus subscribes and publishes through it.
    node: aioredis.Redis
    pool: aioredis.BlockingConnectionPool
    cluster: bool
    # The sentinels asked for the primary (a ``redis+sentinel://`` URL), else None.
    sentinel: Sentinel | None = None

    async def aclose(self) -> None:
        """Close every client and the pool."""
        if self.tables is not self.node:
            await self.tables.aclose()
        await self.node.aclose()
        await self.pool.aclose()
        if self.sentinel is not None:
            await self.sentinel.aclose()


async def connect(url: str) -> RedisClients:
    """Clients for ``url``: the primary of a ``redis+sentinel://`` URL, else a single
    server or a Redis Cluster (asked via ``INFO cluster``)."""
    if is_sentinel_url(url):
        return _connect_sentinel(url)
    # A bounded pool that waits for a free connection: hundreds of rooms writing at
    # once queue here instead of failing with "Too many connections".
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=POOL_SIZE, timeout=POOL_TIMEOUT_SECONDS
    )
    node = aioredis.Redis(connection_pool=pool)
    cluster = await _cluster_enabled(node)
    if not cluster:
        return RedisClients(node, node, pool, cluster=False)
    tables = RedisCluster.from_url(url, max_connections=POOL_SIZE)
    await tables.initialize()
    return RedisClients(tables, node, pool, cluster=True)


class _BlockingSentinelPool(SentinelConnectionPool, aioredis.BlockingConnectionPool):
    """Connections to the sentinels' current primary, waiting for a free one (as the
    plain pool does) rather than failing with "Too many connections"."""


def _connect_sentinel(url: str) -> RedisClients:
    target = parse_sentinel_url(url)
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        list(target.sentinels),
        sentinel_kwargs={
            "password": target.sentinel_password,
            "socket_timeout": SENTINEL_TIMEOUT_SECONDS,
            "socket_connect_timeout": SENTINEL_TIMEOUT_SECONDS,
        },
    )
    pool = _BlockingSentinelPool(  # type: ignore[no-untyped-call]
        target.service,
        sentinel,
        max_connections=POOL_SIZE,
        timeout=POOL_TIMEOUT_SECONDS,
        db=target.db,
        username=target.username,
        password=target.password,
    )
    node = aioredis.Redis(connection_pool=pool)
    # Never a cluster: Sentinel watches one primary and its replicas.
    return RedisClients(node, node, pool, cluster=False, sentinel=sentinel)


async def _cluster_enabled(node: aioredis.Redis) -> bool:
    try:
        info = await node.info("cluster")
    except (aioredis.RedisError, OSError):
        # Unreachable now: start as a single server; the app reports Redis down
        # until it answers (a cluster must be reachable at start-up to be used).
        return False
    return bool(info.get("cluster_enabled"))
