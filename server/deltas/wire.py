"""A view's wire form: the same view, each move held once and the aids as short strings.

A socket that takes deltas keeps its view in this form (a JSON array), and deltas
patch it; the client expands it back into the very view a ``state``/``watch``
frame carries (``expand``; client/js/deltas.js does the same).  ``compact`` reads
nothing but the view it is given, made by the one projection
(``engine.seat_view``/``public_view``), so the wire form can hold nothing that view
does not; expanding is a fixed reshaping, no rule of the game:

- the deal's moves are held once: ``trick`` is the index in ``moves`` where the
  trick starts (the trick is the moves from there on) and ``table`` the index of
  the move on the table (or null); ``result``, once the deal is over, is the
  index of its result in ``results``;
- a move is ``[seat, cards, kind, top, length]`` with its cards as one string of
  codes (``"5S5H"``), a pass ``[seat]``;
- the hand is one string of codes; ``legal`` and ``hints`` are rank strings joined
  by ``,`` (a hint's cards are, for each of its ranks, the first cards of that rank
  in the hand, ``must_include`` first: exactly how the projection picks them);
  ``can_pass`` and ``pass_reason`` are one code (``PASS_CODES``); ``counter`` lists
  the counts in rank order; ``revealed`` is one string of codes per seat.

The rules and each deal's result are lists of their fields' values
(``RULES_FIELDS``, ``RESULT_FIELDS``), so the wire form holds no object at all: its
canonical JSON (``server.deltas.digest``) is its plain JSON, with no key to sort.
The order (``PUBLIC_FIELDS`` then ``SEAT_FIELDS``) puts what changes least first.
"""

from __future__ import annotations

from typing import Any, get_args

from msgspec.structs import astuple

from server.engine import Event, PublicView, SeatView
from server.engine.actions import Passed, Played
from server.engine.cards import RANKS
from server.engine.errors import Reason
from server.engine.rules import Rules
from server.engine.state import DealResult, Move

from .ops import PatchError, copy

__all__ = [
    "EVENT_FIELDS",
    "PASS_CODES",
    "PUBLIC_FIELDS",
    "RESULT_FIELDS",
    "RULES_FIELDS",
    "SEAT_FIELDS",
    "Seen",
    "appended",
    "compact",
    "compact_events",
    "compact_public",
    "compact_seat",
    "expand",
    "seen",
    "whole_events",
]

# The wire form's fields, by index: a spectator's is the first 16.
PUBLIC_FIELDS = (
    "rules",
    "results",
    "deals",
    "deal_no",
    "moves",
    "trick",
    "table",
    "leader",
    "turn",
    "counts",
    "last_card",
    "bomb_points",
    "totals",
    "result",
    "match_over",
    "winners",
)
SEAT_FIELDS = ("seat", "hand", "aids", "counter", "revealed")
RULES, RESULTS, MOVES = 0, 1, 4
# The rules and each deal's result are lists of their fields' values, in this order.
RULES_FIELDS: tuple[str, ...] = Rules.__struct_fields__
RESULT_FIELDS: tuple[str, ...] = DealResult.__struct_fields__

# ``pass``: 0 when the seat may pass (``can_pass`` true, ``pass_reason`` null), else
# the reason it may not, by its index here.
PASS_CODES: tuple[str | None, ...] = (
    None,
    Reason.DEAL_OVER.value,
    Reason.NOT_YOUR_TURN.value,
    Reason.LEADER_MAY_NOT_PASS.value,
    Reason.MUST_BEAT.value,
)
# An event that tells of no move is ``[type, *fields]``, its fields in this order.
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    cls.__struct_config__.tag: cls.__struct_fields__ for cls in get_args(Event)
}
_PASS_CODE = {reason: code for code, reason in enumerate(PASS_CODES)}


def _move(move: Move) -> list[Any]:
    if move.kind == "pass" and not move.cards and not move.top and not move.length:
        return [move.seat]
    return [move.seat, "".join(move.cards), move.kind, move.top, move.length]


def _table(moves: list[Move], trick: int, table: Move | None) -> int | None:
    """``table`` as the wire form holds it: -1 when it is the trick's last play (None
    when the trick holds none), which it always is; else its index (or None)."""
    if table is not None and moves[-1] is table:
        return -1  # a play was just made
    last = len(moves) - 1
    while last >= trick and moves[last].kind == "pass":
        last -= 1
    if (moves[last] if last >= trick else None) is table:
        return -1
    if table is None:
        return None
    for i in range(trick, len(moves)):
        if moves[i] is table:
            return i
    raise ValueError("the table's move is not in the trick")


# What a wire form was made from, as far as the next one reuses it: the view's moves,
# its results and its rules.  Plain tuples of the engine's untracked structs: the
# collector untracks them the first time it sees them, so a socket that keeps one until
# its next frame costs no later collection (keeping the view would keep its lists).
Seen = tuple[tuple[Move, ...], tuple[DealResult, ...], Rules]


def seen(view: SeatView | PublicView) -> Seen:
    """What ``view``'s wire form lends the next one (see ``compact``)."""
    return tuple(view.moves), tuple(view.results), view.rules


def compact(view: SeatView | PublicView, before: tuple[Seen, list[Any]] | None = None) -> list[Any]:
    """``view``'s wire form.  ``before``: what an earlier wire form was made from
    (``seen``) and that wire form, whose moves are reused when ``view``'s extend them
    (each move is made into its form once)."""
    public = compact_public(view, before)
    return public + compact_seat(view) if isinstance(view, SeatView) else public


def compact_public(
    view: SeatView | PublicView, before: tuple[Seen, list[Any]] | None = None
) -> list[Any]:
    """The wire form of ``view``'s public fields (``PUBLIC_FIELDS``): a spectator's whole
    wire form, the first part of a seat's (``before`` as in ``compact``)."""
    moves, results = view.moves, view.results
    done: list[Any] = []
    done_results: list[Any] = []
    rules: list[Any] | None = None
    if before is not None:
        (old_moves, old_results, old_rules), old_wire = before
        if len(old_moves) <= len(moves) and tuple(moves[: len(old_moves)]) == old_moves:
            done = old_wire[MOVES]
        if len(old_results) <= len(results) and tuple(results[: len(old_results)]) == old_results:
            done_results = old_wire[RESULTS]
        if old_rules is view.rules:
            rules = old_wire[RULES]
    wire_moves = done + [_move(m) for m in moves[len(done) :]] if done else list(map(_move, moves))
    wire_results = done_results + [list(astuple(r)) for r in results[len(done_results) :]]
    trick = len(moves) - len(view.trick)
    if moves[trick:] != view.trick:
        raise ValueError("the trick is not the deal's last moves")
    table = _table(moves, trick, view.table)
    result = None
    if view.result is not None:
        # A deal's result is the match's last result once it is over.
        if not view.results or view.results[-1] is not view.result:
            raise ValueError("the deal's result is not the match's last")
        result = len(view.results) - 1
    return [
        list(astuple(view.rules)) if rules is None else rules,
        wire_results,
        view.deals,
        view.deal_no,
        wire_moves,
        trick,
        table,
        view.leader,
        view.turn,
        view.counts,
        view.last_card,
        view.bomb_points,
        view.totals,
        result,
        view.match_over,
        view.winners,
    ]


def compact_seat(view: SeatView) -> list[Any]:
    """The wire form of ``view``'s own fields (``SEAT_FIELDS``): the last part of a
    seat's wire form."""
    if view.can_pass != (view.pass_reason is None):
        raise ValueError("a seat may pass exactly when no reason says it may not")
    code = _PASS_CODE[view.pass_reason]
    return [
        view.seat,
        "".join(view.hand),
        [
            ",".join(view.legal),
            view.must_include,
            code,
            # Two characters a card, two a separator: every other one is a rank or a comma.
            ",,".join(map("".join, view.hints))[::2],
        ]
        if view.legal or view.hints or view.must_include is not None
        else code,
        list(view.counter.values()),
        list(map("".join, view.revealed)),
    ]


def _codes(text: Any) -> list[str]:
    if not isinstance(text, str) or len(text) % 2:
        raise PatchError(f"not a string of card codes: {text!r}")
    return [text[i : i + 2] for i in range(0, len(text), 2)]


def _listed(text: Any) -> list[str]:
    if not isinstance(text, str):
        raise PatchError(f"not a list joined by commas: {text!r}")
    return text.split(",") if text else []


def _expand_move(move: Any) -> dict[str, Any]:
    if not isinstance(move, list) or len(move) not in (1, 5):
        raise PatchError(f"not a move: {move!r}")
    if len(move) == 1:
        return {"seat": move[0], "cards": [], "kind": "pass", "top": "", "length": 0}
    return {
        "seat": move[0],
        "cards": _codes(move[1]),
        "kind": move[2],
        "top": move[3],
        "length": move[4],
    }


def pick(hand: list[str], ranks: str, must_include: str | None) -> list[str]:
    """A hint's cards: for each rank of ``ranks``, the first cards of that rank in
    ``hand`` (``must_include`` first), in the hand's order."""
    wanted: dict[str, int] = {}
    for rank in ranks:
        wanted[rank] = wanted.get(rank, 0) + 1
    taken: list[int] = []
    for rank, count in wanted.items():
        at = [i for i, card in enumerate(hand) if card[0] == rank]
        at.sort(key=lambda i: hand[i] != must_include)
        if len(at) < count:
            raise PatchError(f"the hand holds too few {rank!r} for {ranks!r}")
        taken += at[:count]
    return [hand[i] for i in sorted(taken)]


def expand(wire: Any) -> dict[str, Any]:
    """The view (as a ``state``/``watch`` frame's JSON) a wire form stands for;
    ``PatchError`` when it is no wire form."""
    if not isinstance(wire, list) or len(wire) not in (
        len(PUBLIC_FIELDS),
        len(PUBLIC_FIELDS) + len(SEAT_FIELDS),
    ):
        raise PatchError("a view's wire form is a list of its fields")
    public = dict(zip(PUBLIC_FIELDS, wire, strict=False))
    moves = public["moves"]
    trick, table = public["trick"], public["table"]
    if not isinstance(moves, list) or not _index(trick, len(moves) + 1):
        raise PatchError("the trick does not start in the moves")
    if table is not None and table != -1 and not (_index(table, len(moves)) and table >= trick):
        raise PatchError("the table's move is not in the trick")
    view: dict[str, Any] = {
        "rules": _fields(RULES_FIELDS, public["rules"]),
        "deal_no": public["deal_no"],
        "deals": public["deals"],
        "counts": copy(public["counts"]),
        "last_card": copy(public["last_card"]),
        "turn": public["turn"],
        "leader": public["leader"],
    }
    expanded = [_expand_move(m) for m in moves]
    if table == -1:
        # The trick's last play, if it holds one.
        table = next(
            (i for i in range(len(expanded) - 1, trick - 1, -1) if expanded[i]["kind"] != "pass"),
            None,
        )
    view["table"] = None if table is None else copy(expanded[table])
    view["trick"] = copy(expanded[trick:])
    view["moves"] = expanded
    result = public["result"]
    if not isinstance(public["results"], list):
        raise PatchError("the results are a list")
    results = [_fields(RESULT_FIELDS, r) for r in public["results"]]
    if not (result is None or _index(result, len(results))):
        raise PatchError("the deal's result is not one of the match's")
    view["bomb_points"] = copy(public["bomb_points"])
    view["totals"] = copy(public["totals"])
    view["result"] = None if result is None else copy(results[result])
    view["results"] = results
    for key in ("match_over", "winners"):
        view[key] = copy(public[key])
    if len(wire) == len(PUBLIC_FIELDS):
        return view
    seat = dict(zip(SEAT_FIELDS, wire[len(PUBLIC_FIELDS) :], strict=True))
    hand = _codes(seat["hand"])
    aids = seat["aids"]
    if not isinstance(aids, list):
        aids = ["", None, aids, ""]
    if len(aids) != 4:
        raise PatchError("the aids are legal, must_include, pass and hints")
    legal, must, code, hints = aids
    if not _index(code, len(PASS_CODES)):
        raise PatchError(f"no pass code {code!r}")
    counter = seat["counter"]
    if not isinstance(counter, list) or len(counter) != len(RANKS):
        raise PatchError("the counter lists one count per rank")
    revealed = seat["revealed"]
    if not isinstance(revealed, list):
        raise PatchError("revealed is a list")
    view |= {
        "seat": seat["seat"],
        "hand": hand,
        "legal": _listed(legal),
        "must_include": must,
        "can_pass": code == 0,
        "pass_reason": PASS_CODES[code],
        "hints": [pick(hand, ranks, must) for ranks in _listed(hints)],
        "counter": dict(zip(RANKS, counter, strict=True)),
        "revealed": [_codes(cards) for cards in revealed],
    }
    return view


def _fields(names: tuple[str, ...], values: Any) -> dict[str, Any]:
    if not isinstance(values, list) or len(values) != len(names):
        raise PatchError(f"not the {len(names)} fields {', '.join(names)}")
    return dict(zip(names, copy(values), strict=True))


def _index(value: Any, size: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def appended(old: list[Any], new: list[Any]) -> list[int]:
    """The indices of the moves wire form ``new`` holds past ``old``'s: the events a
    delta implies when it leaves its own out."""
    return list(range(len(old[MOVES]), len(new[MOVES])))


def compact_events(events: list[Any], moves: list[Any]) -> list[Any]:
    """``events`` as a delta frame carries them: a ``played`` or ``passed`` event that
    tells of one of the last moves of ``moves`` (the view's, after the events) is the
    index of that move (``whole_events`` is the inverse); any other event whole."""
    if len(events) == 1 and moves:
        # As a rule an action tells of one move: the last.
        event = events[0]
        if (type(event) is Played or type(event) is Passed) and _tells_of(event, moves[-1]):
            return [len(moves) - 1]
    tells = [e for e in events if type(e) is Played or type(e) is Passed]
    start = len(moves) - len(tells)
    if start < 0:
        return events
    out: list[Any] = []
    i = start
    for event in events:
        if type(event) is Played or type(event) is Passed:
            if not _tells_of(event, moves[i]):
                return [[e.__struct_config__.tag, *astuple(e)] for e in events]
            out.append(i)
            i += 1
        else:
            out.append([event.__struct_config__.tag, *astuple(event)])
    return out


def _tells_of(event: Played | Passed, move: Any) -> bool:
    if move.seat != event.seat:
        return False
    if isinstance(event, Passed):
        return bool(move.kind == "pass")
    return bool((move.kind, move.top, move.cards) == (event.kind, event.top, tuple(event.cards)))


def whole_events(events: list[Any], view: Any) -> list[Any]:
    """The events of a delta frame (decoded JSON) with each move's index replaced by the
    event that move of the (expanded) view tells of, in the JSON a ``state`` frame
    carries."""
    if not isinstance(events, list):
        raise PatchError("the events are a list")
    moves = view.get("moves") if isinstance(view, dict) else None
    out: list[Any] = []
    for event in events:
        if isinstance(event, list):
            fields = EVENT_FIELDS.get(event[0]) if event else None
            if fields is None or len(event) != len(fields) + 1:
                raise PatchError(f"no such event: {event!r}")
            out.append({"type": event[0], **dict(zip(fields, copy(event[1:]), strict=True))})
            continue
        if isinstance(event, dict):
            out.append(event)
            continue
        if type(event) is not int:
            raise PatchError(f"no such event: {event!r}")
        if not isinstance(moves, list) or not 0 <= event < len(moves):
            raise PatchError(f"no move {event!r} to tell of")
        move = moves[event]
        if not isinstance(move, dict):
            raise PatchError(f"move {event!r} is no move")
        if move.get("kind") == "pass":
            out.append({"type": "passed", "seat": move.get("seat")})
        else:
            out.append(
                {
                    "type": "played",
                    "seat": move.get("seat"),
                    "cards": copy(move.get("cards")),
                    "kind": move.get("kind"),
                    "top": move.get("top"),
                }
            )
    return out
