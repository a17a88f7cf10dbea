"""Player names: the rules of a name, and a rename seen by every seat and kept in Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from room_helpers import Socket, log_of, new_table, seed_where_leader_is

from server.rooms.commands import Rename
from server.rooms.names import MAX_NAME_CHARS, NameRefused, clean_name
from server.rooms.registry import Registry
from server.rooms.store import TableStore
from server.rooms.tables import CreateTableRequest, build_table


@pytest.mark.parametrize(
    ("raw", "name"),
    [("  Mei  ", "Mei"), ("王小明", "王小明"), ("x" * MAX_NAME_CHARS, "x" * MAX_NAME_CHARS),
     ("Cafe\u0301", "Café"), ("Ann-Kathrin O.", "Ann-Kathrin O.")],
)  # fmt: skip
def test_a_name_is_trimmed_and_normalised(raw: str, name: str) -> None:
    assert clean_name(raw) == name


@pytest.mark.parametrize(
    "raw",
    ["", "   ", "x" * (MAX_NAME_CHARS + 1), "<b>Bo</b>", "Tom & Jerry", 'say "hi"',
     "line\nbreak", "bell\x07", "rtl\u202eevil", "zero\u200bwidth"],
)  # fmt: skip
def test_a_name_with_markup_control_characters_or_a_bad_length_is_refused(raw: str) -> None:
    with pytest.raises(NameRefused):
        clean_name(raw)


def test_a_table_cannot_be_created_with_a_bad_host_name() -> None:
    with pytest.raises(ValueError, match="markup"):
        build_table(msgspec.convert({"name": "<script>"}, CreateTableRequest))
    meta, _ = build_table(msgspec.convert({"name": " Mei "}, CreateTableRequest))
    assert meta.seats[0].name == "Mei"


@pytest.fixture
async def registry(store: TableStore) -> AsyncIterator[Registry]:
    reg = Registry(store, idle_seconds=60)
    yield reg
    await reg.close()


def names(frame: dict[str, Any]) -> list[str]:
    return [s["name"] for s in frame["table"]["seats"]]


async def test_a_rename_is_stored_and_every_seat_sees_it_also_after_a_reload(
    store: TableStore, registry: Registry
) -> None:
    meta, _ = await new_table(
        store, seed=seed_where_leader_is(2), humans=2, bots=["normal"], bot_speed_ms=5000
    )
    room = await registry.room(meta.id)
    assert room is not None
    host, guest = Socket(0), Socket(1)
    await room.attach(host.conn)
    await room.attach(guest.conn)
    await guest.state_where(lambda f: all(s["connected"] for s in f["table"]["seats"]))
    version = room.version

    room.submit(guest.conn, version, Rename(seat=1, name="  Mei "))
    for sock in (host, guest):
        frame = await sock.state_where(lambda f: names(f)[1] == "Mei")
        assert names(frame) == ["You", "Mei", "Ben"]
        # A name is a table setting: it is kept in the meta and the log does not grow.
        assert frame["version"] == version
    assert len(await log_of(store, meta.id)) == version

    # A refused name changes nothing and is explained to the sender only.
    room.submit(guest.conn, version, Rename(seat=1, name="<i>Mei</i>"))
    error = await guest.next("error")
    assert error["code"] == "invalid_name"
    assert room.version == version

    await registry.close()
    loaded = await store.load(meta.id)
    assert loaded is not None
    assert [s.name for s in loaded[0].seats] == ["You", "Mei", "Ben"]
