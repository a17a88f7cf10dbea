"""Table options: the presets of RULES.md ("House rules") and single options."""

from __future__ import annotations

import msgspec
import pytest

from server import engine
from server.engine import Rules


def test_classic_is_the_default_preset() -> None:
    assert Rules() == engine.PRESETS["classic"]


def test_presets_match_the_house_rules_table() -> None:
    table = {
        # name: (A removed ace, B first play 3S, C later leader, D split bombs, E payment)
        "classic": ("AS", True, "winner", True, "immediate"),
        "sixteen": ("AS", False, "three_of_spades", False, "winning"),
        "kawu": ("AC", True, "winner", True, "immediate"),
    }
    assert set(engine.PRESETS) == set(table)
    for name, (a, b, c, d, e) in table.items():
        rules = engine.PRESETS[name]
        assert rules.preset == name
        assert (
            rules.removed_ace,
            rules.first_play_three_spades,
            rules.later_leader,
            rules.split_bombs,
            rules.bomb_payment,
        ) == (a, b, c, d, e)
        assert Rules.preset_named(name) is rules


def test_unknown_preset_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown"):
        Rules.preset_named("blitz")


def test_every_option_is_settable_on_its_own() -> None:
    base = Rules()
    changed = {
        "removed_ace": "AC",
        "first_play_three_spades": False,
        "later_leader": "three_of_spades",
        "split_bombs": False,
        "bomb_payment": "winning",
    }
    for field, value in changed.items():
        rules = msgspec.structs.replace(base, **{field: value})
        assert getattr(rules, field) == value
        others = {f for f in changed if f != field}
        assert all(getattr(rules, f) == getattr(base, f) for f in others)


def test_rules_are_frozen_and_round_trip_through_json() -> None:
    rules = engine.PRESETS["sixteen"]
    with pytest.raises(AttributeError):
        rules.split_bombs = True  # type: ignore[misc]
    assert msgspec.json.decode(msgspec.json.encode(rules), type=Rules) == rules


def test_rules_refuse_unknown_fields_and_values() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"removed_ace": "AH"}', type=Rules)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"jokers": true}', type=Rules)
