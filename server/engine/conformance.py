"""Conformance tool: legal plays for a position, as JSON lines in and out.

``python -m server.engine.conformance`` reads one JSON position per line on
stdin and writes one JSON answer per line on stdout, in order.  ``solve`` is
the same thing for one already-decoded position.  Input::

    {"id": 1, "rules": "classic", "hand": ["3S", ...], "table": [],
     "next_has_one": false, "first_play": false}

Output: ``{"id": 1, "plays": ["3", "5566", ...], "pass": false}``, or
``{"id": 1, "error": "<reason>"}`` for an invalid position.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import msgspec

from .cards import HAND_SIZE, THREE_OF_SPADES, deck, parse_cards
from .combos import counts_of, counts_string
from .errors import EngineError
from .moves import legal_plays, sort_key, table_reading_of
from .rules import PRESETS

__all__ = ["main", "solve"]


class _Invalid(Exception):
    pass


def _field(position: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    value = position.get(name, default)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Invalid(f"{name!r} must be a {kind.__name__}")
    return value


def solve(position: dict[str, Any]) -> dict[str, Any]:
    """The legal plays of one position, or ``{"id", "error"}`` when it is invalid."""
    ident = position.get("id") if isinstance(position, dict) else None
    try:
        if not isinstance(position, dict):
            raise _Invalid("a position must be a JSON object")
        rules_name = _field(position, "rules", str, "classic")
        rules = PRESETS.get(rules_name)
        if rules is None:
            raise _Invalid(f"unknown rules {rules_name!r}")
        hand_codes = _field(position, "hand", list, None)
        table_codes = _field(position, "table", list, [])
        next_has_one = _field(position, "next_has_one", bool, False)
        first_play = _field(position, "first_play", bool, False)
        if not all(isinstance(c, str) for c in hand_codes + table_codes):
            raise _Invalid('cards must be strings such as "3S"')
        hand = parse_cards(hand_codes)
        table = parse_cards(table_codes)
        if set(hand) & set(table) or len(set(hand) | set(table)) < len(hand) + len(table):
            raise _Invalid("a card is both in the hand and on the table")
        allowed = set(deck(rules.removed_ace))
        for card in hand + table:
            if card not in allowed:
                raise _Invalid("a card is not in this table's deck")
        if not hand:
            raise _Invalid("the hand is empty")
        if len(hand) > HAND_SIZE:
            raise _Invalid(f"a hand holds at most {HAND_SIZE} cards")
        reading = None
        if table:
            reading = table_reading_of(counts_of(table))
            if reading is None:
                raise _Invalid("the table is not a combination")
        needs_three = first_play and rules.first_play_three_spades
        if needs_three and table:
            raise _Invalid("the first play of a match has no table to beat")
        if needs_three and THREE_OF_SPADES not in hand:
            raise _Invalid("the first play needs the 3 of spades, which is not in the hand")
        plays = legal_plays(counts_of(hand), reading, next_has_one, needs_three, rules.split_bombs)
    except (_Invalid, EngineError) as exc:
        return {"id": ident, "error": str(exc)}
    return {
        "id": ident,
        "plays": [counts_string(p) for p in sorted(plays, key=sort_key)],
        "pass": reading is not None and not plays,
    }


def main(stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    """Answer one JSON position per line of ``stdin`` on ``stdout``, in order."""

    decoder = msgspec.json.Decoder()
    encoder = msgspec.json.Encoder()
    for line in stdin:
        if not line.strip():
            continue
        try:
            position = decoder.decode(line)
        except msgspec.DecodeError as exc:
            answer: dict[str, Any] = {"id": None, "error": f"invalid JSON: {exc}"}
        else:
            answer = solve(position)
        stdout.write(encoder.encode(answer).decode() + "\n")
        stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
