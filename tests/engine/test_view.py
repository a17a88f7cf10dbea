"""The seat view (the only projection of state) and pick_cards."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest

from server import engine
from server.engine import MatchState, Play, Reason

from .helpers import make_state, pass_, play, snapshot
from .playout import play_match, random_action


def _copy(state: MatchState) -> MatchState:
    return msgspec.json.decode(snapshot(state), type=MatchState)


def _mid_game(preset: str, seed: int, steps: int) -> MatchState:
    rng = random.Random(seed)
    state = engine.new_match(engine.PRESETS[preset], seed)
    for _ in range(steps):
        if state.deal.result is not None:
            break
        engine.apply(state, random_action(state, rng))
    return state


@pytest.mark.parametrize("preset", ["classic", "sixteen", "kawu"])
def test_view_shows_own_hand_and_no_card_held_by_another_seat(preset: str) -> None:
    for seed in range(5):
        state = _mid_game(preset, seed, 3 * seed + 4)
        for seat in range(3):
            view = engine.seat_view(state, seat)
            assert view.hand == [engine.card_code(c) for c in state.deal.hands[seat]]
            encoded = msgspec.json.encode(view).decode()
            for other in range(3):
                if other != seat:
                    for card in state.deal.hands[other]:
                        assert f'"{engine.card_code(card)}"' not in encoded


def test_view_shows_counts_flags_trick_turn_and_leader() -> None:
    state = make_state(["5S 6S", "7S 8S 9S", "3H 4H 5H 6H"])
    play(state, 0, "5S")
    play(state, 1, "7S")
    view = engine.seat_view(state, 2)
    assert view.counts == [1, 2, 4]
    assert view.last_card == [True, False, False]
    assert view.turn == 2
    assert view.leader == 1
    assert view.table is not None
    assert (view.table.seat, view.table.cards, view.table.kind) == (1, ("7S",), "single")
    assert [(m.seat, list(m.cards)) for m in view.trick] == [(0, ["5S"]), (1, ["7S"])]
    assert view.deal_no == 1
    assert view.deals == 1


def test_view_legal_plays_are_rank_strings_for_the_seat_to_move_only() -> None:
    state = make_state(["5S 5H 6S", "7S 8S", "3H"])
    view = engine.seat_view(state, 0)
    assert view.legal == ["5", "55", "6"]
    for seat in (1, 2):
        other = engine.seat_view(state, seat)
        assert other.legal == []
        assert other.hints == []
        assert (other.can_pass, other.pass_reason) == (False, Reason.NOT_YOUR_TURN.value)


@pytest.mark.parametrize(
    ("preset", "needed"), [("classic", "3S"), ("kawu", "3S"), ("sixteen", None)]
)
def test_view_says_the_three_of_spades_must_be_selected_on_the_first_play(
    preset: str, needed: str | None
) -> None:
    state = engine.new_match(engine.PRESETS[preset], 21)
    seat = state.deal.turn
    view = engine.seat_view(state, seat)
    assert view.must_include == needed
    if needed:
        assert all(p.startswith("3") for p in view.legal)
        assert all(needed in hint for hint in view.hints)
    engine.apply(state, Play(seat=seat, cards=["3S"]))
    assert engine.seat_view(state, state.deal.turn).must_include is None


def test_pass_button_state_and_reason() -> None:
    state = make_state(["9S 3C", "TS 4D", "5H 4H"], played_any=[True] * 3)
    leader = engine.seat_view(state, 0)
    assert (leader.can_pass, leader.pass_reason) == (False, Reason.LEADER_MAY_NOT_PASS.value)
    play(state, 0, "9S")
    locked = engine.seat_view(state, 1)
    assert (locked.can_pass, locked.pass_reason) == (False, Reason.MUST_BEAT.value)
    play(state, 1, "TS")
    free = engine.seat_view(state, 2)
    assert (free.can_pass, free.pass_reason) == (True, None)
    assert free.legal == []
    pass_(state, 2)
    pass_(state, 0)
    play(state, 1, "4D")
    over = engine.seat_view(state, 0)
    assert (over.can_pass, over.pass_reason) == (False, Reason.DEAL_OVER.value)
    assert over.turn is None
    assert over.result is not None
    assert over.result.winner == 1
    assert over.results == [over.result]
    assert over.match_over is True
    assert over.totals == state.totals


def test_every_hint_is_a_legal_concrete_play_and_they_cover_the_legal_plays() -> None:
    checked = 0
    for preset in ("classic", "sixteen", "kawu"):
        for seed in range(4):
            state = _mid_game(preset, seed, 2 * seed)
            seat = state.deal.turn
            view = engine.seat_view(state, seat)
            texts = ["".join(c[0] for c in hint) for hint in view.hints]
            assert len(set(texts)) == len(texts)
            assert set(texts) <= set(view.legal)
            if len(view.legal) <= 30:
                assert set(texts) == set(view.legal)
            is_bomb = [len(t) == 4 and len(set(t)) == 1 for t in texts]
            if view.legal and not all(len(p) == 4 and len(set(p)) == 1 for p in view.legal):
                # A sensible first hint keeps the bombs while anything else will
                # do, unless the bomb takes the seat out.
                assert not is_bomb[0] or len(view.hints[0]) == len(view.hand)
            for hint in view.hints:
                assert set(hint) <= set(view.hand)
                engine.apply(_copy(state), Play(seat=seat, cards=hint))
                checked += 1
    assert checked > 50


def test_hint_cycle_reaches_every_legal_play_beyond_the_views_first_hints() -> None:
    # 16 cards with trios: hundreds of trio + two and airplane plays to lead.
    state = make_state(["3S 3H 3D 4S 4H 4D 5S 5H 5D 6S 7S 8S 9S TS JS QS", "KS KH", "AH"])
    view = engine.seat_view(state, 0)
    every = engine.hints_for(state, 0)
    assert len(view.legal) > len(view.hints)
    assert every[: len(view.hints)] == view.hints
    assert sorted("".join(c[0] for c in h) for h in every) == sorted(view.legal)


def test_first_hint_follows_cheaply_and_keeps_the_bomb() -> None:
    state = make_state(["5S 3C", "6S 9H 2S KS KH KD KC", "4H 4D"], played_any=[True] * 3)
    play(state, 0, "5S")
    view = engine.seat_view(state, 1)
    assert view.hints[0] == ["6S"]
    assert ["KS", "KH", "KD", "KC"] in view.hints


def test_first_hint_follows_with_a_whole_group_before_breaking_a_lower_pair() -> None:
    state = make_state(["5S 3C", "6S 6H 7D 9C JS", "4H 4D"], played_any=[True] * 3)
    play(state, 0, "5S")
    view = engine.seat_view(state, 1)
    # The 6 is lower, but playing it breaks the pair; the lone 7 breaks nothing.
    assert view.hints[0] == ["7D"]
    assert view.hints.index(["6S"]) > view.hints.index(["9C"])


def test_first_hint_goes_out_when_the_whole_hand_is_a_play() -> None:
    state = make_state(["3S 4H 5D 6C 7S", "9S 9H", "TS"])
    view = engine.seat_view(state, 0)
    assert len(view.legal) == 6
    assert view.hints[0] == ["3S", "4H", "5D", "6C", "7S"]


def test_card_counter_is_deck_minus_own_hand_minus_played() -> None:
    for preset in ("classic", "sixteen", "kawu"):
        state = _mid_game(preset, 8, 12)
        removed = engine.PRESETS[preset].removed_ace
        deck = Counter(engine.card_code(c)[0] for c in engine.deck(removed))
        played = Counter(code[0] for m in state.deal.moves for code in m.cards)
        for seat in range(3):
            view = engine.seat_view(state, seat)
            own = Counter(code[0] for code in view.hand)
            expected = {r: deck[r] - own[r] - played[r] for r in "3456789TJQKA2"}
            assert view.counter == expected
            others = Counter(
                engine.card_code(c)[0] for s in range(3) if s != seat for c in state.deal.hands[s]
            )
            assert view.counter == {r: others[r] for r in "3456789TJQKA2"}


def test_card_counter_starts_at_32_cards() -> None:
    state = engine.new_match(engine.PRESETS["classic"], 2)
    assert sum(engine.seat_view(state, 1).counter.values()) == 32


def test_seat_view_of_a_missing_seat_is_refused() -> None:
    state = engine.new_match(engine.PRESETS["classic"], 2)
    with pytest.raises(ValueError, match="seat"):
        engine.seat_view(state, 3)


def test_pick_cards_takes_concrete_cards_for_a_rank_string() -> None:
    hand = ["3S", "3H", "5D", "5C", "TH", "2S"]
    assert engine.pick_cards(hand, "355") == ["3S", "5D", "5C"]
    assert engine.pick_cards(hand, "T2") == ["TH", "2S"]


def test_pick_cards_prefers_the_card_that_must_be_included() -> None:
    hand = ["3H", "3D", "3S", "4S"]
    assert engine.pick_cards(hand, "3", must_include="3S") == ["3S"]
    assert "3S" in engine.pick_cards(hand, "334", must_include="3S")


def test_pick_cards_refuses_ranks_the_hand_lacks() -> None:
    with pytest.raises(ValueError, match="too few"):
        engine.pick_cards(["3S", "4S"], "33")


def test_changing_a_seat_view_or_an_event_never_changes_the_state() -> None:
    # Bots run in-process on their view; a bot that edits what it was given must
    # not be able to edit the game.
    state = make_state(["5S 5H 9S", "7S 7H 8S", "3H 4H"], played_any=[True] * 3)
    events = play(state, 0, "5S 5H")
    before = snapshot(state)
    view = engine.seat_view(state, 1)
    assert view.table is not None
    # Moves are immutable: editing one fails; lists are the view's own copies.
    for edit in (
        lambda: view.table.cards.append("AH"),  # type: ignore[union-attr]
        lambda: view.trick[0].cards.clear(),  # type: ignore[attr-defined]
        lambda: view.moves[0].cards.append("KD"),  # type: ignore[attr-defined]
    ):
        with pytest.raises(AttributeError):
            edit()
    view.moves.clear()
    view.trick.clear()
    view.hand.append("2S")
    view.counts[0] = 9
    first = events[0]
    assert isinstance(first, engine.Played)
    first.cards.append("QS")
    assert snapshot(state) == before


def test_changing_deal_results_in_a_view_or_events_never_changes_the_state() -> None:
    state = make_state(["5S", "7S 7H 8S", "3H 4H"], played_any=[True] * 3)
    events = play(state, 0, "5S")
    before = snapshot(state)
    view = engine.seat_view(state, 2)
    assert view.result is not None
    # Deal results cannot be edited at all (tuples): every view shares them.
    with pytest.raises(TypeError):
        view.result.cards_left[1] = 0  # type: ignore[index]
    with pytest.raises(AttributeError):
        view.result.match_totals.append(1)  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        view.results[0].deal_totals[0] = 99  # type: ignore[index]
    view.results.append(view.result)
    view.bomb_points[0] = 10
    view.totals[0] = 99
    view.winners.append(2)
    for event in events:
        for name in ("totals", "winners", "points", "cards"):
            value = getattr(event, name, None)
            if isinstance(value, list):
                value.append(7)
    assert snapshot(state) == before


def test_public_view_is_every_seat_views_shared_part_and_holds_no_hand() -> None:
    state = _mid_game("classic", 3, 9)
    public = engine.public_view(state)
    shared = msgspec.structs.asdict(public)
    for seat in range(3):
        view = msgspec.structs.asdict(engine.seat_view(state, seat))
        assert {k: view[k] for k in shared} == shared
    assert not hasattr(public, "hand")
    assert not hasattr(public, "counter")
    assert not isinstance(engine.seat_view(state, 0), engine.PublicView)


@pytest.mark.parametrize("preset", ["classic", "sixteen", "kawu"])
def test_public_view_names_no_card_held_by_any_seat_at_any_point_of_a_match(preset: str) -> None:
    rng = random.Random(preset)
    for seed in range(4):
        for state, _ in play_match(engine.PRESETS[preset], seed, 5, rng):
            encoded = msgspec.json.encode(engine.public_view(state)).decode()
            for hand in state.deal.hands:
                for card in hand:
                    assert f'"{engine.card_code(card)}"' not in encoded


@pytest.mark.parametrize("preset", ["classic", "sixteen", "kawu"])
def test_no_seat_view_names_another_seats_card_while_the_deal_is_played(preset: str) -> None:
    rng = random.Random(f"reveal-{preset}")
    for seed in range(3):
        for state, _ in play_match(engine.PRESETS[preset], seed, 5, rng):
            if state.deal.result is not None:
                continue
            for seat in range(3):
                view = engine.seat_view(state, seat)
                assert view.revealed == []
                encoded = msgspec.json.encode(view).decode()
                for other in range(3):
                    if other != seat:
                        for card in state.deal.hands[other]:
                            assert f'"{engine.card_code(card)}"' not in encoded


@pytest.mark.parametrize("preset", ["classic", "sixteen", "kawu"])
def test_once_the_deal_is_over_every_seat_sees_the_cards_the_others_still_held(
    preset: str,
) -> None:
    rng = random.Random(f"reveal-end-{preset}")
    ended = 0
    for state, action in play_match(engine.PRESETS[preset], 11, 5, rng):
        if state.deal.result is None:
            continue
        assert isinstance(action, engine.NextDeal)
        ended += 1
        held = [[engine.card_code(c) for c in hand] for hand in state.deal.hands]
        assert sum(map(len, held)) == sum(state.deal.result.cards_left)
        for seat in range(3):
            assert engine.seat_view(state, seat).revealed == held
        # Spectators are not shown the hands: the public view stays card-free.
        assert not hasattr(engine.public_view(state), "revealed")
    assert ended == 4  # every deal but the last is followed by NextDeal


@pytest.mark.parametrize("preset", ["classic", "sixteen", "kawu"])
def test_a_bots_view_is_the_persons_view_without_the_hints(preset: str) -> None:
    compared = 0
    for seed in range(12):
        state = _mid_game(preset, seed, 2 * seed)
        for seat in range(3):
            person = engine.seat_view(state, seat)
            bot = engine.seat_view(state, seat, hints=engine.BOT_HINTS)
            assert bot.hints == []
            assert msgspec.structs.replace(person, hints=[]) == bot
            compared += bool(person.hints)
    assert compared >= 4  # seats to move that had a play to hint


def test_a_view_carries_at_most_the_hints_asked_for() -> None:
    state = engine.new_match(engine.PRESETS["sixteen"], 5)
    seat = state.deal.turn
    full = engine.seat_view(state, seat)
    assert len(full.hints) == engine.view.MAX_HINTS < len(full.legal)
    assert engine.seat_view(state, seat, hints=3).hints == full.hints[:3]


def _expected_public(state: MatchState) -> dict[str, object]:
    """Every public field as its name says, read off the state the long way."""
    deal = state.deal
    return {
        "rules": state.rules,
        "deal_no": deal.deal_no,
        "deals": state.deals,
        "counts": [len(h) for h in deal.hands],
        "last_card": [len(h) == 1 for h in deal.hands],
        "turn": None if deal.result is not None else deal.turn,
        "leader": deal.leader,
        "table": deal.table,
        "trick": deal.trick,
        "moves": deal.moves,
        "bomb_points": deal.bomb_points,
        "totals": state.totals,
        "result": deal.result,
        "results": state.results,
        "match_over": state.winners is not None,
        "winners": state.winners or [],
    }


def test_every_field_of_a_view_holds_what_its_name_says_at_every_point_of_a_match() -> None:
    # Views are built positionally (they are built after every action); a field put
    # in another's place would still type-check where both are lists of ints.
    seen_bomb = False
    for state, _action in play_match(engine.PRESETS["classic"], 0, 5, random.Random(0)):
        expected = _expected_public(state)
        seen_bomb = seen_bomb or any(state.deal.bomb_points)
        public = msgspec.structs.asdict(engine.public_view(state))
        assert public == expected
        for seat in range(3):
            view = engine.seat_view(state, seat)
            assert {k: getattr(view, k) for k in expected} == expected
            assert view.seat == seat
            assert view.hand == [engine.card_code(c) for c in state.deal.hands[seat]]
            assert view.can_pass == (
                view.turn == seat and state.deal.table is not None and not view.legal
            )
            assert (view.must_include is not None) == (
                view.turn == seat and state.deal.needs_three_of_spades
            )
            assert bool(view.revealed) == (state.deal.result is not None)
    assert seen_bomb, "the seed should reach a bomb, so bomb_points are not all zero"
