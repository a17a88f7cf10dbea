"""Creating a table: each choice is checked against its one source, and stored once."""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec
import pytest
import redis.asyncio as aioredis
from room_helpers import lease_of, log_of

from server import bots, engine
from server.engine import Pass
from server.rooms.log import MAX_BOT_SPEED_MS
from server.rooms.store import TABLE_INDEX_KEY, TableStore
from server.rooms.tables import (
    CreateTableRequest,
    TableLifetime,
    build_table,
    create_table,
    delete_tables,
)


def request(body: bytes) -> CreateTableRequest:
    return msgspec.json.decode(body, type=CreateTableRequest)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"rules":"fast"}', "rules"),
        (b'{"rules":"custom"}', "rules"),
        (b'{"deals":3}', "deals"),
        (b'{"humans":2,"bots":["grandmaster"]}', "bot level"),
        (b'{"standin_level":"lazy"}', "standin_level"),
    ],
)
def test_a_choice_outside_its_source_is_refused_naming_the_field(body: bytes, field: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=field):
        request(body)


def test_every_preset_match_length_and_bot_level_is_accepted() -> None:
    for preset in engine.PRESETS:
        for deals in engine.MATCH_LENGTHS:
            for level in bots.LEVELS:
                body = {"rules": preset, "deals": deals, "humans": 2, "bots": [level]}
                meta, _ = build_table(msgspec.convert(body, CreateTableRequest))
                assert (meta.rules, meta.deals) == (engine.PRESETS[preset], deals)
                assert meta.seats[2].level == level


def test_bot_speed_is_bounded_by_the_configured_limit() -> None:
    at_limit = request(b'{"bot_speed_ms":%d}' % MAX_BOT_SPEED_MS)
    assert build_table(at_limit)[0].bot_speed_ms == MAX_BOT_SPEED_MS
    with pytest.raises(msgspec.ValidationError):
        request(b'{"bot_speed_ms":%d}' % (MAX_BOT_SPEED_MS + 1))


@pytest.mark.parametrize(
    "options",
    [b'{"removed_ace":"AD"}', b'{"later_leader":"loser"}', b'{"bomb_payment":"never"}'],
)
def test_a_rule_option_outside_the_engines_values_is_refused(options: bytes) -> None:
    with pytest.raises(ValueError, match="options"):
        build_table(request(b'{"options":%s}' % options))


def test_a_rule_option_takes_the_engines_value_and_marks_the_table_custom() -> None:
    meta, _ = build_table(request(b'{"rules":"classic","options":{"removed_ace":"AC"}}'))
    assert (meta.rules.removed_ace, meta.rules.preset) == ("AC", "custom")


async def test_create_table_stores_the_meta_and_an_empty_log(store: TableStore) -> None:
    created = await create_table(store, CreateTableRequest(humans=2, bots=["easy"], seed=3))
    meta = await store.load_meta(created.table)
    assert meta is not None
    assert [s.seat for s in created.seats] == [0, 1]
    assert [s.token_hash is not None for s in meta.seats] == [True, True, False]
    assert await log_of(store, created.table) == []


# --- lifetime: unplayed tables go in minutes, play buys days -----------------------

LIFETIME = TableLifetime(unplayed_seconds=600, per_action_seconds=3600, most_seconds=7 * 86400)


def test_a_tables_lifetime_grows_with_each_action_up_to_the_table_ttl() -> None:
    assert LIFETIME.seconds(0) == 600
    assert LIFETIME.seconds(3) == 600 + 3 * 3600
    assert LIFETIME.seconds(10_000) == 7 * 86400


@pytest.fixture
async def lived_store(redis_client: aioredis.Redis) -> AsyncIterator[TableStore]:
    store = TableStore(redis_client, ttl_seconds=7 * 86400, ttl_for=LIFETIME.seconds)
    yield store
    await store.aclose()


async def test_a_table_nobody_played_at_expires_within_minutes_and_play_extends_it(
    lived_store: TableStore, redis_client: aioredis.Redis
) -> None:
    created = await create_table(lived_store, CreateTableRequest(seed=3), max_tables=10)
    meta_key = f"pdk:{{{created.table}}}:meta"
    assert 0 < await redis_client.ttl(meta_key) <= 600
    # The count behind max_tables forgets it when it expires unplayed.
    score = await redis_client.zscore(TABLE_INDEX_KEY, created.table)
    seconds, _ = await redis_client.time()
    assert score is not None
    assert score <= seconds + 600 + 5
    # Loading (a join) keeps it at least the unplayed TTL; only play makes it longer.
    await lived_store.load(created.table)
    assert 0 < await redis_client.ttl(meta_key) <= 600
    lease = await lease_of(lived_store, created.table)
    # Taking it over leaves no fence behind for longer than the table.
    assert 0 < await redis_client.ttl(f"pdk:{{{created.table}}}:fence") <= 600
    await lived_store.append(lease, 0, [Pass(seat=0), Pass(seat=1)])
    for role in ("meta", "log"):
        ttl = await redis_client.ttl(f"pdk:{{{created.table}}}:{role}")
        assert 600 + 3600 < ttl <= 600 + 2 * 3600
    # A load never shortens what play bought.
    await lived_store.load(created.table)
    assert await redis_client.ttl(meta_key) > 600 + 3600


async def test_an_operator_deletes_tables_by_id_and_learns_which_were_there(
    store: TableStore, redis_client: aioredis.Redis
) -> None:
    kept = await create_table(store, CreateTableRequest(seed=1), max_tables=10)
    gone = await create_table(store, CreateTableRequest(seed=2), max_tables=10)
    await lease_of(store, gone.table)
    found = await delete_tables(store, [gone.table, "nosuchtbl1", "../../*"])
    assert found == {gone.table: True, "nosuchtbl1": False, "../../*": False}
    assert await redis_client.keys(f"pdk:{{{gone.table}}}:*") == []
    assert await store.load_meta(gone.table) is None
    assert await store.load_meta(kept.table) is not None
    assert await redis_client.zrange(TABLE_INDEX_KEY, 0, -1) == [kept.table.encode()]
