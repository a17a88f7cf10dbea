"""Room codes and the open-table list (server.lobby.codes) on a real Redis."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from server.lobby.codes import ALPHABET, CHANGES, CODE_LENGTH, CodeError, Codes, normalise_code


async def register(codes: Codes, table: str = "table-0001", free: int = 2) -> str:
    seats = [(seat, f"token-{table}-{seat}") for seat in range(1, 1 + free)]
    return await codes.register(table, rules="classic", deals=5, bots="easy", free=seats)


def test_codes_have_no_look_alike_characters_and_typing_is_forgiving() -> None:
    assert not set("01OIL") & set(ALPHABET)
    assert normalise_code(" ab c2 3d ") == "ABC23D"
    for bad in ("ABC2", "ABC23DE", "ABC23O", "ÄBC23D", "", "ABC 2\u00003"):
        with pytest.raises(CodeError) as refused:
            normalise_code(bad)
        assert refused.value.reason == "bad_code"


async def test_every_code_is_fresh_and_expires_with_its_table(client: aioredis.Redis) -> None:
    codes = Codes(client, 600, 10)
    made = {await register(codes, f"table-{n:04}") for n in range(200)}
    assert len(made) == 200
    assert all(len(c) == CODE_LENGTH and set(c) <= set(ALPHABET) for c in made)
    ttl = await client.ttl(f"pdk:{{lobby}}:code:{made.pop()}")
    assert 590 < ttl <= 600


async def test_a_code_hands_out_each_free_seat_once_and_one_seat_per_player(
    client: aioredis.Redis,
) -> None:
    codes = Codes(client, 600, 10)
    code = await register(codes)
    first = await codes.join(code.lower(), "player-a")
    with pytest.raises(CodeError) as again:
        await codes.join(code, "player-a")
    assert again.value.reason == "already_seated"
    second = await codes.join(code, None)
    assert {(first.seat, first.token), (second.seat, second.token)} == {
        (1, "token-table-0001-1"),
        (2, "token-table-0001-2"),
    }
    with pytest.raises(CodeError) as full:
        await codes.join(code, "player-b")
    assert full.value.reason == "no_free_seat"
    with pytest.raises(CodeError) as unknown:
        await codes.join("ZZZZZZ", "player-b")
    assert unknown.value.reason == "unknown_code"


async def test_many_joins_at_once_never_share_a_seat(client: aioredis.Redis) -> None:
    codes = Codes(client, 600, 10)
    code = await register(codes, free=2)
    results = await asyncio.gather(
        *(codes.join(code, f"p{n}") for n in range(20)), return_exceptions=True
    )
    seats = [r.seat for r in results if not isinstance(r, BaseException)]
    assert sorted(seats) == [1, 2]


async def test_open_tables_are_listed_until_their_last_seat_is_taken_and_changes_published(
    client: aioredis.Redis,
) -> None:
    codes = Codes(client, 600, 2)
    pubsub = client.pubsub()
    await pubsub.subscribe(CHANGES)
    await pubsub.get_message(timeout=1)  # the subscription's confirmation
    first = await register(codes, "table-0001", free=1)
    second = await register(codes, "table-0002", free=2)
    third = await register(codes, "table-0003", free=1)
    assert await codes.listed(10) == []
    await codes.open_table(first, 1.0)
    await codes.open_table(second, 2.0)
    with pytest.raises(CodeError) as crowded:
        await codes.open_table(third, 3.0)
    assert crowded.value.reason == "lobby_full"
    listed = await codes.listed(10)
    assert [(t.code, t.free, t.rules, t.deals, t.bots) for t in listed] == [
        (second, 2, "classic", 5, "easy"),
        (first, 1, "classic", 5, "easy"),
    ]
    await codes.join(first, "p1")
    assert [t.code for t in await codes.listed(10)] == [second]
    published = []
    while message := await pubsub.get_message(ignore_subscribe_messages=True, timeout=1):
        published.append(message["data"].decode())
    assert published == [first, second, first]
    with pytest.raises(CodeError) as no_seat:
        await codes.open_table(first, 4.0)
    assert no_seat.value.reason == "no_free_seat"
    await pubsub.aclose()  # type: ignore[no-untyped-call]


async def test_an_expired_code_leaves_the_list(client: aioredis.Redis) -> None:
    codes = Codes(client, 600, 10)
    code = await register(codes)
    await codes.open_table(code, 1.0)
    await client.delete(f"pdk:{{lobby}}:code:{code}")
    assert await codes.listed(10) == []
    assert await client.zcard("pdk:{lobby}:open") == 0
    with pytest.raises(CodeError) as gone:
        await codes.lookup(code)
    assert gone.value.reason == "unknown_code"
