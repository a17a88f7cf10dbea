"""The positions of ``data/perft.jsonl`` and how the file is (re)built.

``HAND_CHECKED`` are edge cases whose expected plays were worked out by hand from
RULES.md (each with the reasoning); the rest are random positions from fixed
seeds whose expected plays come from the oracle.  Building the file asserts that
the oracle agrees with every hand-checked answer, so both checks stand behind
each line.  Rebuild with ``python -m tests.engine.perft_cases``; the file is the
reference and is checked in, so a change to it shows up in review.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from . import oracle
from .positions import random_position

__all__ = ["HAND_CHECKED", "INVALID", "PERFT_PATH", "build", "load"]

PERFT_PATH = Path(__file__).resolve().parent / "data" / "perft.jsonl"


def _pos(
    ident: str,
    rules: str,
    hand: str,
    table: str = "",
    *,
    next_has_one: bool = False,
    first_play: bool = False,
    plays: list[str] | None,
    why: str,
) -> dict[str, Any]:
    """A position; ``plays=None`` leaves the expected plays to the oracle."""
    table_cards = table.split()
    return {
        "id": ident,
        "rules": rules,
        "hand": hand.split(),
        "table": table_cards,
        "next_has_one": next_has_one,
        "first_play": first_play,
        "expect": None
        if plays is None
        else {"plays": plays, "pass": bool(table_cards) and not plays},
        "why": why,
    }


WORKED = "RULES.md worked example: 9 on the table, hold 10 K 2, next has one: only the 2"

HAND_CHECKED: list[dict[str, Any]] = [
    # --- last card (报单) ---
    *(
        _pos(f"worked-example-{r}", r, "TS KH 2S", "9D", next_has_one=True, plays=["2"], why=WORKED)
        for r in ("classic", "sixteen", "kawu")
    ),
    _pos(
        "worked-example-without-last-card",
        "classic",
        "TS KH 2S",
        "9D",
        plays=["T", "K", "2"],
        why="any higher single beats when nobody is down to one",
    ),
    _pos(
        "last-card-leading-single-must-be-highest",
        "classic",
        "TS KH 2S",
        next_has_one=True,
        plays=["2"],
        why="leading, a single must be the highest too; no pairs held",
    ),
    _pos(
        "last-card-leaves-pairs-free",
        "classic",
        "5S 5H KD",
        next_has_one=True,
        plays=["55", "K"],
        why="pairs are not restricted; the single must be the K",
    ),
    _pos(
        "last-card-highest-does-not-beat",
        "classic",
        "4S 5H 6D",
        "7C",
        next_has_one=True,
        plays=[],
        why="the highest single (6) does not beat the 7: pass",
    ),
    _pos(
        "last-card-following-lower-singles-barred",
        "classic",
        "4S 6H 9D",
        "5C",
        next_has_one=True,
        plays=["9"],
        why="6 would beat but is not the highest",
    ),
    _pos(
        "last-card-following-free",
        "classic",
        "4S 6H 9D",
        "5C",
        plays=["6", "9"],
        why="no last card: both higher singles",
    ),
    _pos(
        "last-card-ignores-locked-bomb-sixteen",
        "sixteen",
        "5S KS KH KD KC",
        "4D",
        next_has_one=True,
        plays=["5", "KKKK"],
        why="D=no: the Ks leave only as a bomb, so the highest playable single is the 5",
    ),
    _pos(
        "last-card-bomb-splittable-classic",
        "classic",
        "5S KS KH KD KC",
        "4D",
        next_has_one=True,
        plays=["K", "KKKK"],
        why="D=yes: the K is the highest single",
    ),
    _pos(
        "last-card-locked-bomb-leading-sixteen",
        "sixteen",
        "3S 3H 3D 3C 5H 8D",
        next_has_one=True,
        plays=["3333", "8"],
        why="D=no: no trio from the bomb; singles only the 8 (highest not locked)",
    ),
    _pos(
        "last-card-bomb-broken-leading-classic",
        "classic",
        "3S 3H 3D 3C 5H 8D",
        next_has_one=True,
        plays=["33", "3333", "33335", "33338", "33358", "8"],
        why="D=yes: pair, bomb, trio + any two (a fourth 3 may be an extra), single 8 only",
    ),
    # --- first play, rule B ---
    _pos(
        "first-play-needs-three-of-spades-classic",
        "classic",
        "3S 3H 4S 5S 6S 7S 8D",
        first_play=True,
        plays=["3", "33", "34567", "345678"],
        why="B=yes: every play holds a 3 (the 3 of spades can always be chosen)",
    ),
    _pos(
        "first-play-needs-three-of-spades-kawu",
        "kawu",
        "3S 3H 4S 5S 6S 7S 8D",
        first_play=True,
        plays=["3", "33", "34567", "345678"],
        why="kawu has B=yes too",
    ),
    _pos(
        "first-play-free-sixteen",
        "sixteen",
        "3S 3H 4S 5S 6S 7S 8D",
        first_play=True,
        plays=["3", "33", "34567", "345678", "4", "45678", "5", "6", "7", "8"],
        why="B=no: the first play is free",
    ),
    _pos(
        "first-play-three-inside-bomb-classic",
        "classic",
        "3S 3H 3D 3C 4S 5H",
        first_play=True,
        plays=["3", "33", "3333", "33334", "33335", "33345"],
        why="every play with a 3: single, pair, bomb, trio + two",
    ),
    _pos(
        "first-play-three-inside-locked-bomb-sixteen",
        "sixteen",
        "3S 3H 3D 3C 4S 5H",
        first_play=True,
        plays=["3333", "4", "5"],
        why="B=no and D=no: bomb whole, singles",
    ),
    # --- straights ---
    _pos(
        "straight-3-to-A-following",
        "classic",
        "3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        "3S 4S 5S 6S 7S",
        plays=["45678", "56789", "6789T", "789TJ", "89TJQ", "9TJQK", "TJQKA"],
        why="same length 5, higher top: tops 8 through A",
    ),
    _pos(
        "straight-of-twelve-beats-only-by-length-12",
        "kawu",
        "3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        "3S 4S 5S 6S 7S 8S 9S TS JS QS KS",
        plays=["456789TJQKA"],
        why="11-card straight: only 4..A of the held cards",
    ),
    _pos(
        "straight-3-to-A-on-table-unbeatable",
        "classic",
        "4D 5D 6D 7D 8D 9D TD JD QD KD",
        "3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
        plays=[],
        why="the 12-card straight 3..A is the highest straight there is",
    ),
    _pos(
        "two-never-in-a-straight-leading",
        "classic",
        "TS JS QS KS AH 2S",
        plays=["T", "TJQKA", "J", "Q", "K", "A", "2"],
        why="JQKA2 is no straight",
    ),
    _pos(
        "two-never-in-a-straight-following",
        "classic",
        "TS JS QS KS AH 2S",
        "8H 9H TH JH QH",
        plays=["TJQKA"],
        why="only TJQKA; JQKA2 does not exist",
    ),
    # --- pair runs ---
    _pos(
        "long-pair-run-following",
        "classic",
        "3S 3H 4S 4H 5S 5H 6S 6H 7S 7H 8S 8H 9S 9H",
        "3D 3C 4D 4C 5D 5C",
        plays=["445566", "556677", "667788", "778899"],
        why="three pairs, top above 5",
    ),
    _pos(
        "pair-run-with-aces-not-twos",
        "kawu",
        "KS KH AS AH 2S",
        "QD QC KD KC",
        plays=["KKAA"],
        why="KKAA beats QQKK; the 2 has no pair and no run",
    ),
    _pos(
        "seven-pair-run-leading",
        "classic",
        "3S 3H 4S 4H 5S 5H 6S 6H 7S 7H 8S 8H 9S 9H",
        "3D 3C 4D 4C 5D 5C 6D 6C 7D 7C 8D 8C",
        plays=["445566778899"],
        why="six pairs, top above 8: only 4..9",
    ),
    # --- trio + two and airplanes ---
    _pos(
        "trio-two-with-two-of-spades-as-extra",
        "classic",
        "7S 7H 7D KS 2S",
        "3S 3H 3D 4S 5S",
        plays=["777K2"],
        why="extras are any two cards, the 2 included",
    ),
    _pos(
        "airplane-two-as-wing",
        "classic",
        "9S 9H 9D TS TH TD JS QS KS 2S",
        "5S 5H 5D 6S 6H 6D 3S 3H 4S 4H",
        plays=["999TTTJQK2"],
        why="two trios top T over top 6, four wings from J Q K 2",
    ),
    _pos(
        "airplane-three-trios-following",
        "classic",
        "6S 6H 6D 7S 7H 7D 8S 8H 8D 9S 9H 9D 2S 3C 4C",
        "3S 3H 3D 4S 4H 4D 5S 5H 5D TS JS QS KS AH TH",
        plays=["346667778889992"],
        why="15 cards for three trios: only the whole hand, read as 666777888 (top 8) or "
        "777888999 (top 9) with the rest as wings, or short as four trios",
    ),
    # --- bombs ---
    _pos(
        "bomb-beats-higher-bomb-only",
        "classic",
        "8S 8H 8D 8C 6S 6H 6D 6C 2S",
        "7S 7H 7D 7C",
        plays=["8888"],
        why="a bomb is beaten only by a higher bomb",
    ),
    _pos(
        "lower-bomb-must-pass",
        "classic",
        "6S 6H 6D 6C 5S",
        "7S 7H 7D 7C",
        plays=[],
        why="nothing beats the 7777",
    ),
    _pos(
        "three-aces-are-not-a-bomb",
        "classic",
        "AH AD AC 2S",
        "KS KH KD KC",
        plays=[],
        why="AAA is a trio, not a bomb; nothing beats a bomb of Ks here",
    ),
    _pos(
        "bomb-beats-the-two",
        "classic",
        "3S 3H 3D 3C AH",
        "2S",
        plays=["3333"],
        why="no single beats the 2; the lowest bomb does, and must-beat applies",
    ),
    _pos(
        "bomb-beats-a-long-straight",
        "sixteen",
        "9S 9H 9D 9C 2S",
        "3S 4S 5S 6S 7S 8S",
        plays=["9999"],
        why="a bomb beats every non-bomb",
    ),
    # --- short final forms ---
    _pos(
        "bare-trio-beats-trio-two-as-last-cards",
        "classic",
        "8S 8H 8D",
        "5S 5H 5D 6S 7S",
        plays=["888"],
        why="a short trio counts as a trio + two when it is the whole hand",
    ),
    _pos(
        "trio-one-beats-trio-two-as-last-cards",
        "classic",
        "8S 8H 8D 9S",
        "5S 5H 5D 6S 7S",
        plays=["8889"],
        why="trio with one extra, whole hand",
    ),
    _pos(
        "low-short-trio-does-not-beat",
        "classic",
        "4S 4H 4D",
        "5S 5H 5D 6S 7S",
        plays=[],
        why="a short trio of 4s is below a trio of 5s",
    ),
    _pos(
        "short-airplane-beats-full-airplane",
        "classic",
        "8S 8H 8D 9S 9H 9D TS",
        "5S 5H 5D 6S 6H 6D 3S 4S 7S JS",
        plays=["888999T"],
        why="two trios with one wing, whole hand, top 9 over top 6",
    ),
    _pos(
        "bare-airplane-beats-full-airplane",
        "kawu",
        "8S 8H 8D 9S 9H 9D",
        "5S 5H 5D 6S 6H 6D 3S 4S 7S JS",
        plays=["888999"],
        why="no wings at all, whole hand",
    ),
    _pos(
        "full-trio-two-beats-short-trio-on-table",
        "classic",
        "8S 8H 8D 3H 4H",
        "7S 7H 7D",
        plays=["34888"],
        why="a bare trio on the table is beaten by a higher trio + two",
    ),
    _pos(
        "short-trio-not-allowed-unless-whole-hand",
        "classic",
        "8S 8H 8D 9S 3H",
        "7S 7H 7D 4S",
        plays=["38889"],
        why="888 or 8889 are not the whole hand; 88839 is",
    ),
    _pos(
        "ambiguous-airplane-leading",
        "classic",
        "3S 3H 3D 4S 4H 4D 5S 5H 5D 6S",
        plays=None,
        why="3334445556 is listed once although it reads as two airplanes",
    ),
    _pos(
        "twelve-card-short-airplane-on-table",
        "kawu",
        "7S 7H 7D 8S 8H 8D 9S 9H 9D TS TH TD",
        "3S 3H 3D 4S 4H 4D 5S 5H 5D 6S 6H 6D",
        plays=["777888999TTT"],
        why="four bare trios as last cards: the whole hand, four trios top T over top 6",
    ),
    # --- leading and passing ---
    _pos("leader-may-not-pass", "classic", "3S", plays=["3"], why="leading: pass is false"),
    _pos("pass-when-nothing-beats", "kawu", "3S 4S", "5D", plays=[], why="nothing beats a 5"),
    _pos(
        "must-beat-with-a-pair",
        "classic",
        "3S 4S 9H 9D",
        "8S 8H",
        plays=["99"],
        why="the 99 beats, so pass is false",
    ),
    # --- D = no, must beat ---
    _pos(
        "locked-bomb-must-beat-single-sixteen",
        "sixteen",
        "3S 3H 3D 3C 8S",
        "9D",
        plays=["3333"],
        why="the 8 does not beat; the bomb does, so passing is refused",
    ),
    _pos(
        "locked-bomb-pair-sixteen",
        "sixteen",
        "TS TH TD TC JS",
        "9S 9H",
        plays=["TTTT"],
        why="D=no: TT would split the bomb",
    ),
    _pos(
        "split-bomb-pair-classic",
        "classic",
        "TS TH TD TC JS",
        "9S 9H",
        plays=["TT", "TTTT"],
        why="D=yes: a pair from the four is fine",
    ),
    _pos(
        "locked-bomb-no-trio-sixteen",
        "sixteen",
        "7S 7H 7D 7C 5D 6D",
        "3S 3H 3D 4S 5S",
        plays=["7777"],
        why="D=no: no trio of 7s",
    ),
    _pos(
        "split-bomb-trio-two-classic",
        "classic",
        "7S 7H 7D 7C 5D 6D",
        "3S 3H 3D 4S 5S",
        plays=["56777", "57777", "67777", "7777"],
        why="trio of 7s with any two, or the bomb",
    ),
    _pos(
        "locked-bomb-no-straight-sixteen",
        "sixteen",
        "4D 5D 6D 7D 8S 8H 8D 8C",
        "3S 4S 5S 6S 7S",
        plays=["8888"],
        why="45678 would take an 8 out of the bomb",
    ),
    _pos(
        "split-bomb-straight-classic",
        "classic",
        "4D 5D 6D 7D 8S 8H 8D 8C",
        "3S 4S 5S 6S 7S",
        plays=["45678", "8888"],
        why="D=yes: the straight may use an 8",
    ),
    _pos(
        "two-bombs-sixteen-leading",
        "sixteen",
        "3S 3H 3D 3C 9S 9H 9D 9C TS JS QS KS AH",
        plays=None,
        why="D=no: both bombs whole; no straight 9..A through the 9s",
    ),
    _pos(
        "two-bombs-classic-leading",
        "classic",
        "3S 3H 3D 3C 9S 9H 9D 9C TS JS QS KS AH",
        plays=None,
        why="D=yes: bombs split into anything",
    ),
    _pos(
        "locked-bomb-no-airplane-wing-sixteen",
        "sixteen",
        "9S 9H 9D TS TH TD 3D 3C 3H 3S",
        "5S 5H 5D 6S 6H 6D 4S 4H 7S 7H",
        plays=["3333"],
        why="the only wings would be 3s from the held bomb",
    ),
]

INVALID: list[dict[str, Any]] = [
    {"id": "unknown-card", "rules": "classic", "hand": ["3S", "1X"], "table": []},
    {"id": "unknown-rank-on-table", "rules": "classic", "hand": ["3S"], "table": ["ZZ"]},
    {"id": "duplicate-in-hand", "rules": "classic", "hand": ["3S", "3S"], "table": []},
    {"id": "card-in-hand-and-table", "rules": "classic", "hand": ["3S", "4S"], "table": ["4S"]},
    {"id": "ace-of-spades-in-classic", "rules": "classic", "hand": ["AS"], "table": []},
    {"id": "ace-of-spades-in-sixteen", "rules": "sixteen", "hand": ["3S"], "table": ["AS"]},
    {"id": "ace-of-clubs-in-kawu", "rules": "kawu", "hand": ["AC", "3S"], "table": []},
    {"id": "two-of-hearts-classic", "rules": "classic", "hand": ["2H"], "table": []},
    {"id": "two-of-diamonds-kawu", "rules": "kawu", "hand": ["3S"], "table": ["2D"]},
    {"id": "two-of-clubs-sixteen", "rules": "sixteen", "hand": ["2C", "4H"], "table": []},
    {"id": "table-no-combination", "rules": "classic", "hand": ["3S"], "table": ["4S", "5S"]},
    {
        "id": "table-four-with-two",
        "rules": "classic",
        "hand": ["3S"],
        "table": ["5S", "5H", "5D", "5C", "6S", "7S"],
    },
    {
        "id": "table-run-through-two",
        "rules": "kawu",
        "hand": ["3S"],
        "table": ["JS", "QS", "KS", "AS", "2S"],
    },
    {
        "id": "table-pair-run-with-gap",
        "rules": "classic",
        "hand": ["3S"],
        "table": ["5S", "5H", "7S", "7H"],
    },
]
for _bad in INVALID:
    _bad.update(next_has_one=False, first_play=False, expect={"error": True})


def _random_positions() -> list[dict[str, Any]]:
    out = []
    for preset in ("classic", "sixteen", "kawu"):
        rng = random.Random(f"perft/{preset}")
        for i in range(32):
            position = random_position(rng, preset, f"random-{preset}-{i}")
            position["why"] = "random position; expected plays from the oracle"
            out.append(position)
    return out


def _fill(position: dict[str, Any]) -> dict[str, Any]:
    """Check a hand-worked answer against the oracle, or take the oracle's answer."""
    answer = oracle.solve(position)
    expect = {"plays": answer["plays"], "pass": answer["pass"]}
    if position.get("expect") is not None and position["expect"] != expect:
        raise AssertionError(f"{position['id']}: hand {position['expect']} oracle {expect}")
    return {**position, "expect": expect}


def build() -> list[dict[str, Any]]:
    return [_fill(p) for p in [*HAND_CHECKED, *_random_positions()]] + INVALID


def load() -> list[dict[str, Any]]:
    with PERFT_PATH.open() as f:
        return [json.loads(line) for line in f if line.strip()]


if __name__ == "__main__":
    with PERFT_PATH.open("w") as f:
        for position in build():
            f.write(json.dumps(position) + "\n")
