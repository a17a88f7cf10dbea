"""Delta frames over real sockets: rebuilt views equal the full ones, nothing leaks, resync."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import websockets
from test_app import (
    GUARD_SECONDS,
    Client,
    LiveServer,
    create_table,
    log_of,
    other_hands,
    play_turn,
)

from server import engine
from server.deltas import Mirror
from tests.server.frame_tables import card_codes


class DeltaClient(Client):
    """A socket that joined with ``deltas``: keeps its picture as the browser does (a
    ``Mirror``) and asks for a resync whenever it loses track."""

    def __init__(self, ws: websockets.ClientConnection) -> None:
        super().__init__(ws)
        self.mirror = Mirror()
        self.raw: list[dict[str, Any]] = []
        self.resyncs: list[str] = []
        # Test hook: the next delta is dropped as if it never arrived.
        self.drop_next = False

    @classmethod
    async def join(cls, ws_url: str, table: str, token: str) -> DeltaClient:
        ws = await websockets.connect(ws_url)
        join = {"type": "join", "table": table, "token": token, "deltas": True}
        await ws.send(json.dumps(join))
        return cls(ws)

    async def next(self, kind: str | None = None) -> dict[str, Any]:
        while True:
            frame: dict[str, Any] = json.loads(
                await asyncio.wait_for(self.ws.recv(), GUARD_SECONDS)
            )
            self.raw.append(frame)
            if frame["type"] == "d" and self.drop_next:
                self.drop_next = False
                continue
            if frame["type"] in ("state", "watch", "d", "p"):
                whole = self.mirror.take(frame)
                if isinstance(whole, str):
                    self.resyncs.append(whole)
                    await self.send({"type": "resync", "reason": whole})
                if not isinstance(whole, dict):
                    continue
                frame = whole
            self.frames.append(frame)
            if kind is None or frame["type"] == kind:
                return frame

    def wholes(self) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] in ("state", "watch")]


def leader_is_seat_0(preset: str) -> int:
    rules = engine.PRESETS[preset]
    return next(s for s in range(1000) if engine.new_match(rules, s).deal.turn == 0)


async def play_seat(client: DeltaClient) -> dict[str, Any]:
    """Play ``client``'s seat to the end of the match; its last whole frame."""
    frame = await client.next("state")
    acted_at = -1
    while not frame["view"]["match_over"]:
        view = frame["view"]
        if view["turn"] == view["seat"] and frame["version"] > acted_at:
            acted_at = frame["version"]
            await play_turn(client, frame)
        frame = await client.next("state")
    return frame


async def watch(client: DeltaClient) -> dict[str, Any]:
    frame = await client.next("watch")
    while not frame["view"]["match_over"]:
        frame = await client.next("watch")
    return frame


async def listen_until(client: Client, last: dict[str, Any]) -> list[dict[str, Any]]:
    """The whole frames ``client`` (a full-frame socket) got, up to one equal to ``last``."""
    while True:
        frame = await client.next()
        if (frame["type"], frame["version"]) == (last["type"], last["version"]) and (
            frame["table"],
            frame["view"],
        ) == (last["table"], last["view"]):
            return [f for f in client.frames if f["type"] in ("state", "watch")]


def assert_same_sequence(rebuilt: list[dict[str, Any]], full: list[dict[str, Any]]) -> None:
    """From the delta socket's first frame on, both sockets were told the same.  That
    first frame may be its own (a seat that already had a socket tells nobody else of
    another one): then it shows what the reference was last shown."""
    # A frame that shows nothing new (a new watch link's hash changed) is not sent as a
    # delta: drop those from the reference too.
    full = [
        f
        for i, f in enumerate(full)
        if i == 0
        or f["events"]
        or (f["version"], f["table"], f["view"])
        != (full[i - 1]["version"], full[i - 1]["table"], full[i - 1]["view"])
    ]
    first = rebuilt[0]
    if first in full:
        start = full.index(first)
    else:
        start = full.index(rebuilt[1]) - 1
        assert first["events"] == []
        assert (full[start]["table"], full[start]["view"]) == (first["table"], first["view"])
    assert full[start + 1 : start + len(rebuilt)] == rebuilt[1:]


# The wire form's ``revealed`` (server/deltas/wire.py): a seat's own at the deal's end.
REVEALED = "20"


def delta_leaks(raw: list[dict[str, Any]], hands_at: Any, watching: bool) -> set[str]:
    """Cards of other hands named by any delta or whole picture (a seat's own revealed at
    the end is not a leak: the whole frame shows those too, and only then)."""
    leaked: set[str] = set()
    for frame in raw:
        if frame["type"] == "p":
            named = card_codes([frame["w"][: int(REVEALED)], frame["t"], frame.get("e", [])])
        elif frame["type"] == "d":
            ops = frame["o"]
            if not watching:
                ops = [op for op in ops if str(op[0]).split("/")[0] != REVEALED]
            named = card_codes([ops, frame.get("t", []), frame.get("e", [])])
        else:
            continue
        leaked |= named & hands_at(frame["v"])
    return leaked


@pytest.mark.parametrize("humans", [1, 3])
@pytest.mark.parametrize("preset", sorted(engine.PRESETS))
async def test_every_seat_and_a_spectator_rebuild_the_full_view_at_every_version(
    http: httpx.AsyncClient, live: LiveServer, preset: str, humans: int
) -> None:
    table = await create_table(
        http,
        seed=leader_is_seat_0(preset),
        rules=preset,
        humans=humans,
        bots=["normal"] * (3 - humans),
        bot_speed_ms=0,
        turn_seconds=0,
    )
    table_id = table["table"]
    tokens = [seat["token"] for seat in table["seats"]]
    # A socket that takes whole frames at every seat first: the reference.
    full = [await Client.join(live.ws_url, table_id, token) for token in tokens]
    first = await full[0].next("state")
    await full[0].send({"type": "watch_link", "version": first["version"]})
    link = await full[0].next("invite")
    full_watcher = await Client.join(live.ws_url, table_id, link["token"])
    await full_watcher.next("watch")
    watcher = await DeltaClient.join(live.ws_url, table_id, link["token"])
    players = [await DeltaClient.join(live.ws_url, table_id, token) for token in tokens]
    lasts = await asyncio.gather(watch(watcher), *(play_seat(p) for p in players))

    meta = await live.store.load_meta(table_id)
    assert meta is not None
    log = await log_of(live.store, table_id)
    for seat, (player, reference) in enumerate(
        zip([watcher, *players], [full_watcher, *full], strict=True)
    ):
        assert_same_sequence(player.wholes(), await listen_until(reference, lasts[seat]))
        assert player.resyncs == []
        assert sum(f["type"] == "d" for f in player.raw) > 10
        watching = player is watcher

        def hands_at(version: int, seat: int = seat - 1, watching: bool = watching) -> set[str]:
            return other_hands(meta, log, version, -1 if watching else seat)

        assert delta_leaks(player.raw, hands_at, watching) == set()
    for socket in [watcher, full_watcher, *players, *full]:
        await socket.close()


async def test_a_lost_delta_or_a_wrong_picture_is_repaired_by_a_resync_with_the_full_view(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=leader_is_seat_0("classic"), bot_speed_ms=0)
    table_id = table["table"]
    client = await DeltaClient.join(live.ws_url, table_id, table["seats"][0]["token"])
    frame = await client.next("state")
    await client.send({"type": "watch_link", "version": frame["version"]})
    link = await client.next("invite")

    # A delta goes missing (the one telling of this seat's play and the bots' answers):
    # the next one, of a spectator coming in, does not start where the client stands.
    client.drop_next = True
    await play_turn(client, frame)
    watcher = await Client.join(live.ws_url, table_id, link["token"])
    frame = await client.state_where(lambda f: f["table"]["spectators"] == 1)
    assert client.resyncs == ["gap"], [
        (f["type"], f.get("version", f.get("v")), f.get("f"), f.get("o")) for f in client.raw
    ]
    assert client.raw[-1]["type"] == "p"
    assert frame["view"]["turn"] == 0
    # The client's picture goes wrong (a bug of its own): the digest says so.
    assert client.mirror.picture is not None
    client.mirror.picture["v"][19][0] = 99  # the wire form's counter, its 3s
    await watcher.close()
    frame = await client.state_where(lambda f: f["table"]["spectators"] == 0)
    assert client.resyncs == ["gap", "digest"]
    assert client.raw[-1]["type"] == "p"
    assert frame["view"]["counter"]["3"] != 99
    # And deltas go on from the full view the resync brought.
    await play_turn(client, frame)
    await client.state_where(lambda f: f["version"] > frame["version"])
    assert client.raw[-1]["type"] == "d"
    assert client.resyncs == ["gap", "digest"]
    await client.close()
