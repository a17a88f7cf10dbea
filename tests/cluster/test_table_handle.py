"""read_frame (server/cluster/table.py): the one reading of a joined socket's frame,
for local sockets, forwarded ones on their owner and forwarders alike."""

from __future__ import annotations

import json

from server.cluster.table import read_frame
from server.connection import Connection
from server.engine import Play
from server.presenter import ToRoom
from server.rooms.seats import SPECTATOR

MAX = 4096


def connection(seat: int) -> tuple[Connection, list[str]]:
    """A real connection whose socket takes every frame at once, into ``sent``."""
    sent: list[str] = []
    return Connection(seat, _never, 4, lambda frame: sent.append(frame) is None), sent


async def _never(frame: str) -> None:
    raise AssertionError("every frame goes out at once here")


def test_a_seats_request_goes_to_the_room_and_nothing_to_the_socket() -> None:
    conn, sent = connection(2)
    request = read_frame(conn, '{"type":"play","version":7,"cards":["3S"]}', MAX, 7)
    assert request == ToRoom(7, Play(seat=2, cards=["3S"]))
    assert sent == []


def test_a_ping_a_refusal_and_invalid_utf8_are_answered_on_the_socket_alone() -> None:
    conn, sent = connection(0)
    frames: list[str | bytes] = [
        '{"type":"ping"}',
        '{"type":"pass"}',
        b'{"type":"rename","version":1,"name":"B\xffd"}',
    ]
    assert [read_frame(conn, frame, MAX, 5) for frame in frames] == [None, None, None]
    answers = [json.loads(frame) for frame in sent]
    assert [a["type"] for a in answers] == ["pong", "error", "error"]
    assert [a["code"] for a in answers[1:]] == ["invalid_message", "malformed_json"]
    assert [a["version"] for a in answers[1:]] == [5, 5]


def test_a_spectators_request_is_refused_on_its_socket() -> None:
    conn, sent = connection(SPECTATOR)
    assert read_frame(conn, '{"type":"pass","version":3}', MAX, 3) is None
    assert [json.loads(frame)["code"] for frame in sent] == ["spectator"]
