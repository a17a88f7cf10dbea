"""Player names: the rules of a name, and a rename seen by every seat and kept in Redis."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from room_helpers import Socket, log_of, new_table, seed_where_leader_is

from server.rooms.commands import Rename
from server.rooms.names import (
    MAX_MARKS_IN_A_ROW,
    MAX_NAME_CHARS,
    MAX_RAW_NAME_CHARS,
    NameReason,
    NameRefused,
    clean_name,
    skeleton,
)
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


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("\u2800", NameReason.INVISIBLE),  # braille blank
        ("\u3164", NameReason.INVISIBLE),  # Hangul filler
        ("\u115f\u1160", NameReason.INVISIBLE),  # Hangul choseong and jungseong fillers
        ("\uffa0", NameReason.INVISIBLE),  # halfwidth Hangul filler
        ("Mei\u17b4", NameReason.INVISIBLE),  # Khmer inherent vowel
        ("Mei\ufe00", NameReason.INVISIBLE),  # a variation selector on a letter
        ("Mei\ufe0f", NameReason.INVISIBLE),  # the emoji selector, but on a letter
        ("\u2764\ufe0f\ufe0f", NameReason.INVISIBLE),  # twice
        ("Mei\U000e0041", NameReason.INVISIBLE),  # a tag character
        ("Mei\u00ad", NameReason.INVISIBLE),  # soft hyphen
        ("Mei\u2028Lin", NameReason.CONTROL),  # line separator
        ("Mei\u2029Lin", NameReason.CONTROL),  # paragraph separator
        ("line\nbreak", NameReason.CONTROL),
        ("\u0301\u0301\u0301", NameReason.MARKS_ONLY),
        ("\u0301Mei", NameReason.MARKS_ONLY),
        ("Mei \u0301", NameReason.MARKS_ONLY),
        ("Z" + "\u0301" * 23, NameReason.TOO_MANY_MARKS),
        ("Z" + "\u0300" * (MAX_MARKS_IN_A_ROW + 1), NameReason.TOO_MANY_MARKS),
        ("x" * (MAX_RAW_NAME_CHARS + 1), NameReason.TOO_LONG),
        ("   ", NameReason.EMPTY),
        ("<b>", NameReason.MARKUP),
    ],
)
def test_invisible_control_and_mark_only_names_are_refused_each_with_its_reason(
    raw: str, reason: NameReason
) -> None:
    with pytest.raises(NameRefused) as refused:
        clean_name(raw)
    assert refused.value.reason is reason
    assert str(refused.value)  # a message for people


@pytest.mark.parametrize(
    "raw",
    ["Anna", "anna", "ANNA", "\u0410nna", "Ann\u0430", "\u0391\u039d\u039d\u0391", "Ben",
     "\u0412en", "\uff22\uff25\uff2e", "B e n", "Cleo", "Cle0", "Player 1", "Player 2",
     "Player 3", "Player2", "PIayer 2", "P1ayer 3", "player 2", "Pl\u0430yer 1"],
)  # fmt: skip
def test_the_bots_and_placeholder_names_and_their_look_alikes_are_reserved(raw: str) -> None:
    with pytest.raises(NameRefused) as refused:
        clean_name(raw)
    assert refused.value.reason is NameReason.RESERVED


SOMCHAI = "\u0e2a\u0e21\u0e0a\u0e32\u0e22"  # Thai


@pytest.mark.parametrize(
    ("raw", "name"),
    [("Anna-Lena", "Anna-Lena"), ("Benedikt", "Benedikt"), ("Player 4", "Player 4"),
     ("You", "You"), ("Nguy\u1ec5n", "Nguy\u1ec5n"), ("\u0e2a\u0e21\u0e0a\u0e32\u0e22", SOMCHAI),
     ("\u2764\ufe0f Mia", "\u2764\ufe0f Mia"), ("Z\u0301\u0302", "\u0179\u0302"),
     ("Mei   Lin", "Mei Lin"), ("Mei\u3000Lin", "Mei Lin")],
)  # fmt: skip
def test_real_names_in_any_script_pass_and_runs_of_spaces_become_one(raw: str, name: str) -> None:
    assert clean_name(raw) == name


def test_look_alike_strings_share_a_skeleton_and_different_ones_do_not() -> None:
    assert skeleton("\u0410nna") == skeleton("Anna") == skeleton("Ann\u0430")
    assert skeleton("PIayer") == skeleton("Player") == skeleton("P1ayer")
    assert skeleton("Anna") != skeleton("Anne")


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


def test_the_confusables_data_is_loaded_by_the_first_name_checked_not_by_a_start() -> None:
    """Unicode's confusables are 9 MiB once parsed: a server that never checks a name
    (a test's, a replica that only forwards) starts without them."""
    check = (
        "import sys, server.cli, server.app\n"
        "before = 'confusable_homoglyphs' in sys.modules\n"
        "from server.rooms.names import clean_name\n"
        "clean_name('Mei')\n"
        "print(before, 'confusable_homoglyphs' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=True, timeout=60
    )
    assert ran.stdout.split() == ["False", "True"]
