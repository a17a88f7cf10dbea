"""Opening Redis: a single server (or Sentinel-managed primary) or a Redis Cluster.

Which one is read from the server itself (``INFO cluster``), so one URL setting
serves both.  Besides the client for the tables, the ``Bus`` needs a plain
connection to subscribe on: on a cluster any node will do, because a classic
PUBLISH is delivered cluster-wide.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from server.rooms.store import Redis

__all__ = ["POOL_SIZE", "POOL_TIMEOUT_SECONDS", "RedisClients", "connect"]

POOL_SIZE = 32
POOL_TIMEOUT_SECONDS = 10.0


@dataclass
class RedisClients:
    """The Redis clients of one process: tables (cluster-aware), one node, its pool."""

    tables: Redis
    # A plain client of one node: the bus subscribes and publishes through it.
    node: aioredis.Redis
    pool: aioredis.BlockingConnectionPool
    cluster: bool

    async def aclose(self) -> None:
        """Close every client and the pool."""
        if self.tables is not self.node:
            await self.tables.aclose()
        await self.node.aclose()
        await self.pool.aclose()


async def connect(url: str) -> RedisClients:
    """Clients for ``url``, a single server or a Redis Cluster (asked via ``INFO cluster``)."""
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


async def _cluster_enabled(node: aioredis.Redis) -> bool:
    try:
        info = await node.info("cluster")
    except (aioredis.RedisError, OSError):
        # Unreachable now: start as a single server; the app reports Redis down
        # until it answers (a cluster must be reachable at start-up to be used).
        return False
    return bool(info.get("cluster_enabled"))
