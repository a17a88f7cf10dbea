"""No handful of addresses can lock players out by holding sockets (issue 24, item 1).

Each test fills a real server's connection cap (``--max-connections 16``, the
lowest allowed) with hostile sockets, unjoined or seated, then checks that
``/healthz`` and an honest player still get in, and who was closed to make room.
The join timeout is an hour, so only eviction can free a slot.  Waits are on
events (a handshake answered, a state frame, a close), never on time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wire import RawWebSocket, http_json

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

CAP = 16
FULL = ["--max-connections", str(CAP), "--max-connections-per-client", str(CAP)]
NO_JOIN_TIMEOUT = ["--join-timeout", "3600"]


def create_table(srv: ServerProcess, **body: Any) -> dict[str, Any]:
    status, answer = http_json("POST", f"{srv.url}/api/tables", {"bot_speed_ms": 0, **body})
    assert status == 201, answer
    table: dict[str, Any] = answer
    return table


def join(srv: ServerProcess, table: dict[str, Any], seat: int, source: str) -> RawWebSocket:
    ws = RawWebSocket(srv.port, source=source)
    assert ws.status == 101, ws.response_head
    ws.send_json({"type": "join", "table": table["table"], "token": table["seats"][seat]["token"]})
    assert ws.recv_json("state")["type"] == "state"
    return ws


def open_or_refused(srv: ServerProcess, source: str) -> RawWebSocket | None:
    """A game socket opened from ``source``, or None when the server refused the connection."""
    try:
        ws = RawWebSocket(srv.port, source=source)
    except (ConnectionError, OSError):
        return None
    if ws.status != 101:
        ws.close()
        return None
    return ws


def honest_player_joins(srv: ServerProcess) -> None:
    table = create_table(srv, seed=4)
    ws = join(srv, table, 0, "127.0.0.1")
    ws.send_json({"type": "ping"})
    assert ws.recv_json("pong")["type"] == "pong"
    ws.close()


def test_a_cap_full_of_unjoined_sockets_lets_healthz_and_an_honest_join_in(
    server_process: ServerFactory,
) -> None:
    srv = server_process(args=[*FULL, *NO_JOIN_TIMEOUT])
    hostile = [RawWebSocket(srv.port, source=f"127.0.0.{2 + i % 4}") for i in range(CAP)]
    try:
        assert all(ws.status == 101 for ws in hostile)
        assert srv.healthy()
        honest_player_joins(srv)
        # The oldest unjoined socket made room first, told why: try again later.
        assert hostile[0].close_code() == 1013
        assert srv.healthy()
    finally:
        for ws in hostile:
            ws.close()


def test_a_cap_full_of_seated_sockets_from_one_address_lets_an_honest_join_in(
    server_process: ServerFactory,
) -> None:
    srv = server_process(args=[*FULL, *NO_JOIN_TIMEOUT])
    tables = [create_table(srv, humans=3, bots=[]) for _ in range(CAP // 3 + 1)]
    hostile = [join(srv, tables[i // 3], i % 3, "127.0.0.2") for i in range(CAP)]
    try:
        assert srv.healthy()
        honest_player_joins(srv)
        # The longest idle socket at a full table of the address holding the most went,
        # told why: try again later.
        assert hostile[0].close_code() == 1013
        assert srv.healthy()
    finally:
        for ws in hostile:
            ws.close()


def test_unjoined_sockets_are_closed_before_older_seated_ones(
    server_process: ServerFactory,
) -> None:
    srv = server_process(args=[*FULL, *NO_JOIN_TIMEOUT])
    tables = [create_table(srv, humans=3, bots=[]) for _ in range(3)]
    half = CAP // 2
    seated = [join(srv, tables[i // 3], i % 3, "127.0.0.2") for i in range(half)]
    unjoined = [RawWebSocket(srv.port, source="127.0.0.3") for _ in range(half)]
    try:
        assert srv.healthy()
        assert unjoined[0].close_code() == 1013
        seated[0].send_json({"type": "ping"})
        assert seated[0].recv_json("pong")["type"] == "pong"
    finally:
        for ws in seated + unjoined:
            ws.close()


def test_a_seated_player_is_never_closed_for_an_attacker_on_many_addresses(
    server_process: ServerFactory,
) -> None:
    srv = server_process(args=[*FULL, *NO_JOIN_TIMEOUT])
    honest_table = create_table(srv, seed=4)
    honest = join(srv, honest_table, 0, "127.0.0.1")
    attacker_tables = [create_table(srv, humans=3, bots=[]) for _ in range(CAP // 3)]
    hostile = [join(srv, attacker_tables[i // 3], i % 3, "127.0.0.2") for i in range(CAP - 1)]
    # More addresses, more sockets than the cap: they take slots from 127.0.0.2 until
    # every attacker address holds as few as the honest one, then are refused.
    for i in range(3 * CAP):
        ws = open_or_refused(srv, f"127.0.0.{3 + i % 12}")
        if ws is not None:
            hostile.append(ws)
    try:
        honest.send_json({"type": "ping"})
        assert honest.recv_json("pong")["type"] == "pong"
    finally:
        honest.close()
        for ws in hostile:
            ws.close()
