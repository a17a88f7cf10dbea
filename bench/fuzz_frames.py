"""Hostile client frames, for the protocol fuzz (tests/server/test_fuzz.py) and bench/attacks.py.

``frames(rng)`` yields an endless mix: valid messages with fields mutated,
wrong types, unknown types, random bytes, invalid UTF-8, deep nesting, long
strings and numbers at the edges.  Every frame stays under 16 KiB so the
transport never cuts the socket: what is fuzzed is the decoder and the rooms.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

__all__ = ["CARD_LIKE", "TYPES", "frames", "leaked_cards"]

TYPES = ["join", "play", "pass", "hint", "bot_speed", "next_deal", "new_match", "ping"]
CARD_LIKE = [r + s for r in "3456789TJQKA2" for s in "SHDC"] + ["10H", "3s", "XX", "", "1S"]
_ODD = [
    None, True, False, 0, -1, 1, 2**31, 2**63, -(2**63), 1e308, "0", "", "x" * 200, [], {},
    [1, 2], {"a": 1}, "\u0000", "\ud83c\udccf", "é",
]  # fmt: skip


def _value(rng: random.Random) -> Any:
    return rng.choice([*_ODD, rng.randint(-5, 50), rng.choice(CARD_LIKE)])


def _message(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice([*TYPES, "undo", "PLAY", "", "state", "error"])
    message: dict[str, Any] = {"type": kind}
    if rng.random() < 0.9:
        message["version"] = rng.choice([0, 1, 2, 3, rng.randint(-3, 400), "1", None, 1.5])
    if kind == "play" or rng.random() < 0.2:
        size = rng.choice([0, 1, 2, 3, 4, 5, 16, 17, 40])
        message["cards"] = [rng.choice(CARD_LIKE) for _ in range(size)]
    if kind == "bot_speed" or rng.random() < 0.1:
        message["ms"] = rng.choice([0, 1, 5000, 5001, -1, "fast", None])
    if kind == "join" or rng.random() < 0.1:
        message["table"] = rng.choice(["", "x" * 22, "../../etc", _value(rng)])
        message["token"] = rng.choice(["", "y" * 32, _value(rng)])
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        message[rng.choice(["seat", "extra", "type", "version", "cards", "x" * 30])] = _value(rng)
    return message


def frames(rng: random.Random) -> Iterator[str | bytes]:
    """An endless stream of hostile frames (text as ``str``, binary as ``bytes``)."""
    while True:
        pick = rng.random()
        if pick < 0.55:
            yield json.dumps(_message(rng))
        elif pick < 0.65:
            text = json.dumps(_message(rng))
            cut = rng.randrange(len(text) + 1)
            yield text[:cut] + rng.choice(["", "}", "]", ",", '"', "\\", "{{"]) + text[cut:]
        elif pick < 0.72:
            yield bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        elif pick < 0.79:
            # Valid JSON whose strings hold bytes that are not UTF-8.
            yield b'{"type":"' + bytes([rng.choice([0x80, 0xC3, 0xFF, 0xED])]) + b'"}'
        elif pick < 0.86:
            depth = rng.choice([50, 500, 2000, 5000])
            inner = "[" * depth + "]" * depth
            yield (
                rng.choice(['{"type":"play","version":0,"cards":', '{"x":', ""])
                + inner
                + ("}" if rng.random() < 0.7 else "")
            )
        elif pick < 0.93:
            yield json.dumps({"type": "ping", "pad": "z" * rng.randrange(1, 15000)})
        else:
            yield rng.choice(["", " ", "null", "[]", "{}", "0", '"ping"', "\u0000", "{" * 3])


def leaked_cards(frame: dict[str, Any]) -> set[str]:
    """Cards in a ``state`` frame that are neither the seat's own nor already played
    (nor, once the deal is over, revealed)."""
    if frame.get("type") != "state":
        return set()
    view = frame["view"]
    known = set(view["hand"])
    for move in [*view["moves"], *view["trick"], *([view["table"]] if view["table"] else [])]:
        known.update(move.get("cards") or [])
    for event in frame["events"]:
        known.update(event.get("cards") or [])
    # The rules name the ace taken out of the deck: public, and held by nobody.
    known.add(view["rules"]["removed_ace"])
    # Once the deal is over the hands left are shown to every seat (the view's
    # ``revealed``): a fuzzing run long enough for the deal to end sees them.
    if view.get("result") is not None:
        for cards in view.get("revealed") or []:
            known.update(cards)
    return _cards(frame) - known


def _cards(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if len(value) == 2 and value in _ALL_CARDS else set()
    if isinstance(value, dict):
        return set().union(*(_cards(k) | _cards(v) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(_cards(v) for v in value)) if value else set()
    return set()


_ALL_CARDS = frozenset(r + s for r in "3456789TJQKA2" for s in "SHDC")
