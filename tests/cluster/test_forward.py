"""A forwarder (server/cluster/forward.py) in a real server process, with the test
as the table's owner on the same Redis bus: only the current owner reaches its
sockets."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import redis
import websockets
from cluster_helpers import GUARD_SECONDS, Ghost, create_table, fence_of, health

from server.cluster.bus import ToProcess

if TYPE_CHECKING:
    from conftest import ServerFactory


async def next_of(ws: websockets.ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
        if frame["type"] == kind:
            return frame


async def join(url: str, table: str, token: str) -> websockets.ClientConnection:
    ws = await websockets.connect(url)
    await ws.send(json.dumps({"type": "join", "table": table, "token": token}))
    return ws


def marked(code: str) -> str:
    return json.dumps({"type": "error", "code": code, "message": code, "version": None})


async def test_a_forwarder_drops_frames_sent_under_a_former_owners_fencing_number(
    server_process: ServerFactory, redis_url: str, sync_redis: redis.Redis
) -> None:
    owner, other = server_process(), server_process()
    # Three people and no bot: nothing moves unless someone does.
    table = create_table(owner.url, humans=3, bots=[])
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    local = await join(owner.ws_url, tid, tokens[0])
    await next_of(local, "state")
    async with Ghost(redis_url, tables=[tid]) as ghost:
        remote = await join(other.ws_url, tid, tokens[1])
        await next_of(remote, "state")
        proc = health(other.url)["process"]
        # The forwarder's attach names its socket's id on the bus, and the owner's number.
        while (attach := await ghost.heard_by_owner()).kind != "attach" or attach.proc != proc:
            pass
        fence = fence_of(sync_redis, tid)
        assert attach.fence == fence
        # A frame from the number before (a former owner that woke up), then one from the
        # current owner, published in that order on the process's channel.
        for number, code in [(fence - 1, "from_former_owner"), (fence, "from_owner")]:
            frame = marked(code)
            await ghost.to_process(proc, ToProcess(tid, number, attach.conn, frame=frame))
        assert (await next_of(remote, "error"))["code"] == "from_owner"
        await remote.close()
    await local.close()
