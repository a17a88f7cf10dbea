"""The owner's side of the bus (server/cluster/node.py) in a real server process,
with the test as a forwarding process on the same Redis: what a forwarder sends
counts only under the current fencing number, and a socket reported behind is
sent its full state again."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import redis
import websockets
from cluster_helpers import GUARD_SECONDS, Ghost, create_table, fence_of

from server.rooms.tokens import hash_token

if TYPE_CHECKING:
    from conftest import ServerFactory

# Long enough that the owner never forgets the ghost's socket for want of reports
# (it forgets one after four missed reports; the ghost sends none unasked).
LONG_LEASE = ["--lease-ttl", "30"]
CONN = 1


async def next_of(ws: websockets.ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
        if frame["type"] == kind:
            return frame


@dataclass
class Seated:
    ghost: Ghost
    table: str
    fence: int
    seat: int
    state: dict[str, Any]

    async def submit(self, frame: dict[str, Any], fence: int | None = None) -> None:
        number = self.fence if fence is None else fence
        await self.ghost.submit(self.table, number, CONN, self.seat, frame)

    async def hint(self) -> dict[str, Any]:
        """Ask for a hint and wait for the answer: every frame the owner sent this socket
        before it has been read."""
        await self.submit({"type": "hint", "version": self.state["version"]})
        return await self.ghost.frame("hint")


@asynccontextmanager
async def ghost_at_the_turn(
    server_process: ServerFactory, redis_url: str, sync_redis: redis.Redis
) -> AsyncIterator[Seated]:
    """A real owner of a quiet table (three people, no bot; its first socket made it the
    owner), and the ghost's socket forwarded to it for the seat whose turn it is."""
    owner = server_process(args=LONG_LEASE)
    table = create_table(owner.url, humans=3, bots=[])
    tid, tokens = table["table"], [s["token"] for s in table["seats"]]
    async with websockets.connect(owner.ws_url) as local:
        await local.send(json.dumps({"type": "join", "table": tid, "token": tokens[0]}))
        turn = (await next_of(local, "state"))["view"]["turn"]
        fence = fence_of(sync_redis, tid)
        assert fence is not None
        async with Ghost(redis_url) as ghost:
            token = hash_token(tokens[turn])
            await ghost.to_owner(tid, fence, "attach", conn=CONN, seat=turn, token=token)
            state = await ghost.frame("state")
            seated = Seated(ghost, tid, fence, turn, state)
            # Whatever the attach made the owner send (seats connected) is read by now.
            await seated.hint()
            yield seated


async def test_an_owner_drops_a_request_forwarded_under_a_former_fencing_number(
    server_process: ServerFactory, redis_url: str, sync_redis: redis.Redis
) -> None:
    async with ghost_at_the_turn(server_process, redis_url, sync_redis) as seated:
        version = seated.state["version"]
        play = seated.state["view"]["hints"][0]
        # A play sent while the table had the number before (to a former owner), then a
        # hint under the current number, in that order on the table's channel.
        await seated.submit({"type": "play", "version": version, "cards": play}, seated.fence - 1)
        await seated.submit({"type": "hint", "version": version})
        answer = await seated.ghost.frame("hint", "state", "error")
        assert (answer["type"], answer["version"]) == ("hint", version), answer
        assert sync_redis.llen(f"pdk:{{{seated.table}}}:log") == version


async def test_an_owner_resends_the_full_state_to_a_socket_reported_behind(
    server_process: ServerFactory, redis_url: str, sync_redis: redis.Redis
) -> None:
    async with ghost_at_the_turn(server_process, redis_url, sync_redis) as seated:
        version = seated.state["version"]
        # The forwarder's report: its socket saw nothing yet (a lost frame), then a hint.
        await seated.ghost.to_owner(
            seated.table, seated.fence, "alive", conns=[(CONN, seated.seat, version - 1)]
        )
        await seated.submit({"type": "hint", "version": version})
        again = await seated.ghost.frame("hint", "state", "error")
        assert (again["type"], again["version"]) == ("state", version), again
        assert again["view"]["hand"] == seated.state["view"]["hand"]
        assert (await seated.ghost.frame("hint", "state", "error"))["type"] == "hint"
