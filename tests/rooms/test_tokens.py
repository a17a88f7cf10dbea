from __future__ import annotations

from server.rooms.tokens import (
    hash_token,
    new_table_id,
    new_token,
    seat_for_token,
    valid_table_id,
)


def test_each_token_matches_only_its_own_seat() -> None:
    tokens = [new_token(), new_token()]
    hashes: list[str | None] = [hash_token(tokens[0]), hash_token(tokens[1]), None]
    assert seat_for_token(tokens[0], hashes) == 0
    assert seat_for_token(tokens[1], hashes) == 1
    assert seat_for_token(new_token(), hashes) is None
    assert seat_for_token("", hashes) is None


def test_hash_is_not_the_token_and_tokens_do_not_repeat() -> None:
    token = new_token()
    assert hash_token(token) != token
    assert token not in hash_token(token)
    assert len({new_token() for _ in range(100)}) == 100


def test_only_generated_table_id_shapes_are_valid() -> None:
    assert valid_table_id(new_table_id())
    assert not valid_table_id("short")
    assert not valid_table_id("has:colon:inside")
    assert not valid_table_id("x" * 65)
    assert not valid_table_id("{a}" * 4)
