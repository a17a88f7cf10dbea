"""The web app over real sockets: uvicorn in-process on 127.0.0.1, a real Redis, and
the ``websockets`` client; one test SIGKILLs a ``paodekuai serve`` subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import redis
import uvicorn
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection

from server.app import create_app
from server.config import Settings
from server.engine import PRESETS, Pass, Play
from server.rooms.log import LogEntry, TableMeta, rebuild
from server.rooms.registry import Registry
from server.rooms.store import TableStore
from server.transport import uvicorn_config

GUARD_SECONDS = 30.0
ADMIN_TOKEN = "operator-secret-0123456789abcdef"
CARD_CODE = re.compile(r"[3-9TJQKA2][SHDC]")


class LiveServer:
    def __init__(self, url: str, app: Any) -> None:
        self.url = url
        self.ws_url = url.replace("http://", "ws://") + "/ws"
        self.app = app

    @property
    def registry(self) -> Registry:
        registry: Registry = self.app.state.registry
        return registry

    @property
    def store(self) -> TableStore:
        store: TableStore = self.app.state.store
        return store


async def run_live(settings: Settings, redis_url: str) -> AsyncIterator[LiveServer]:
    app = create_app(settings, redis_url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn_config(app, settings, lifespan="on", log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        assert not task.done(), "uvicorn stopped during start-up"
        await asyncio.sleep(0.01)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", app)
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
async def live(redis_url: str, client_dir: Path) -> AsyncIterator[LiveServer]:
    # Seeded several-human tables, many tables a minute, scripted seats acting at
    # machine speed: these tests script games.
    settings = Settings(
        client_dir=client_dir,
        allow_fixed_seeds=True,
        tables_per_minute=10_000,
        actions_per_second=1000,
        admin_token=ADMIN_TOKEN,
    )
    async for server in run_live(settings, redis_url):
        yield server


@pytest.fixture
def sync_redis(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def leader_seed(seat: int) -> int:
    from server import engine

    return next(s for s in range(1000) if engine.new_match(engine.Rules(), s).deal.turn == seat)


async def create_table(http: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    answer = await http.post("/api/tables", json=body)
    assert answer.status_code == 201, answer.text
    table: dict[str, Any] = answer.json()
    return table


class Client:
    """One WebSocket seat: joins, then reads frames in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []

    @classmethod
    async def join(cls, ws_url: str, table: str, token: str) -> Client:
        ws = await websockets.connect(ws_url)
        await ws.send(json.dumps({"type": "join", "table": table, "token": token}))
        return cls(ws)

    async def send(self, message: dict[str, Any] | str) -> None:
        await self.ws.send(message if isinstance(message, str) else json.dumps(message))

    async def next(self, kind: str | None = None) -> dict[str, Any]:
        while True:
            frame: dict[str, Any] = json.loads(
                await asyncio.wait_for(self.ws.recv(), GUARD_SECONDS)
            )
            self.frames.append(frame)
            if kind is None or frame["type"] == kind:
                return frame

    async def state_where(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            frame = await self.next("state")
            if predicate(frame):
                return frame

    async def close_code(self) -> int | None:
        await asyncio.wait_for(self.ws.wait_closed(), GUARD_SECONDS)
        return self.ws.close_code

    async def close(self) -> None:
        await self.ws.close()


async def play_turn(client: Client, frame: dict[str, Any]) -> None:
    """Answer a state frame: on this seat's turn, the first hint or a pass."""
    view = frame["view"]
    if view["result"] is not None or view["turn"] != view["seat"]:
        return
    if view["hints"]:
        await client.send({"type": "play", "version": frame["version"], "cards": view["hints"][0]})
    else:
        await client.send({"type": "pass", "version": frame["version"]})


async def play_to_result(client: Client, frame: dict[str, Any]) -> dict[str, Any]:
    acted_at = -1
    while frame["view"]["result"] is None:
        # A seat joining or leaving re-sends the same version: act once per version.
        if frame["version"] > acted_at:
            acted_at = frame["version"]
            await play_turn(client, frame)
        frame = await client.next("state")
    return frame


def moves_told(frames: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """Each play and pass the state frames told of, in the order told."""
    return [
        (event["seat"], event["type"])
        for frame in frames
        if frame["type"] == "state"
        for event in frame["events"]
        if event["type"] in ("played", "passed")
    ]


def moves_logged(entries: list[LogEntry]) -> list[tuple[int, str]]:
    """Each play and pass of ``entries``, as ``moves_told`` words them."""
    return [
        (e.seat, "played" if isinstance(e, Play) else "passed")
        for e in entries
        if isinstance(e, Play | Pass)
    ]


async def log_of(store: TableStore, table: str) -> list[LogEntry]:
    loaded = await store.load(table)
    assert loaded is not None
    return loaded[1]


# --- HTTP ----------------------------------------------------------------------


async def test_healthz_reports_redis_reachable(http: httpx.AsyncClient) -> None:
    answer = await http.get("/healthz")
    body = answer.json()
    assert answer.status_code == 200
    assert body == body | {"ok": True, "redis": True, "pid": os.getpid(), "draining": False}
    assert (body["tables_owned"], body["sockets_forwarded"]) == (0, 0)
    assert body["process"].split("-")[-2] == str(os.getpid())


async def test_a_draining_server_says_so_hands_its_tables_over_and_refuses_new_sockets(
    live: LiveServer, http: httpx.AsyncClient, sync_redis: redis.Redis
) -> None:
    table = await create_table(http, bots=["easy", "easy"], bot_speed_ms=5000)
    client = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    await client.next("state")
    assert (await http.get("/healthz")).json()["tables_owned"] == 1
    assert sync_redis.get(f"pdk:{{{table['table']}}}:lease") is not None
    await live.app.state.node.drain()
    health = await http.get("/healthz")
    assert health.status_code == 503
    assert health.json() | {"draining": True, "tables_owned": 0} == health.json()
    # Its socket was told to reconnect elsewhere, and the table is free for the next owner.
    assert await client.close_code() == 1001
    assert sync_redis.get(f"pdk:{{{table['table']}}}:lease") is None
    late = await websockets.connect(live.ws_url)
    await asyncio.wait_for(late.wait_closed(), GUARD_SECONDS)
    assert late.close_code == 1012


async def test_healthz_is_503_when_redis_is_unreachable(tmp_path: Path, client_dir: Path) -> None:
    gone = f"unix://{tmp_path}/no-redis-here.sock"
    async for server in run_live(Settings(client_dir=client_dir), gone):
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            health = await http.get("/healthz")
            create = await http.post("/api/tables", json={})
    assert health.status_code == 503
    assert health.json() | {"ok": False, "redis": False} == health.json()
    assert create.status_code == 503
    assert create.json()["error"]["code"] == "storage_unavailable"


async def test_a_host_name_that_impersonates_a_bot_is_refused_with_its_own_code(
    http: httpx.AsyncClient,
) -> None:
    answer = await http.post("/api/tables", json={"name": "\u0410nna"})  # a Cyrillic A
    error = answer.json()["error"]
    assert (answer.status_code, error["code"]) == (400, "invalid_name")
    assert "looks like" in error["message"]


async def test_create_table_gives_each_human_seat_a_token_and_an_invite(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(
        http, rules="kawu", options={"split_bombs": False}, deals=5, humans=2, bots=["strong"]
    )
    seats = table["seats"]
    assert [s["seat"] for s in seats] == [0, 1]
    assert seats[0]["token"] != seats[1]["token"]
    for seat in seats:
        assert seat["invite"] == f"/#table={table['table']}&token={seat['token']}"
    meta = await live.store.load_meta(table["table"])
    assert meta is not None
    # Overriding a rule makes the table "custom", so no one mistakes it for kawu.
    assert (meta.rules.preset, meta.rules.removed_ace, meta.rules.split_bombs) == (
        "custom",
        "AC",
        False,
    )
    assert [(s.kind, s.level) for s in meta.seats] == [
        ("human", None),
        ("human", None),
        ("bot", "strong"),
    ]
    assert meta.deals == 5


async def test_options_that_change_nothing_keep_the_presets_name(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, rules="sixteen", options={"split_bombs": False})
    meta = await live.store.load_meta(table["table"])
    assert meta is not None
    assert meta.rules == PRESETS["sixteen"]


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"rules":"fast"}',
        b'{"deals":3}',
        b'{"humans":4}',
        b'{"humans":1,"bots":["easy"]}',
        b'{"bot_speed_ms":-5}',
        b'{"colour":"red"}',
        b'{"options":{"jokers":true}}',
        b"[]",
    ],
)
async def test_bad_table_requests_get_json_400_with_a_reason_code(
    http: httpx.AsyncClient, body: bytes
) -> None:
    answer = await http.post("/api/tables", content=body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "bad_request"
    assert error["message"]


async def test_http_errors_are_json_with_a_reason_code(http: httpx.AsyncClient) -> None:
    too_big = await http.post("/api/tables", content=b" " * 5000)
    missing = await http.get("/no/such/page")
    wrong_method = await http.post("/healthz")
    assert [
        (a.status_code, a.json()["error"]["code"]) for a in (too_big, missing, wrong_method)
    ] == [(413, "body_too_large"), (404, "not_found"), (405, "method_not_allowed")]


async def test_the_client_is_served_at_the_root(http: httpx.AsyncClient) -> None:
    answer = await http.get("/")
    assert answer.status_code == 200
    assert "<title>Pao De Kuai</title>" in answer.text


# --- joining ---------------------------------------------------------------------


async def test_full_deal_over_websocket_against_two_bots_reaches_the_result(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=4, bot_speed_ms=0)
    client = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    first = await client.next("state")
    assert first["view"]["seat"] == 0
    assert len(first["view"]["hand"]) == 16
    assert [s["kind"] for s in first["table"]["seats"]] == ["human", "bot", "bot"]
    assert [s["name"] for s in first["table"]["seats"][1:]] == ["Anna", "Ben"]
    end = await play_to_result(client, first)
    result = end["view"]["result"]
    assert sum(result["deal_totals"]) == 0
    assert result["cards_left"][result["winner"]] == 0
    assert end["view"]["match_over"]
    assert end["version"] == len(await log_of(live.store, table["table"]))
    # The states arrived in version order, and together they told of every move once:
    # a frame that skips versions carries the moves of those it skipped.
    versions = [f["version"] for f in client.frames if f["type"] == "state"]
    assert versions == sorted(set(versions))
    log = await log_of(live.store, table["table"])
    assert moves_told(client.frames) == moves_logged(log[versions[0] :])
    await client.close()


async def test_usage_counts_every_accepted_action_and_the_bots_thinking_time(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    before = (await http.get("/api/usage")).json()
    table = await create_table(http, seed=4, bot_speed_ms=0)
    client = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    end = await play_to_result(client, await client.next("state"))
    await client.close()
    after = (await http.get("/api/usage")).json()
    bot_moves = sum(
        1
        for e in await log_of(live.store, table["table"])
        if isinstance(e, Play | Pass) and e.seat != 0
    )
    assert after["actions"] - before["actions"] == end["version"]
    assert after["bot_decisions"] - before["bot_decisions"] == bot_moves > 0
    assert after["bot_cpu_seconds"] - before["bot_cpu_seconds"] > 0
    assert after["bot_cpu_seconds"] - before["bot_cpu_seconds"] <= after["cpu_seconds"]
    assert after["tables"] == 1
    assert after["rss_bytes"] > 0
    assert after["shared_cache_entries"]["server.engine.moves.legal_plays"] > 0


async def test_reconnect_mid_deal_shows_the_same_view_and_both_sockets_get_updates(
    http: httpx.AsyncClient, live: LiveServer
) -> None:
    table = await create_table(http, seed=leader_seed(0), bot_speed_ms=0)
    token = table["seats"][0]["token"]
    first = await Client.join(live.ws_url, table["table"], token)
    frame = await first.next("state")
    for _ in range(2):  # two rounds, so the deal is well under way
        await play_turn(first, frame)
        frame = await first.state_where(lambda f: f["view"]["turn"] == 0)
    await first.close()

    again = await Client.join(live.ws_url, table["table"], token)
    resumed = await again.next("state")
    assert resumed["version"] == frame["version"]
    assert resumed["view"] == frame["view"]

    other_tab = await Client.join(live.ws_url, table["table"], token)
    assert (await other_tab.next("state"))["view"] == frame["view"]
    await play_turn(again, resumed)
    after_a = await again.next("state")
    after_b = await other_tab.next("state")
    assert after_a == after_b
    assert after_a["version"] > frame["version"]
    assert after_a["events"][0]["seat"] == 0
    await again.close()
    await other_tab.close()


async def test_a_malformed_table_id_is_refused_before_redis_is_asked(
    tmp_path: Path, client_dir: Path
) -> None:
    gone = f"unix://{tmp_path}/no-redis-here.sock"
    codes = []
    async for server in run_live(Settings(client_dir=client_dir), gone):
        for table in ("bad id!", "WellFormedTable01"):
            ws = await websockets.connect(server.ws_url)
            await ws.send(json.dumps({"type": "join", "table": table, "token": "x"}))
            codes.append(await Client(ws).close_code())
    # Only a well-formed id reaches the (unreachable) store.
    assert codes == [4404, 4503]


@pytest.mark.parametrize(
    ("join", "close_code"),
    [
        ({"token": "not-the-token"}, 4401),
        ({"token": ""}, 4401),
        ({}, 4401),
        ({"table": "NoSuchTableAtAll", "token": "x"}, 4404),
        ({"table": "bad id!", "token": "x"}, 4404),
    ],
)
async def test_wrong_token_closes_socket_without_touching_table(
    http: httpx.AsyncClient, live: LiveServer, join: dict[str, str], close_code: int
) -> None:
    table = await create_table(http, seed=leader_seed(1), bot_speed_ms=0)
    ws = await websockets.connect(live.ws_url)
    await ws.send(json.dumps({"type": "join", "table": table["table"], **join}))
    client = Client(ws)
    assert await client.close_code() == close_code
    assert client.frames == []
    # A bot leads this table: had the room been loaded, the bot would have played.
    assert live.registry.live(table["table"]) is None
    assert await log_of(live.store, table["table"]) == []


@pytest.mark.parametrize(
    ("first_frame", "code"),
    [
        ('{"type":"pass","version":0}', "join_required"),
        ("{nope", "malformed_json"),
        ('{"type":"sit","table":"t"}', "unknown_type"),
        ('{"type":"join","table":7,"token":"x"}', "invalid_message"),
    ],
)
async def test_a_first_frame_that_is_not_a_valid_join_gets_an_error_and_4400(
    live: LiveServer, first_frame: str, code: str
) -> None:
    ws = await websockets.connect(live.ws_url)
    await ws.send(first_frame)
    client = Client(ws)
    error = await client.next()
    assert (error["type"], error["code"]) == ("error", code)
    assert await client.close_code() == 4400


# --- refusals leave the table unchanged ----------------------------------------------


async def refusal_table(http: httpx.AsyncClient, live: LiveServer) -> tuple[Client, Client, dict]:
    """Three humans, seat 0 to lead: nothing moves unless a test makes it."""
    table = await create_table(http, seed=leader_seed(0), humans=3, bots=[])
    leader = await Client.join(live.ws_url, table["table"], table["seats"][0]["token"])
    waiting = await Client.join(live.ws_url, table["table"], table["seats"][1]["token"])
    await waiting.next("state")
    # The leader sees its own join, then the state announcing seat 1.
    state = await leader.state_where(lambda f: f["table"]["seats"][1]["connected"])
    return leader, waiting, state


def not_a_combination(hand: list[str]) -> list[str]:
    low, high = hand[0], hand[-1]
    assert low[0] != high[0]
    return [low, high]


BAD_ACTIONS: list[tuple[str, Callable[[dict[str, Any]], str], str]] = [
    (
        "waiting",
        lambda s: json.dumps({"type": "play", "version": 0, "cards": ["3H"]}),
        "not_your_turn",
    ),
    ("waiting", lambda s: json.dumps({"type": "pass", "version": 0}), "not_your_turn"),
    (
        "leader",
        lambda s: json.dumps(
            {"type": "play", "version": 0, "cards": not_a_combination(s["view"]["hand"])}
        ),
        "not_a_combination",
    ),
    ("leader", lambda s: json.dumps({"type": "pass", "version": 0}), "leader_may_not_pass"),
    (
        "leader",
        lambda s: json.dumps({"type": "play", "version": 1, "cards": s["view"]["hints"][0]}),
        "stale_version",
    ),
    ("leader", lambda s: '{"type":"play","version":0,', "malformed_json"),
    ("leader", lambda s: '{"type":"undo","version":0}', "unknown_type"),
    ("leader", lambda s: '{"type":"play","version":"0","cards":["3S"]}', "invalid_message"),
    ("leader", lambda s: '{"type":"pass","version":0,"seat":1}', "invalid_message"),
    ("leader", lambda s: '{"type":"join","table":"x","token":"y"}', "already_joined"),
]


@pytest.mark.parametrize(
    ("who", "frame", "code"), BAD_ACTIONS, ids=[f"{w}-{c}" for w, _, c in BAD_ACTIONS]
)
async def test_each_bad_action_gets_its_code_and_leaves_the_table_unchanged(
    http: httpx.AsyncClient,
    live: LiveServer,
    sync_redis: redis.Redis,
    who: str,
    frame: Callable[[dict[str, Any]], str],
    code: str,
) -> None:
    leader, waiting, state = await refusal_table(http, live)
    table = state["table"]["id"]
    log_key = f"pdk:{{{table}}}:log"
    before = sync_redis.lrange(log_key, 0, -1)
    sender = leader if who == "leader" else waiting
    seen = len(sender.frames)
    await sender.send(frame(state))
    # A state frame (seat 1's join told to every seat) may still be on its way first.
    error = await sender.next("error")
    assert {f["type"] for f in sender.frames[seen:-1]} <= {"state"}
    assert (error["type"], error["code"], error["version"]) == ("error", code, 0)
    assert error["message"]
    assert sync_redis.lrange(log_key, 0, -1) == before == []
    # The socket stays usable and the table still takes the leader's legal play.
    await sender.send('{"type":"ping"}')
    assert (await sender.next())["type"] == "pong"
    hint = state["view"]["hints"][0]
    await leader.send({"type": "play", "version": 0, "cards": hint})
    assert (await leader.state_where(lambda f: f["version"] == 1))["view"]["moves"][0][
        "cards"
    ] == hint
    await leader.close()
    await waiting.close()


# --- privacy -------------------------------------------------------------------------


def card_codes(value: Any) -> set[str]:
    """Every card code anywhere in a decoded frame (values and keys)."""
    if isinstance(value, str):
        return {value} if CARD_CODE.fullmatch(value) else set()
    if isinstance(value, dict):
        found: set[str] = set()
        for key, item in value.items():
            found |= card_codes(key) | card_codes(item)
        return found
    if isinstance(value, list):
        return set().union(*(card_codes(item) for item in value)) if value else set()
    return set()


def other_hands(meta: TableMeta, log: list[LogEntry], version: int, seat: int) -> set[str]:
    from server import engine

    hands = rebuild(meta, log[:version]).match.deal.hands
    return {engine.card_code(c) for s, hand in enumerate(hands) if s != seat for c in hand}


async def play_seat(
    live: LiveServer, table: str, token: str, reconnect_after: set[int]
) -> list[dict[str, Any]]:
    """Play one seat to the result, reconnecting after the listed numbers of own actions."""
    frames: list[dict[str, Any]] = []
    actions = 0
    client = await Client.join(live.ws_url, table, token)
    frame = await client.next("state")
    acted_at = -1
    while frame["view"]["result"] is None:
        # Seats joining and leaving re-send the same version: act once per version.
        if frame["view"]["turn"] == frame["view"]["seat"] and frame["version"] > acted_at:
            acted_at = frame["version"]
            await client.send({"type": "hint", "version": frame["version"]})
            await client.next("hint")
            await play_turn(client, frame)
            actions += 1
            if actions in reconnect_after:
                await client.next("state")
                frames += client.frames
                await client.close()
                client = await Client.join(live.ws_url, table, token)
        frame = await client.next("state")
    frames += client.frames
    await client.close()
    return frames


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 2**40),
    preset=st.sampled_from(["classic", "sixteen", "kawu"]),
    humans=st.integers(1, 2),
    reconnect_after=st.sets(st.integers(1, 8), max_size=3),
)
async def test_a_seat_never_receives_a_card_held_by_another_seat(
    http: httpx.AsyncClient,
    live: LiveServer,
    seed: int,
    preset: str,
    humans: int,
    reconnect_after: set[int],
) -> None:
    table = await create_table(
        http, seed=seed, rules=preset, humans=humans, bots=["normal"] * (3 - humans), bot_speed_ms=0
    )
    table_id = table["table"]
    per_seat = await asyncio.gather(
        *(
            play_seat(
                live, table_id, seat["token"], reconnect_after if seat["seat"] == 0 else set()
            )
            for seat in table["seats"]
        )
    )
    meta = await live.store.load_meta(table_id)
    assert meta is not None
    log = await log_of(live.store, table_id)
    checked = 0
    for seat, frames in enumerate(per_seat):
        for frame in frames:
            if "version" not in frame or frame["version"] is None:
                continue
            others = other_hands(meta, log, frame["version"], seat)
            shown = card_codes(frame)
            if frame["type"] == "state" and frame["view"]["result"] is not None:
                # Once the deal is over its remaining cards are revealed, and only then.
                revealed = frame["view"].pop("revealed")
                assert card_codes(revealed) >= others
                shown = card_codes(frame)
            leaked = shown & others
            assert not leaked, f"seat {seat} saw {leaked} in {frame['type']} v{frame['version']}"
            checked += 1
    assert checked > 10


# --- restart -------------------------------------------------------------------------


async def test_sigkill_mid_deal_then_restart_resumes_at_the_last_action_with_bots(
    server_process: Any, sync_redis: redis.Redis
) -> None:
    srv = await asyncio.to_thread(server_process)
    async with httpx.AsyncClient(base_url=srv.url, timeout=60) as http:
        table = await create_table(http, seed=leader_seed(0), bot_speed_ms=300)
    table_id, token = table["table"], table["seats"][0]["token"]
    client = await Client.join(srv.ws_url, table_id, token)
    frame = await client.next("state")
    acknowledged = 0
    for _ in range(3):
        if frame["view"]["turn"] != 0:
            frame = await client.state_where(lambda f: f["view"]["turn"] == 0)
        await play_turn(client, frame)
        ack = frame = await client.next("state")
        acknowledged = ack["version"]
        if ack["view"]["result"] is not None:
            break
    assert ack["view"]["result"] is None, "seed chosen so the deal outlasts three rounds"
    assert ack["view"]["turn"] != 0  # a bot is thinking when the server dies
    await asyncio.to_thread(srv.kill)
    await client.close_code()

    log_key = f"pdk:{{{table_id}}}:log"
    before = sync_redis.lrange(log_key, 0, -1)
    assert len(before) >= acknowledged  # nothing a seat was told about is lost

    await asyncio.to_thread(srv.start)
    again = await Client.join(srv.ws_url, table_id, token)
    resumed = await again.next("state")
    assert resumed["version"] >= len(before)
    meta_raw = sync_redis.get(f"pdk:{{{table_id}}}:meta")
    assert meta_raw is not None
    meta = msgspec.json.decode(meta_raw, type=TableMeta)
    store_log = [msgspec.json.decode(r, type=LogEntry) for r in sync_redis.lrange(log_key, 0, -1)]
    from server import engine

    hand = rebuild(meta, store_log[: resumed["version"]]).match.deal.hands[0]
    assert resumed["view"]["hand"] == [engine.card_code(c) for c in hand]
    # The bots resume on their own: the turn comes back to the human without any input.
    back = (
        resumed
        if resumed["view"]["turn"] == 0 or resumed["view"]["result"]
        else await again.state_where(lambda f: f["view"]["turn"] == 0 or f["view"]["result"])
    )
    assert back["version"] > acknowledged
    end = await play_to_result(again, back)
    assert end["view"]["result"] is not None
    assert sync_redis.lrange(log_key, 0, len(before) - 1) == before
    await again.close()


# --- the operator's routes and details ----------------------------------------------

# A request that came through a proxy: not the operator's own host.
FORWARDED = {"X-Forwarded-For": "203.0.113.7"}


async def test_healthz_shows_process_details_to_the_operator_only(http: httpx.AsyncClient) -> None:
    public = await http.get("/healthz", headers=FORWARDED)
    assert public.json() == {"ok": True, "redis": True, "draining": False}
    wrong = await http.get("/healthz", headers=FORWARDED | {"Authorization": "Bearer nope"})
    assert "pid" not in wrong.json()
    admin = FORWARDED | {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    assert (await http.get("/healthz", headers=admin)).json()["pid"] == os.getpid()
    # Straight from this host (tools, health checks): details too.
    assert (await http.get("/healthz")).json()["pid"] == os.getpid()


async def test_usage_is_the_operators_only(http: httpx.AsyncClient) -> None:
    refused = await http.get("/api/usage", headers=FORWARDED)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "operator_only"
    admin = FORWARDED | {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    assert (await http.get("/api/usage", headers=admin)).json()["pid"] == os.getpid()


async def test_the_operator_deletes_a_table_over_http_with_the_admin_token(
    http: httpx.AsyncClient, sync_redis: redis.Redis
) -> None:
    table = (await create_table(http))["table"]
    path = f"/api/admin/tables/{table}"
    for headers in ({}, {"Authorization": "Bearer " + ADMIN_TOKEN[:-1] + "x"}):
        refused = await http.delete(path, headers=headers)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "bad_admin_token"
    assert sync_redis.exists(f"pdk:{{{table}}}:meta")
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    deleted = await http.delete(path, headers=admin)
    assert (deleted.status_code, deleted.json()) == (200, {"deleted": table})
    assert not sync_redis.exists(f"pdk:{{{table}}}:meta")
    again = await http.delete(path, headers=admin)
    assert (again.status_code, again.json()["error"]["code"]) == (404, "unknown_table")


async def test_without_an_admin_token_the_operators_routes_are_off(
    redis_url: str, client_dir: Path
) -> None:
    async for server in run_live(Settings(client_dir=client_dir), redis_url):
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            table = (await create_table(http))["table"]
            answer = await http.delete(
                f"/api/admin/tables/{table}", headers={"Authorization": "Bearer x"}
            )
    assert answer.status_code == 404
