"""Player identities (server.players.identity) on a real Redis."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from server.players import COLOURS, PlayerStore, ProfileRefused, parse_credential
from server.rooms.names import NameRefused
from server.rooms.tokens import hash_token

TTL = 3600


async def test_a_new_player_authenticates_with_its_credential_and_redis_keeps_only_a_hash(
    client: aioredis.Redis,
) -> None:
    store = PlayerStore(client, TTL)
    player, credential = await store.create()
    assert player.colour in COLOURS
    assert player.name.startswith("Guest ")
    found = await store.authenticate(credential)
    assert found == player
    _, secret = credential.split(".")
    stored = await client.hgetall(f"pdk:player:{{{player.id}}}")
    assert stored[b"secret"] == hash_token(secret).encode()
    assert all(secret not in str(v) for v in stored.values())


async def test_a_wrong_or_malformed_secret_authenticates_nobody(client: aioredis.Redis) -> None:
    store = PlayerStore(client, TTL)
    player, credential = await store.create()
    other, _ = await store.create()
    assert await store.authenticate(f"{player.id}.{'A' * 32}") is None
    assert await store.authenticate(f"{other.id}.{credential.split('.')[1]}") is None
    for bad in ("", player.id, f"{player.id}.", "x.y", f"{player.id}:{credential}", "*" * 49):
        assert await store.authenticate(bad) is None
    assert parse_credential(f"{player.id}.{'B' * 31}") is None


async def test_use_refreshes_the_expiry_of_the_player_and_its_statistics(
    client: aioredis.Redis,
) -> None:
    store = PlayerStore(client, TTL)
    player, credential = await store.create()
    key = f"pdk:player:{{{player.id}}}"
    await client.set(f"{key}:stats", "{}", ex=5)
    await client.expire(key, 5)
    await store.authenticate(credential)
    assert await client.ttl(key) > TTL - 60
    assert await client.ttl(f"{key}:stats") > TTL - 60


async def test_names_keep_the_tables_rules_and_colours_come_from_the_palette(
    client: aioredis.Redis,
) -> None:
    store = PlayerStore(client, TTL)
    player, credential = await store.create()
    renamed = await store.update(player, name="  Mei   Ling ", colour=COLOURS[2])
    assert (renamed.name, renamed.colour) == ("Mei Ling", COLOURS[2])
    assert await store.authenticate(credential) == renamed
    with pytest.raises(NameRefused):
        await store.update(player, name="Ben")  # a bot's name
    with pytest.raises(NameRefused):
        await store.update(player, name="<b>x</b>")
    with pytest.raises(ProfileRefused) as refused:
        await store.update(player, colour="#ff0000")
    assert refused.value.reason == "bad_colour"
    assert await store.authenticate(credential) == renamed


async def test_a_recovery_code_moves_the_identity_once_and_retires_the_old_secret(
    client: aioredis.Redis,
) -> None:
    store = PlayerStore(client, TTL)
    player, old = await store.create()
    first = await store.issue_recovery(player)
    code = await store.issue_recovery(player)
    assert await store.recover(first) is None  # replaced by the newer one
    moved = await store.recover(code)
    assert moved is not None
    moved_player, new = moved
    assert moved_player.id == player.id
    assert new != old
    assert await store.authenticate(old) is None
    assert await store.authenticate(new) == moved_player
    assert await store.recover(code) is None  # once only


async def test_deleting_a_player_removes_everything_kept_about_them(
    client: aioredis.Redis,
) -> None:
    store = PlayerStore(client, TTL)
    player, credential = await store.create()
    key = f"pdk:player:{{{player.id}}}"
    await client.set(f"{key}:stats", "{}")
    await store.issue_recovery(player)
    await store.delete(player)
    assert await client.keys(f"pdk:player:{{{player.id}}}*") == []
    assert await store.authenticate(credential) is None
    with pytest.raises(ProfileRefused):
        await store.update(player, name="Back again")
