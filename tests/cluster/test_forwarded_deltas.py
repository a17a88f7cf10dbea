"""Deltas through a forwarding process: the owner makes them for the forwarded socket
(per seat, as for a local one), the forwarder passes them on, and a resync crosses."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import websockets
from cluster_helpers import GUARD_SECONDS, create_table, health

from server import engine
from server.deltas import Mirror

if TYPE_CHECKING:
    from conftest import ServerFactory

FIXED_SEEDS = ["--allow-fixed-seeds", "yes"]


async def frames_of(ws: websockets.ClientConnection) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GUARD_SECONDS))
    return frame


async def test_a_forwarded_socket_rebuilds_every_picture_from_deltas_and_can_resync(
    server_process: ServerFactory,
) -> None:
    owner, other = server_process(args=FIXED_SEEDS), server_process(args=FIXED_SEEDS)
    seed = next(s for s in range(1000) if engine.new_match(engine.Rules(), s).deal.turn == 0)
    table = create_table(owner.url, seed=seed, bot_speed_ms=0)
    tid, token = table["table"], table["seats"][0]["token"]
    # Seat 0 on the owner (its first socket makes that process the owner), whole frames;
    # a second socket of seat 0 through the other process, taking deltas.
    host = await websockets.connect(owner.ws_url)
    await host.send(json.dumps({"type": "join", "table": tid, "token": token}))
    told = [await frames_of(host)]
    watcher = await websockets.connect(other.ws_url)
    await watcher.send(json.dumps({"type": "join", "table": tid, "token": token, "deltas": True}))
    first = await frames_of(watcher)
    assert first["type"] == "p"
    assert health(other.url)["sockets_forwarded"] == 1

    async def play() -> None:
        while (frame := told[-1])["view"]["result"] is None:
            view = frame["view"]
            if view["turn"] == 0 and frame["type"] == "state":
                cards = view["hints"][0] if view["hints"] else None
                move = {"type": "play", "cards": cards} if cards else {"type": "pass"}
                await host.send(json.dumps({**move, "version": frame["version"]}))
            told.append(await frames_of(host))

    async def rebuild() -> tuple[list[dict[str, Any]], list[str]]:
        mirror, rebuilt, kinds = Mirror(), [], []
        rebuilt.append(mirror.take(first))
        # Until the deal is over and the resync asked for is answered: on a loaded
        # machine the deal could end before the answer came, which then went unread.
        while rebuilt[-1]["view"]["result"] is None or "p" not in kinds[5:]:
            raw = await frames_of(watcher)
            kinds.append(raw["type"])
            whole = mirror.take(raw)
            assert isinstance(whole, dict), whole
            rebuilt.append(whole)
            if kinds.count("d") == 5 and raw["type"] == "d":
                # Ask as a client that lost track would: the owner sends a whole frame.
                await watcher.send(json.dumps({"type": "resync", "reason": "gap"}))
        return rebuilt, kinds

    try:
        (rebuilt, kinds), _ = await asyncio.gather(rebuild(), play())
    finally:
        await host.close()
        await watcher.close()
    # Every picture the forwarded socket rebuilt is one the host's socket was shown.
    shown = [(f["version"], f["table"], f["view"]) for f in told if f["type"] == "state"]
    assert all((f["version"], f["table"], f["view"]) in shown for f in rebuilt)
    assert rebuilt[-1]["version"] == told[-1]["version"]
    # Deltas crossed, and the resync brought a whole picture amid them.
    assert kinds.count("d") >= 10
    assert "p" in kinds[5:]
