"""Creating a table: each choice is checked against its one source, and stored once."""

from __future__ import annotations

import msgspec
import pytest
from room_helpers import log_of

from server import bots, engine
from server.rooms.log import MAX_BOT_SPEED_MS
from server.rooms.store import TableStore
from server.rooms.tables import CreateTableRequest, build_table, create_table


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
