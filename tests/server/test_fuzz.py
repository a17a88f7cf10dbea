"""Protocol fuzz: no frame makes the decoder raise anything but a ProtocolError, and a real
server answers thousands of hostile frames on one socket without dropping it, crashing,
or sending a card that is not the seat's own or already played."""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire import RawWebSocket, http_json

from bench.fuzz_frames import TYPES, frames, leaked_cards
from server import presenter
from server.protocol import ClientMessage, ProtocolError, decode_client

if TYPE_CHECKING:
    from conftest import ServerFactory

MAX = 16 * 1024
# Frames sent over the real socket in the suite; bench/attacks.py sends many more.
SOCKET_FRAMES = 3000

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
FIELDS = ["version", "cards", "ms", "table", "token", "seat"]


def decodes_or_refuses(frame: str | bytes) -> None:
    """Decoding ``frame`` gives a message or a ProtocolError with a message, nothing else."""
    try:
        message: object = decode_client(frame, MAX)
    except ProtocolError as refusal:
        message = refusal
    assert isinstance(message, ClientMessage | ProtocolError)
    assert not isinstance(message, ProtocolError) or message.message


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_decode_or_are_refused_with_a_reason(frame: bytes) -> None:
    decodes_or_refuses(frame)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_any_text_decodes_or_is_refused_with_a_reason(frame: str) -> None:
    decodes_or_refuses(frame)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([*TYPES, "undo"]),
    st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), json_values, max_size=5),
)
def test_any_json_object_with_a_type_decodes_or_is_refused(
    kind: str, fields: dict[str, object]
) -> None:
    decodes_or_refuses(json.dumps({**fields, "type": kind}))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 20_000), st.sampled_from(["[", '{"a":']))
def test_nesting_of_any_depth_is_refused_not_raised(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    decodes_or_refuses(
        '{"type":"play","version":0,"cards":' + opener * depth + closer * depth + "}"
    )


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32))
def test_the_presenter_answers_every_generated_frame(seed: int) -> None:
    frame = next(frames(random.Random(seed)))
    inbound = presenter.read(frame, MAX, seat=0, version=3)
    assert isinstance(inbound, presenter.Answer | presenter.ToRoom)


@pytest.mark.slow
def test_a_real_server_survives_thousands_of_hostile_frames_on_one_socket(
    server_process: ServerFactory,
) -> None:
    srv = server_process(args=["--actions-per-second", "10000", "--outgoing-queue-size", "4096"])
    status, table = http_json("POST", f"{srv.url}/api/tables", {"bot_speed_ms": 0, "deals": 10})
    assert status == 201
    ws = RawWebSocket(srv.port)
    ws.send_json({"type": "join", "table": table["table"], "token": table["seats"][0]["token"]})
    first = ws.recv_json("state")
    assert not leaked_cards(first)
    stream = frames(random.Random(20261130))
    replies = leaks = 0
    for sent in range(1, SOCKET_FRAMES + 1):
        frame = next(stream)
        ws.send_frame(frame.encode() if isinstance(frame, str) else frame, 1 if sent % 7 else 2)
        if sent % 50 == 0:
            # Drain what came back so far: every reply is a known frame, no card leaks.
            ws.send_json({"type": "ping"})
            while True:
                reply = ws.recv_json()
                replies += 1
                assert reply["type"] in {"state", "hint", "error", "pong"}, reply
                leaks += len(leaked_cards(reply))
                if reply["type"] == "pong":
                    break
    ws.close()
    assert leaks == 0
    assert replies >= SOCKET_FRAMES // 50
    assert srv.healthy()
    assert "Traceback" not in srv.log_text()


def test_the_leak_check_sees_a_card_that_is_neither_held_nor_played() -> None:
    view = {"hand": ["3S"], "moves": [{"cards": ["5H"]}], "trick": [], "table": None}
    frame = {"type": "state", "events": [], "view": {**view, "rules": {"removed_ace": "AS"}}}
    assert leaked_cards(frame) == set()
    frame["view"]["counter"] = {"4D": 1}
    assert leaked_cards(frame) == {"4D"}


def test_the_leak_check_counts_revealed_hands_as_known_only_once_the_deal_is_over() -> None:
    view = {"hand": ["3S"], "moves": [], "trick": [], "table": None, "rules": {"removed_ace": "AS"}}
    during = {
        "type": "state",
        "events": [],
        "view": {**view, "result": None, "revealed": [[], ["4D"], []]},
    }
    assert leaked_cards(during) == {"4D"}
    over = {**during, "view": {**during["view"], "result": {"winner": 1}}}
    assert leaked_cards(over) == set()
