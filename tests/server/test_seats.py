"""Tables with friends over real sockets: the stand-in, hand-back, the clock across a
SIGKILL, host controls, invites, spectators and emotes (uvicorn in-process or a
``paodekuai serve`` subprocess, a real Redis, the ``websockets`` client)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import redis
from test_app import (
    GUARD_SECONDS,
    Client,
    LiveServer,
    create_table,
    leader_seed,
    log_of,
    play_to_result,
    play_turn,
    run_live,
)

from server.config import Settings
from server.rooms.log import TableMeta

QUOTED_CARD = re.compile(r'"([3-9TJQKA2][SHDC])"')


def connected(frame: dict[str, Any], seat: int) -> bool:
    return bool(frame["table"]["seats"][seat]["connected"])


def auto(frame: dict[str, Any], seat: int) -> bool:
    return bool(frame["table"]["seats"][seat]["auto"])


def moved(frame: dict[str, Any], seat: int) -> bool:
    return any(m["seat"] == seat for m in frame["view"]["moves"])


class Player:
    """What a background player has seen: ``until`` waits for a state it saw."""

    def __init__(self) -> None:
        self.seen: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.last: dict[str, Any] | None = None

    async def until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            frame = await asyncio.wait_for(self.seen.get(), GUARD_SECONDS)
            self.last = frame
            if predicate(frame):
                return frame


@contextlib.asynccontextmanager
async def playing(client: Client, *, next_deals: bool = True) -> AsyncIterator[Player]:
    """In the background, ``client`` plays each of its turns (and deals on)."""
    player = Player()

    async def loop() -> None:
        acted = -1
        # Start from the last state already read: it may be this seat's turn.
        states = [f for f in client.frames if f["type"] == "state"]
        frame = states[-1] if states else await client.next("state")
        while True:
            player.seen.put_nowait(frame)
            if frame["version"] > acted:
                acted = frame["version"]
                await act(frame)
            frame = await client.next("state")

    async def act(frame: dict[str, Any]) -> None:
        if frame["view"]["result"] is None:
            await play_turn(client, frame)
        elif next_deals and not frame["view"]["match_over"]:
            await client.send({"type": "next_deal", "version": frame["version"]})

    task = asyncio.create_task(loop())
    try:
        yield player
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def seat_two(live_ws: str, table: dict[str, Any]) -> tuple[Client, Client]:
    host = await Client.join(live_ws, table["table"], table["seats"][0]["token"])
    friend = await Client.join(live_ws, table["table"], table["seats"][1]["token"])
    await host.state_where(lambda f: connected(f, 0) and connected(f, 1))
    await friend.state_where(lambda f: connected(f, 0) and connected(f, 1))
    return host, friend


async def error(client: Client, message: dict[str, Any]) -> dict[str, Any]:
    await client.send(message)
    return await client.next("error")


# --- stand-in and hand-back ---------------------------------------------------------


async def test_a_stand_in_plays_for_a_human_who_left_and_they_play_again_on_return(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    table = await create_table(
        http, humans=2, bots=["easy"], seed=leader_seed(0), deals=5,
        bot_speed_ms=0, turn_seconds=0, grace_seconds=5,
    )  # fmt: skip
    host, friend = await seat_two(live.ws_url, table)
    await friend.close()
    async with playing(host) as player:
        # No clock runs (turn_seconds 0): only the grace time lets the table move on.
        stood_in = await player.until(lambda f: moved(f, 1) and auto(f, 1))
        assert not connected(stood_in, 1)
        entries = await log_of(live.store, table["table"])
        assert any(getattr(e, "seat", None) == 1 for e in entries)

        friend = await Client.join(live.ws_url, table["table"], table["seats"][1]["token"])
        back = await friend.state_where(lambda f: connected(f, 1))
        assert not auto(back, 1)  # reconnecting hands the seat back
        assert back["view"]["hand"]  # the same seat, the same (shrunken) hand
        frame = back
        while frame["view"]["turn"] != 1 or frame["view"]["result"] is not None:
            frame = await friend.next("state")
        await play_turn(friend, frame)
        after = await friend.state_where(lambda f: f["version"] > frame["version"])
        assert after["events"][0]["seat"] == 1
        assert not auto(after, 1)
    await host.close()
    await friend.close()


# --- the clock across a SIGKILL -------------------------------------------------------


@pytest.mark.waits
async def test_the_turn_clock_survives_a_sigkill_restart_from_its_stored_deadline(
    server_process: Any, sync_redis: redis.Redis
) -> None:
    srv = await asyncio.to_thread(server_process, args=["--allow-fixed-seeds", "yes"])
    async with httpx.AsyncClient(base_url=srv.url, timeout=60) as http:
        table = await create_table(
            http, humans=2, bots=["easy"], seed=leader_seed(1), bot_speed_ms=0,
            turn_seconds=20, grace_seconds=300,
        )  # fmt: skip
    host, friend = await seat_two(srv.ws_url, table)
    # The friend's join settles the seats: seat 1 (holding the 3 of spades) is on the clock.
    running = host.frames[-1]
    clock = running["table"]["clock"]
    assert clock is not None
    assert clock["seat"] == 1
    assert 0 < clock["remaining_ms"] <= 20_000
    stored = msgspec.json.decode(
        sync_redis.get(f"pdk:{{{table['table']}}}:meta") or b"", type=TableMeta
    ).clock
    assert stored is not None
    assert round(stored.deadline * 1000) == clock["deadline"]

    await asyncio.to_thread(srv.kill)
    await host.close_code()
    await asyncio.to_thread(srv.start)
    host, friend = await seat_two(srv.ws_url, table)
    # The latest state after both rejoined: the same turn, the same deadline; the
    # restart did not give seat 1 a fresh clock, and the time left kept running down
    # (by however long the restart took: that is the machine's business).
    again = host.frames[-1]["table"]["clock"]
    assert again is not None
    assert again["seat"] == 1
    assert again["deadline"] == clock["deadline"]
    assert again["remaining_ms"] <= clock["remaining_ms"]
    # Nobody acts: when the stored deadline passes, the stand-in plays seat 1's turn.
    stood_in = await host.state_where(lambda f: moved(f, 1))
    assert auto(stood_in, 1)
    # Not before the deadline (a loaded machine only makes it later).
    assert time.time() * 1000 >= clock["deadline"] - 50
    await host.close()
    await friend.close()


# --- host controls and invites ------------------------------------------------------


async def test_host_actions_from_another_seat_or_stale_are_refused_and_change_nothing(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    table = await create_table(http, humans=3, bots=[], seed=1)
    host, friend = await seat_two(live.ws_url, table)
    frame = friend.frames[-1]
    version = frame["version"]
    meta_before = await live.store.load_meta(table["table"])
    for message in (
        {"type": "invite", "version": version, "seat": 2},
        {"type": "make_bot", "version": version, "seat": 2},
        {"type": "open_seat", "version": version, "seat": 2},
        {"type": "watch_link", "version": version},
    ):
        refusal = await error(friend, message)
        assert refusal["code"] == "not_host", message
        assert refusal["message"]
    stale = await error(host, {"type": "invite", "version": version + 5, "seat": 2})
    assert stale["code"] == "stale_version"
    present = await error(host, {"type": "make_bot", "version": version, "seat": 1})
    assert present["code"] == "seat_present"
    own = await error(host, {"type": "make_bot", "version": version, "seat": 0})
    assert own["code"] == "host_seat"
    assert await live.store.load_meta(table["table"]) == meta_before
    await host.close()
    await friend.close()


async def test_a_reissued_invite_works_and_the_old_one_is_refused_as_revoked(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    table = await create_table(http, humans=2, bots=["easy"], seed=1)
    host, friend = await seat_two(live.ws_url, table)
    await host.send({"type": "invite", "version": host.frames[-1]["version"], "seat": 1})
    invite = await host.next("invite")
    assert invite["kind"] == "seat"
    assert invite["seat"] == 1
    assert invite["invite"] == f"/#table={table['table']}&token={invite['token']}"
    # The old token stops at once: its open socket is ended, a new join is refused.
    assert await friend.close_code() == 4401
    old = await Client.join(live.ws_url, table["table"], table["seats"][1]["token"])
    refusal = await old.next("error")
    assert refusal["code"] == "invite_revoked"
    assert await old.close_code() == 4401
    fresh = await Client.join(live.ws_url, table["table"], invite["token"])
    seated = await fresh.next("state")
    assert seated["view"]["seat"] == 1
    await host.close()
    await fresh.close()


async def test_a_left_seat_becomes_a_bot_and_an_open_bot_seat_takes_a_new_person_between_deals(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    table = await create_table(
        http, humans=2, bots=["easy"], seed=leader_seed(0), deals=5, bot_speed_ms=0
    )
    host, friend = await seat_two(live.ws_url, table)
    await friend.close()
    frame = await host.state_where(lambda f: not connected(f, 1))
    await host.send({"type": "make_bot", "version": frame["version"], "seat": 1})
    frame = await host.state_where(lambda f: f["table"]["seats"][1]["kind"] == "bot")
    assert frame["table"]["humans"] == 1
    gone = await Client.join(live.ws_url, table["table"], table["seats"][1]["token"])
    assert (await gone.next("error"))["code"] == "invite_revoked"

    # Mid-deal a bot seat cannot be opened; between deals it can.
    refusal = await error(
        host, {"type": "open_seat", "version": host.frames[-1]["version"], "seat": 2}
    )
    assert refusal["code"] in {"not_between_deals", "stale_version"}
    async with playing(host, next_deals=False) as player:
        over = await player.until(lambda f: f["view"]["result"] is not None)
    await host.send({"type": "open_seat", "version": over["version"], "seat": 2})
    invite = await host.next("invite")
    newcomer = await Client.join(live.ws_url, table["table"], invite["token"])
    joined = await newcomer.next("state")
    assert joined["view"]["seat"] == 2
    assert joined["table"]["seats"][2]["kind"] == "human"
    assert joined["view"]["totals"] == over["view"]["totals"]  # the seat's score stays
    await host.close()
    await newcomer.close()


async def test_an_open_seat_invite_expires_when_the_next_deal_starts(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    table = await create_table(
        http, humans=1, bots=["easy", "easy"], seed=leader_seed(0), deals=5, bot_speed_ms=0
    )
    host = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    async with playing(host, next_deals=False) as player:
        over = await player.until(lambda f: f["view"]["result"] is not None)
    await host.send({"type": "open_seat", "version": over["version"], "seat": 1})
    invite = await host.next("invite")
    await host.send({"type": "next_deal", "version": over["version"]})
    await host.state_where(lambda f: f["view"]["result"] is None)
    late = await Client.join(live.ws_url, table["table"], invite["token"])
    refusal = await late.next("error")
    assert refusal["code"] == "invite_expired"
    assert await late.close_code() == 4401
    await host.close()


# --- spectators and emotes ------------------------------------------------------------


async def test_a_spectator_sees_the_public_table_never_a_hand_and_cannot_act(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    table = await create_table(http, seed=leader_seed(1), bot_speed_ms=0)
    host = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    # The bots open the deal; on the host's turn the table holds still for the request.
    first = await host.state_where(lambda f: f["view"]["turn"] == 0)
    await host.send({"type": "watch_link", "version": first["version"]})
    link = await host.next("invite")
    assert link["kind"] == "watch"
    assert link["invite"] == f"/#table={table['table']}&watch={link['token']}"
    watcher = await Client.join(live.ws_url, table["table"], link["token"])
    watched = await watcher.next("watch")
    assert "hand" not in watched["view"]
    assert watched["table"]["spectators"] == 1
    counted = await host.state_where(lambda f: f["table"]["spectators"] == 1)
    refusal = await error(watcher, {"type": "pass", "version": watched["version"]})
    assert refusal["code"] == "spectator"
    # A whole deal: every card a spectator frame names has been played (or is the
    # rules' removed ace), so none is still in anyone's hand.
    end = await play_to_result(host, counted)
    frames = [watched]
    while frames[-1]["version"] < end["version"]:
        frames.append(await watcher.next("watch"))
    for frame in frames:
        played = {c for m in frame["view"]["moves"] for c in m["cards"]}
        # Quoted codes only: a random table id may hold "KS" somewhere inside it.
        named = set(QUOTED_CARD.findall(msgspec.json.encode(frame).decode()))
        assert named - played <= {frame["view"]["rules"]["removed_ace"]}
    assert frames[-1]["view"]["result"] is not None
    await watcher.close()
    await host.close()


@pytest.fixture
async def gallery_of_one(redis_url: str, client_dir: Path) -> AsyncIterator[LiveServer]:
    """A live server whose tables take one spectator each."""
    settings = Settings(client_dir=client_dir, allow_fixed_seeds=True, max_spectators=1)
    async for server in run_live(settings, redis_url):
        yield server


async def test_a_full_gallery_refuses_one_more_spectator_with_close_4429(
    gallery_of_one: LiveServer,
) -> None:
    async with httpx.AsyncClient(base_url=gallery_of_one.url, timeout=60) as http:
        table = await create_table(http, seed=leader_seed(0), bot_speed_ms=0)
    ws_url = gallery_of_one.ws_url
    host = await Client.join(ws_url, table["table"], table["seats"][0]["token"])
    first = await host.state_where(lambda f: f["view"]["turn"] == 0)
    await host.send({"type": "watch_link", "version": first["version"]})
    link = await host.next("invite")
    watcher = await Client.join(ws_url, table["table"], link["token"])
    await watcher.next("watch")
    # The link is good: the gallery is full, which is "try again later" (4429), not a
    # bad token (4401, after which a client gives the link up).
    late = await Client.join(ws_url, table["table"], link["token"])
    assert (await late.next("error"))["code"] == "too_many_spectators"
    assert await late.close_code() == 4429
    await watcher.close()
    await host.close()


async def test_emotes_reach_every_seat_and_a_flood_is_rate_limited(
    live: LiveServer, http: httpx.AsyncClient
) -> None:
    table = await create_table(http, humans=2, bots=["easy"], seed=1)
    host, friend = await seat_two(live.ws_url, table)
    await friend.send({"type": "emote", "emote": "thumbs_up"})
    heard = await host.next("emote")
    assert heard == {"type": "emote", "seat": 1, "emote": "thumbs_up"}
    unknown = await error(friend, {"type": "emote", "emote": "free text"})
    assert unknown["code"] == "invalid_message"
    for _ in range(5):
        await friend.send({"type": "emote", "emote": "wave"})
    limited = await friend.next("error")
    assert limited["code"] == "too_many_emotes"
    await host.close()
    await friend.close()


@pytest.mark.parametrize("body", [{"turn_seconds": 3}, {"turn_seconds": 301}, {"grace_seconds": 1}])
async def test_clock_options_out_of_range_are_refused(
    http: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    answer = await http.post("/api/tables", json={"humans": 2, "bots": ["easy"], **body})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad_request"
