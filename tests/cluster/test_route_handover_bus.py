"""Both ends of a handover on the bus, with the test as the other process (a ``Ghost``):
an owner runs every request forwarded before the ``yield`` and releases the lease
before it says ``yours``; a forwarder holds what its sockets send after the ``yield``
and gives it to the room it takes, never to the old owner."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import msgspec
import redis
import websockets
from cluster_helpers import GUARD_SECONDS, Ghost, create_table, fence_of, health, log_of, owner_of
from cluster_helpers import until as wait_until

from server.cluster.bus import ToProcess
from server.rooms.tokens import hash_token

if TYPE_CHECKING:
    from conftest import ServerFactory

CONN = 7


async def next_of(ws: websockets.ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
        if frame["type"] == kind:
            return frame


def seat_name(client: redis.Redis, table: str, seat: int) -> str:
    return log_of(client, table)[0].seats[seat].name


async def test_an_owner_runs_what_came_before_the_yield_then_frees_the_lease_then_says_yours(
    server_process: ServerFactory, redis_url: str, sync_redis: redis.Redis
) -> None:
    owner = server_process(args=["--handover-after", "0.5"])
    table = create_table(owner.url, humans=3, bots=[])
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    # A socket makes the process the owner, and leaves: from now on only the ghost's.
    async with websockets.connect(owner.ws_url) as local:
        await local.send(json.dumps({"type": "join", "table": tid, "token": tokens[0]}))
        await next_of(local, "state")
    fence = fence_of(sync_redis, tid)
    assert fence is not None
    async with Ghost(redis_url) as ghost:
        token = hash_token(tokens[1])
        await ghost.to_owner(tid, fence, "attach", conn=CONN, seat=1, token=token)
        version = (await ghost.frame("state"))["version"]
        offer = await ghost.handover("offer")
        assert (offer.table, offer.fence) == (tid, fence)
        # A request, then the answer behind it: the owner must run the request first.
        rename = {"type": "rename", "version": version, "name": "Before"}
        await ghost.submit(tid, fence, CONN, 1, rename)
        await ghost.to_owner(tid, fence, "yield")
        yours = await ghost.handover("yours")
        assert (yours.table, yours.fence) == (tid, fence)
        assert owner_of(sync_redis, tid) is None  # free before "yours" was said
        assert seat_name(sync_redis, tid, 1) == "Before"
    report = health(owner.url)
    assert (report["tables_owned"], report["tables_handed_over"]) == (0, 1)


async def test_a_forwarder_holds_requests_after_its_yield_and_gives_them_to_the_room_it_takes(
    server_process: ServerFactory, redis_url: str, sync_redis: redis.Redis
) -> None:
    other = server_process()
    table = create_table(other.url, humans=3, bots=[])
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    # The ghost owns the table (as the acquire script would have it).
    fence = int(sync_redis.incr(f"pdk:{{{tid}}}:fence"))
    sync_redis.set(f"pdk:{{{tid}}}:lease", f"{fence} ghost", px=60_000)
    async with Ghost(redis_url, tables=[tid]) as ghost:
        async with websockets.connect(other.ws_url) as ws:
            await ws.send(json.dumps({"type": "join", "table": tid, "token": tokens[1]}))
            attach = await ghost.heard_by_owner()
            assert (attach.kind, attach.seat) == ("attach", 1)
            offer = ToProcess(table=tid, fence=fence, conn=0, handover="offer")
            await ghost.to_process(attach.proc, offer)
            while (answer := await ghost.heard_by_owner()).kind == "alive":
                pass
            assert answer.kind == "yield"
            # Sent after the yield: held on the forwarding process, not sent to the ghost.
            version = int(sync_redis.llen(f"pdk:{{{tid}}}:log"))
            rename = {"type": "rename", "version": version, "name": "Held"}
            await ws.send(json.dumps(rename))
            sync_redis.delete(f"pdk:{{{tid}}}:lease")
            yours = ToProcess(table=tid, fence=fence, conn=0, handover="yours")
            await ghost.to_process(attach.proc, yours)
            # Taken under the open socket: a full state from the new room, then the rename.
            state = await next_of(ws, "state")
            assert state["version"] == version
            await wait_until(lambda: seat_name(sync_redis, tid, 1) == "Held", "the rename ran")
            assert owner_of(sync_redis, tid) == attach.proc
            assert fence_of(sync_redis, tid) == fence + 1
        assert [m.kind for m in await ghost.heard_so_far() if m.kind == "submit"] == []


class ToProcessBeforeHandover(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``ToProcess`` as the release before the handover (b9f181a) reads it."""

    table: str
    fence: int
    conn: int
    frame: str | None = None
    close: int | None = None
    reason: str = ""


def test_frames_and_closes_of_a_new_owner_still_read_on_a_process_of_the_release_before() -> None:
    # A rolling upgrade runs both releases on one bus: an old forwarder must read them.
    for message in (
        ToProcess(table="t", fence=3, conn=9, frame='{"type":"state"}'),
        ToProcess(table="t", fence=3, conn=9, close=4503, reason="table unavailable"),
    ):
        old = msgspec.json.decode(msgspec.json.encode(message), type=ToProcessBeforeHandover)
        assert (old.frame, old.close, old.reason) == (message.frame, message.close, message.reason)
