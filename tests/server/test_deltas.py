"""Deltas: the op language (diff, patch), the digest, a view's wire form, the
presenter's frames and the client's mirror."""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server import engine, presenter
from server.deltas import (
    MAX_SAFE_INTEGER,
    Mirror,
    PatchError,
    canonical,
    compact,
    diff,
    digest,
    digest_of,
    expand,
    patch,
    seen,
)
from server.fairness import Reveal
from server.rooms.updates import StateUpdate, TableSnapshot, WatchUpdate
from tests.server.frame_tables import card_codes, play_match, table_meta

# Any JSON value a picture could hold: keys with the path's own separators in them too.
_keys = st.text(alphabet=st.sampled_from("ab/~01é"), max_size=4)
_scalars = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=6)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=30,
)


def wire(value: Any) -> Any:
    """``value`` as it comes out of a JSON parser at the other end."""
    return json.loads(msgspec.json.encode(value))


def same_json(a: Any, b: Any) -> bool:
    # ``True == 1`` in Python: compare what each value is as JSON.
    return canonical(a) == canonical(b)


@settings(max_examples=250, deadline=None, derandomize=True)
@given(old=json_values, new=json_values)
def test_patching_with_the_diff_rebuilds_any_json_value_exactly(old: Any, new: Any) -> None:
    ops = wire(diff(old, new))
    rebuilt = patch(wire(old), ops)
    assert same_json(rebuilt, new)
    assert digest(rebuilt) == digest(new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ([False], [0]),
        ([1, True], [1, 1]),
        ({"a": [True]}, {"a": [1]}),
        ({"a": {"b": 0}}, {"a": {"b": False}}),
        ([[1]], [[1.0]]),
        ([0, [2]], [0, [2], 3]),
        ([0, [True]], [0, [1], 3]),
        ([[0], 5], [7, [False], 5]),
    ],
)
def test_a_flag_and_a_number_that_python_finds_equal_are_different_values_to_a_delta(
    old: Any, new: Any
) -> None:
    # Found by the chain property below: [False] to [0] made no op at all.
    assert same_json(patch(wire(old), wire(diff(old, new))), new)


@settings(max_examples=250, deadline=None, derandomize=True)
@given(first=json_values, second=json_values, third=json_values)
def test_a_chain_of_patches_leaves_every_picture_it_passed_through_as_it_was(
    first: Any, second: Any, third: Any
) -> None:
    # A patch copies only what it changes: the pictures share the rest, and none may
    # change when a later one is made from it.
    pictures = [wire(first)]
    for new in (second, third, first):
        pictures.append(patch(pictures[-1], wire(diff(pictures[-1], new))))
    assert [canonical(p) for p in pictures] == [canonical(v) for v in (first, second, third, first)]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(base=st.lists(st.integers(0, 3), max_size=8), new=st.lists(st.integers(0, 3), max_size=8))
def test_a_list_edit_is_one_splice_or_item_sets_and_leaves_the_picture_it_patched_alone(
    base: list[int], new: list[int]
) -> None:
    picture = {"l": base}
    kept = json.dumps(picture)
    assert patch(picture, diff(picture, {"l": new})) == {"l": new}
    assert json.dumps(picture) == kept


@pytest.mark.parametrize(
    "op",
    [
        ["x/y", 1],
        ["a/5", 1],
        ["a/x", 1],
        ["a", 0, 9, []],
        ["a", -1, 0, []],
        ["a", 0, 0, "x"],
        ["b"],
        ["a/0/x", 1],
        ["a", None, "nowhere"],
        [[], 1],
        [["a/0", None], 1],
        [["a/0", "x/y"], 1],
        "a",
        [],
        [None],
    ],
)
def test_an_op_that_does_not_fit_the_picture_is_a_patch_error(op: Any) -> None:
    with pytest.raises(PatchError):
        patch({"a": [1, 2]}, [op])


def test_a_value_set_twice_in_one_delta_is_sent_once_for_all_its_paths() -> None:
    move = {"seat": 1, "cards": ["9S", "9D"], "kind": "pair", "top": "9", "length": 1}
    passed = {"seat": 0, "cards": [], "kind": "pass"}
    old = {"table": None, "trick": [], "moves": [passed]}
    new = {"table": move, "trick": [move], "moves": [passed, move]}
    ops = diff(old, new)
    assert ops == [[["table", "trick/0", "moves/1"], move]]
    assert patch(old, ops) == new


@settings(max_examples=100, deadline=None, derandomize=True)
@given(value=st.dictionaries(_keys, json_values, max_size=5))
def test_the_digest_of_an_objects_parts_is_the_digest_of_the_object(value: Any) -> None:
    parts = {key: canonical(item) for key, item in value.items()}
    assert digest_of(parts) == digest(value)


def test_a_value_first_set_in_an_object_then_sent_whole_is_still_set_at_its_other_path() -> None:
    # "a" changes in two keys and is shorter sent whole: the op that first set the
    # long value inside it is dropped, so "b" cannot be one more path of that op.
    long = ["3S", "3H", "3D", "3C", "4S"]
    old = {"a": {"x": 1, "y": None}, "b": None}
    new = {"a": {"x": 2, "y": long}, "b": long}
    ops = diff(old, new)
    assert patch(wire(old), wire(ops)) == new


def test_an_integer_a_javascript_number_cannot_hold_is_null_in_the_digested_json() -> None:
    assert canonical({"b": MAX_SAFE_INTEGER, "a": -MAX_SAFE_INTEGER}) == (
        b'{"a":-9007199254740991,"b":9007199254740991}'
    )
    assert canonical({"seed": MAX_SAFE_INTEGER + 1, "x": [2**62]}) == b'{"seed":null,"x":[null]}'
    # Digits in a string are only a string, even when they look like a long number.
    assert canonical({"n": ":12345678901234567,"}) == b'{"n":":12345678901234567,"}'


def test_a_structs_digest_and_diff_are_those_of_the_json_it_encodes_to() -> None:
    state = engine.new_match(engine.Rules(), 7)
    before = {"v": engine.seat_view(state, 0)}
    engine.apply(state, engine.Play(seat=state.deal.turn, cards=["3S"]))
    after = {"v": engine.seat_view(state, 0)}
    assert digest(after) == digest(wire(after))
    assert patch(wire(before), wire(diff(before, after))) == wire(after)


# --- the presenter's frames, through the mirror a client keeps ------------------------


@settings(max_examples=8, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**40),
    preset=st.sampled_from(sorted(engine.PRESETS)),
    humans=st.integers(1, 3),
    # Whether the snapshot shows more than one socket at the table: the presenter then
    # makes the public part of the pictures once for all of them.
    shared=st.booleans(),
)
def test_every_seat_and_a_spectator_rebuild_every_version_from_deltas_and_learn_nothing_more(
    seed: int, preset: str, humans: int, shared: bool
) -> None:
    meta = table_meta(humans)
    feeds: dict[int | str, presenter.Feed] = {
        seat: presenter.Feed(deltas=True) for seat in (0, 1, 2, "watch")
    }
    mirrors = {seat: Mirror() for seat in feeds}
    deltas = 0
    for version, (state, events) in enumerate(play_match(preset, seed, deals=5)):
        snapshot = TableSnapshot(
            meta=meta,
            connected=(shared,) * 3,
            bot_speed_ms=300,
            match_no=0,
            # Once the match is over its seed is out: one a JavaScript number cannot hold.
            reveal=None if state.winners is None else Reveal(seed=2**62 + seed, salt="5a17"),
            now=float(version),
        )
        for seat, feed in feeds.items():
            update: StateUpdate | WatchUpdate
            if isinstance(seat, str):
                update = WatchUpdate(version, snapshot, engine.public_view(state), events)
            else:
                update = StateUpdate(version, snapshot, engine.seat_view(state, seat), events)
            whole = json.loads(presenter.full_frame(update))
            text = presenter.frame(update, feed)
            assert text is not None
            sent = json.loads(text)
            assert sent["type"] == ("p" if version == 0 else sent["type"])
            rebuilt = mirrors[seat].take(sent)
            assert rebuilt == whole
            # A delta (or a whole picture) names no card the whole frame would not show.
            assert card_codes(sent) <= card_codes(whole)
            if sent["type"] == "d":
                deltas += 1
                # Each move it tells of is in it once: not again as the trick's or the table's.
                for move in whole["view"]["moves"][len(whole["view"]["moves"]) - 3 :]:
                    if move["cards"]:
                        assert text.count("".join(move["cards"])) <= 1
    assert deltas > 40


def test_a_socket_shares_a_tables_picture_only_when_its_view_shows_the_same() -> None:
    # At version 1, two states of one table (as the room never makes): seat 1's view's
    # public fields differ from the other seats', so its picture is its own.  A second
    # socket of seat 0 misses version 1: its delta to version 2 is from its own picture.
    meta = table_meta(3)
    views = [
        [engine.seat_view(state, seat) for seat in range(3)]
        for state, _ in itertools.islice(play_match("classic", 9, deals=1), 7)
    ]
    feeds = {who: presenter.Feed(deltas=True) for who in (0, 1, 2, "0b")}
    mirrors = {who: Mirror() for who in feeds}
    for version, step in enumerate([3, 4, 6]):
        snapshot = TableSnapshot(meta=meta, connected=(True,) * 3, bot_speed_ms=0, match_no=0)
        for who in feeds:
            seat = 0 if who == "0b" else int(who)
            if version == 1 and who == "0b":
                continue
            view = views[5 if version == 1 and seat == 1 else step][seat]
            update = StateUpdate(version, snapshot, view, [])
            rebuilt = mirrors[who].take(json.loads(presenter.frame(update, feeds[who]) or "null"))
            assert rebuilt == json.loads(presenter.full_frame(update))


def test_a_views_wire_form_expands_to_the_view_for_every_seat_at_every_step() -> None:
    for preset in sorted(engine.PRESETS):
        before: dict[int, Any] = {}
        for state, _ in play_match(preset, 7, deals=1):
            views: list[Any] = [engine.seat_view(state, s) for s in range(3)]
            views.append(engine.public_view(state))
            for who, view in enumerate(views):
                wire = compact(view, before.get(who))
                before[who] = (seen(view), wire)
                assert expand(json.loads(msgspec.json.encode(wire))) == json.loads(
                    msgspec.json.encode(view)
                )


def test_a_gap_a_bad_op_a_wrong_digest_and_a_bad_picture_each_ask_for_a_resync() -> None:
    state = engine.new_match(engine.Rules(), 3, 1)
    table = {"id": "T", "seats": []}
    wire = json.loads(msgspec.json.encode(compact(engine.seat_view(state, 0))))
    start = {"type": "p", "k": "state", "v": 3, "t": table, "w": wire, "h": "0"}
    turned = [*wire[:8], (wire[8] + 1) % 3, *wire[9:]]
    good = {"type": "d", "v": 4, "o": [["8", turned[8]]], "h": digest({"t": table, "v": turned})}
    for broken, reason in [
        ({**good, "f": 2}, "gap"),
        ({**good, "v": 5}, "gap"),
        ({**good, "o": [["nope/x", 1]]}, "patch"),
        ({**good, "o": [["4", [[0, "5S"]]]]}, "patch"),
        ({**good, "e": [0]}, "patch"),
        ({**good, "e": [["no_such_event", 1]]}, "patch"),
        ({**good, "o": [["8", wire[8]]]}, "digest"),
    ]:
        mirror = Mirror()
        assert isinstance(mirror.take(start), dict)
        assert mirror.take(broken) == reason
        # Lost: even the right delta waits for the whole picture the resync brings.
        assert mirror.take(good) is None
        mirror.take(start)
        rebuilt = mirror.take(good)
        assert isinstance(rebuilt, dict)
        assert rebuilt["view"]["turn"] == turned[8]
        assert rebuilt["events"] == []
    # A whole picture that is no wire form is a patch error too.
    assert Mirror().take({**start, "w": wire[:5]}) == "patch"


def test_a_deltas_events_are_the_moves_it_appends_unless_it_says_otherwise() -> None:
    meta = table_meta(3)
    feed, mirror = presenter.Feed(deltas=True), Mirror()
    kinds: set[str] = set()
    for version, (state, events) in enumerate(play_match("classic", 5, deals=5)):
        snapshot = TableSnapshot(meta=meta, connected=(True,) * 3, bot_speed_ms=0, match_no=0)
        update = StateUpdate(version, snapshot, engine.seat_view(state, 0), events)
        sent = json.loads(presenter.frame(update, feed) or "null")
        rebuilt = mirror.take(sent)
        assert isinstance(rebuilt, dict)
        assert rebuilt["events"] == json.loads(msgspec.json.encode(events))
        kinds.add("implied" if "e" not in sent else "said")
    assert kinds == {"implied", "said"}


def test_a_socket_that_asks_for_whole_frames_gets_nothing_else() -> None:
    meta = table_meta(1)
    feed = presenter.Feed()
    for version, (state, events) in enumerate(play_match("classic", 3, deals=1)):
        snapshot = TableSnapshot(meta=meta, connected=(True,) * 3, bot_speed_ms=0, match_no=0)
        update = StateUpdate(version, snapshot, engine.seat_view(state, 0), events)
        assert json.loads(presenter.frame(update, feed) or "null")["type"] == "state"
    assert feed.picture is None
