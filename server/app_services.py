"""What the app's lifespan builds and its routes and game socket share."""

from __future__ import annotations

from dataclasses import dataclass

from server.budgets import SharedBuckets
from server.cluster.node import Node
from server.rooms.registry import Registry
from server.rooms.store import Redis, TableStore
from server.seat_limits import SeatLimits

__all__ = ["Services"]


@dataclass
class Services:
    """Redis, the table store, the room registry and the cluster node of this process,
    and the budgets shared through Redis; they live as long as the app."""

    redis: Redis
    store: TableStore
    registry: Registry
    node: Node
    # Frames per seat (--actions-per-second, bursts of twice that), shared through Redis.
    seat_limiter: SeatLimits
    # Table creation budgets, per address and in all (shared through Redis).
    buckets: SharedBuckets
