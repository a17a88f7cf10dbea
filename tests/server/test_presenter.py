"""The presenter: wire messages become room requests, room updates become frames per seat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from server import engine, presenter
from server.engine import EngineError, NextDeal, Pass, Play, Reason
from server.presenter import Answer, ToRoom
from server.protocol import (
    BotSpeedMsg,
    HintMsg,
    NewMatchMsg,
    NextDealMsg,
    PassMsg,
    PlayMsg,
    ProtocolError,
    ProtocolErrorCode,
    VersionedMessage,
)
from server.rooms.commands import AskHint, Request
from server.rooms.log import BotSpeed, NewMatch, TableMeta
from server.rooms.updates import (
    Closing,
    HintAnswer,
    Refused,
    RoomError,
    RoomReason,
    StateUpdate,
    TableSnapshot,
)
from tests.server.frame_tables import table_meta

MAX = 16 * 1024
DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def decoded(frame: str) -> dict[str, Any]:
    result: dict[str, Any] = msgspec.json.decode(frame)
    return result


def meta(humans: int = 2) -> TableMeta:
    return table_meta(humans, level="strong")


# --- message -> request ----------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (PlayMsg(4, ["3S", "3H"]), Play(seat=2, cards=["3S", "3H"])),
        (PassMsg(4), Pass(seat=2)),
        (HintMsg(4), AskHint()),
        (NextDealMsg(4), NextDeal()),
        (NewMatchMsg(4), NewMatch()),
        (BotSpeedMsg(4, 250), BotSpeed(ms=250, seat=2)),
    ],
)
def test_each_message_becomes_its_request_with_the_sockets_own_seat(
    message: VersionedMessage, expected: Request
) -> None:
    assert presenter.request_for(message, seat=2) == expected


def test_a_frame_from_a_joined_socket_goes_to_the_room_with_its_version() -> None:
    raw = '{"type":"play","version":7,"cards":["5S"]}'
    assert presenter.read(raw, MAX, seat=1, version=9) == ToRoom(7, Play(seat=1, cards=["5S"]))


def test_a_play_naming_another_seat_is_not_even_readable() -> None:
    # The seat always comes from the token; a frame cannot carry one.
    raw = '{"type":"pass","version":0,"seat":0}'
    inbound = presenter.read(raw, MAX, seat=1, version=0)
    assert isinstance(inbound, Answer)
    assert decoded(inbound.frame)["code"] == "invalid_message"


def test_ping_is_answered_with_pong_without_the_room() -> None:
    assert presenter.read('{"type":"ping"}', MAX, seat=0, version=3) == Answer('{"type":"pong"}')


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("{", "malformed_json"),
        ('{"type":"fold"}', "unknown_type"),
        ('{"type":"play","version":1}', "invalid_message"),
        ('{"type":"bot_speed","version":1,"ms":5001}', "invalid_message"),
        ('{"type":"bot_speed","version":1,"ms":-1}', "invalid_message"),
        ('{"type":"emote","emote":"middle_finger"}', "invalid_message"),
        ('{"type":"ping"}' + " " * MAX, "frame_too_large"),
        ('{"type":"join","table":"Table0001","token":"t"}', "already_joined"),
        # Invalid UTF-8 (the transport hands such a text frame over as bytes): a forwarder
        # relies on this refusal to send the owner only text it could read.
        (b'{"type":"rename","version":1,"name":"B\xffd"}', "malformed_json"),
    ],
)
def test_each_refusal_of_a_joined_socket_answers_it_alone_with_the_tables_version(
    raw: str | bytes, code: str
) -> None:
    inbound = presenter.read(raw, MAX, seat=0, version=12)
    assert isinstance(inbound, Answer)
    frame = decoded(inbound.frame)
    assert (frame["type"], frame["code"], frame["version"]) == ("error", code, 12)
    assert frame["message"]


def test_the_first_frame_must_be_a_join() -> None:
    join = presenter.read_join('{"type":"join","table":"Table0001","token":"t"}', MAX)
    assert (join.table, join.token) == ("Table0001", "t")
    for raw, reason in [
        ('{"type":"pass","version":0}', ProtocolErrorCode.JOIN_REQUIRED),
        ('{"type":"ping"}', ProtocolErrorCode.JOIN_REQUIRED),
        ("nope", ProtocolErrorCode.MALFORMED_JSON),
        ('{"type":"sit"}', ProtocolErrorCode.UNKNOWN_TYPE),
    ]:
        with pytest.raises(ProtocolError) as refused:
            presenter.read_join(raw, MAX)
        assert refused.value.reason == reason


# --- update -> frame -------------------------------------------------------------

NO_STANDIN = {"auto": False, "on_auto": False}


def test_each_seat_gets_a_state_frame_with_its_own_hand_only() -> None:
    state = engine.new_match(engine.Rules(), 5, 5)
    table = TableSnapshot(meta=meta(), connected=(True, False, False), bot_speed_ms=300, match_no=2)
    events = [engine.DealStarted(deal_no=1, leader=state.deal.leader)]
    frames = [
        decoded(
            presenter.frame(
                StateUpdate(
                    version=6, table=table, view=engine.seat_view(state, seat), events=events
                )
            )
        )
        for seat in range(3)
    ]
    hands = [set(engine.seat_view(state, seat).hand) for seat in range(3)]
    for seat, frame in enumerate(frames):
        assert frame["type"] == "state"
        assert frame["version"] == 6
        assert frame["view"]["seat"] == seat
        assert set(frame["view"]["hand"]) == hands[seat]
        others = hands[(seat + 1) % 3] | hands[(seat + 2) % 3]
        assert not others & set(msgspec.json.encode(frame).decode().split('"'))
        assert frame["events"] == [
            {"type": "deal_started", "deal_no": 1, "leader": state.deal.leader}
        ]
        assert frame["table"] == {
            "id": "Table0001",
            "seats": [
                {"seat": 0, "name": "P0", "kind": "human", "level": None, "connected": True}
                | NO_STANDIN,
                {"seat": 1, "name": "P1", "kind": "human", "level": None, "connected": False}
                | NO_STANDIN,
                # A bot is always connected, whatever the flag says.
                {"seat": 2, "name": "B2", "kind": "bot", "level": "strong", "connected": True}
                | NO_STANDIN,
            ],
            "bot_speed_ms": 300,
            "humans": 2,
            "match_no": 2,
            "fairness": {
                "commitments": [],
                "seed": None,
                "salt": None,
                "entropy": [],
                "next": None,
            },
            "host": 0,
            "turn_seconds": 0,
            "grace_seconds": 15,
            "clock": None,
            "spectators": 0,
        }


def test_a_hint_answer_becomes_a_hint_frame() -> None:
    frame = decoded(presenter.frame(HintAnswer(version=3, cards=["5S", "5H"], index=1, count=4)))
    assert frame == {"type": "hint", "version": 3, "cards": ["5S", "5H"], "index": 1, "count": 4}


@pytest.mark.parametrize(
    "error",
    [
        RoomError(RoomReason.STALE_VERSION, "made against version 2"),
        RoomError(RoomReason.MATCH_NOT_OVER, "the match is still going on"),
        EngineError(Reason.DOES_NOT_BEAT, "a pair of 5 does not beat a pair of 9"),
        ProtocolError(ProtocolErrorCode.INVALID_MESSAGE, "bad field"),
    ],
)
def test_every_refusal_becomes_an_error_frame_coded_by_its_reason(
    error: RoomError | EngineError | ProtocolError,
) -> None:
    frame = decoded(presenter.frame(Refused(version=8, error=error)))
    assert frame == {
        "type": "error",
        "code": error.reason.value,
        "message": error.message,
        "version": 8,
    }


def test_before_the_join_an_error_frame_has_no_version() -> None:
    error = ProtocolError(ProtocolErrorCode.JOIN_REQUIRED, "join first")
    assert decoded(presenter.error_frame(error, None))["version"] is None


def test_every_closing_has_its_close_code() -> None:
    assert presenter.close_for(Closing.SHUTDOWN)[0] == 1001
    assert presenter.close_for(Closing.IDLE)[0] == 1001
    assert presenter.close_for(Closing.TABLE_UNAVAILABLE)[0] == 4503
    assert all(presenter.close_for(why)[1] for why in Closing)


def test_wire_reason_codes_are_unique_and_each_is_documented() -> None:
    codes = [reason.value for enum in presenter.WIRE_REASONS for reason in enum]
    assert len(codes) == len(set(codes))
    documented = DOCS.read_text("utf-8")
    assert [code for code in codes if f"`{code}`" not in documented] == []
