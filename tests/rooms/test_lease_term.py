"""A room's ``LeaseTerm`` (a real Redis, an injected clock): it asks Redis nothing while
the lease is surely held, renews once it may have run out, and a renewal the registry
made moves that moment on, never back."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from room_helpers import FakeClock, lease_of, new_table, take_over

from server.rooms.lease_term import LeaseTerm
from server.rooms.store import LeaseLost, TableStore

SECONDS = 3.0


async def taken_away(store: TableStore, redis: aioredis.Redis) -> tuple[LeaseTerm, FakeClock]:
    """A term held until ``SECONDS`` on a table another process has since taken: only a
    renewal can find that out (it raises ``LeaseLost``)."""
    meta, _ = await new_table(store, seed=1)
    lease = await lease_of(store, meta.id)
    clock = FakeClock()
    term = LeaseTerm(store, lease, clock, SECONDS, clock.now() + SECONDS)
    await take_over(redis, meta.id)
    return term, clock


async def test_nothing_is_asked_while_the_lease_is_surely_held(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    term, clock = await taken_away(store, redis_client)
    clock.advance(SECONDS - 0.01)
    await term.hold()


async def test_a_lease_that_may_have_run_out_is_renewed_first(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    term, clock = await taken_away(store, redis_client)
    clock.advance(SECONDS)
    with pytest.raises(LeaseLost):
        await term.hold()


async def test_the_registry_s_renewal_moves_the_term_on_and_never_back(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    term, clock = await taken_away(store, redis_client)
    term.renewed(clock.now() + 2 * SECONDS)
    term.renewed(clock.now() + 1)  # an older renewal's answer arriving late
    clock.advance(2 * SECONDS - 0.01)
    await term.hold()
    clock.advance(0.01)
    with pytest.raises(LeaseLost):
        await term.hold()
