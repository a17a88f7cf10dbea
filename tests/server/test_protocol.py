"""Strict decoding of client frames: each kind of bad input has its own reason code."""

from __future__ import annotations

import msgspec
import pytest

from server.protocol import (
    BotSpeedMsg,
    ErrorMsg,
    HintMsg,
    JoinMsg,
    NewMatchMsg,
    NextDealMsg,
    PassMsg,
    PingMsg,
    PlayMsg,
    ProtocolError,
    ProtocolErrorCode,
    decode_client,
    encode,
)

MAX = 16 * 1024


def code_of(frame: str | bytes) -> ProtocolErrorCode:
    with pytest.raises(ProtocolError) as caught:
        decode_client(frame, MAX)
    return caught.value.reason


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ('{"type":"join","table":"t1234567","token":"x"}', JoinMsg("t1234567", "x")),
        ('{"type":"play","version":3,"cards":["3S","4H"]}', PlayMsg(3, ["3S", "4H"])),
        ('{"type":"pass","version":0}', PassMsg(0)),
        ('{"type":"hint","version":7}', HintMsg(7)),
        ('{"type":"bot_speed","version":2,"ms":0}', BotSpeedMsg(2, 0)),
        ('{"type":"next_deal","version":40}', NextDealMsg(40)),
        ('{"type":"new_match","version":41}', NewMatchMsg(41)),
        ('{"type":"ping"}', PingMsg()),
        (b'{"type":"pass","version":1}', PassMsg(1)),
    ],
)
def test_every_client_message_decodes_to_its_struct(frame: str | bytes, expected: object) -> None:
    assert decode_client(frame, MAX) == expected


def test_join_without_token_decodes_with_empty_token_so_it_is_refused_as_bad_token() -> None:
    assert decode_client('{"type":"join","table":"t1234567"}', MAX) == JoinMsg("t1234567", "")


@pytest.mark.parametrize("frame", ["{", "not json", '{"type":"pass",}', "", b"\xff\xfe"])
def test_malformed_json_is_refused_as_malformed_json(frame: str | bytes) -> None:
    assert code_of(frame) == ProtocolErrorCode.MALFORMED_JSON


@pytest.mark.parametrize("frame", ['{"type":"fold"}', '{"type":"PLAY","version":1,"cards":[]}'])
def test_unknown_type_is_refused_as_unknown_type(frame: str) -> None:
    assert code_of(frame) == ProtocolErrorCode.UNKNOWN_TYPE


@pytest.mark.parametrize(
    "frame",
    [
        '{"type":"play","version":"1","cards":["3S"]}',
        '{"type":"play","version":1,"cards":"3S"}',
        '{"type":"play","version":1}',
        '{"type":"pass","version":1,"seat":2}',
        '{"type":"bot_speed","version":1,"ms":"fast"}',
        '{"type":"emote","emote":7}',
        '{"type":"play","version":1,"cards":[' + ",".join(['"3S"'] * 17) + "]}",
        '{"version":1}',
        '{"type":5}',
        "[1,2]",
        "42",
    ],
)
def test_wrong_fields_or_types_are_refused_as_invalid_message(frame: str) -> None:
    assert code_of(frame) == ProtocolErrorCode.INVALID_MESSAGE


def test_frame_of_exactly_the_cap_is_decoded_and_one_byte_more_is_refused() -> None:
    head = '{"type":"ping"}'
    at_cap = head + " " * (MAX - len(head))
    assert decode_client(at_cap, MAX) == PingMsg()
    assert code_of(at_cap + " ") == ProtocolErrorCode.FRAME_TOO_LARGE
    assert code_of((at_cap + " ").encode()) == ProtocolErrorCode.FRAME_TOO_LARGE


def test_frame_size_counts_utf8_bytes_not_characters() -> None:
    # 6000 three-byte characters: 18000 bytes, over the cap though under it in characters.
    frame = '{"type":"join","table":"t1234567","token":"' + "好" * 6000 + '"}'
    assert len(frame) < MAX
    assert code_of(frame) == ProtocolErrorCode.FRAME_TOO_LARGE


def test_frame_size_counts_four_byte_characters_in_full() -> None:
    # 4500 four-byte characters: 18000 bytes, though three bytes each would fit the cap.
    frame = '{"type":"join","table":"t1234567","token":"' + "\U0001f0a1" * 4500 + '"}'
    assert len(frame) * 3 < MAX < len(frame.encode())
    assert code_of(frame) == ProtocolErrorCode.FRAME_TOO_LARGE


def test_error_frames_encode_as_tagged_json_text() -> None:
    text = encode(ErrorMsg(code="stale_version", message="old", version=4))
    assert msgspec.json.decode(text) == {
        "type": "error",
        "code": "stale_version",
        "message": "old",
        "version": 4,
    }
