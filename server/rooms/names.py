"""Player names: what a person may call themselves at a table.

A name is shown to every seat and spoken by screen readers, so it is plain,
visible text that does not pass for someone else:

- at most ``MAX_RAW_NAME_CHARS`` characters as sent, then NFC-normalised and
  trimmed, 1 to ``MAX_NAME_CHARS`` characters, runs of spaces made one;
- no markup characters, no control characters or line breaks;
- nothing invisible: no default-ignorable code point (format characters, the
  Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the Khmer inherent vowels
  U+17B4/U+17B5, variation selectors but the emoji ones right after a symbol,
  tags) and no braille blank (U+2800);
- at least one character that is not a combining mark, the first one such a
  character, and at most ``MAX_MARKS_IN_A_ROW`` combining marks on any one;
- not one of the bots' names or the placeholder names ``Player 1`` to
  ``Player 3``, nor anything that looks like one: names are compared by
  confusable skeleton (Unicode TR39: "Anna" with a Cyrillic first or last letter,
  ``PIayer 2`` with a capital I, "Ben" in fullwidth letters are all taken), case
  and spaces aside.

Each refusal is a ``NameRefused`` with a ``NameReason`` code and a message for
people.  The same check serves ``POST /api/tables`` and the ``rename`` message.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum
from functools import lru_cache
from typing import Any

__all__ = [
    "BOT_NAMES",
    "MARKUP",
    "MAX_MARKS_IN_A_ROW",
    "MAX_NAME_CHARS",
    "MAX_RAW_NAME_CHARS",
    "NameReason",
    "NameRefused",
    "clean_name",
    "human_name",
    "skeleton",
]

MAX_NAME_CHARS = 24
# The longest raw text a client may send as a name (the create request and the
# ``rename`` message), so that nothing longer is ever normalised.
MAX_RAW_NAME_CHARS = 64
MARKUP = frozenset("<>&\"'`")
# Vietnamese needs two marks on a letter, Thai a vowel and a tone mark; a few
# scripts stack three or four.  "Zalgo" text stacks dozens.
MAX_MARKS_IN_A_ROW = 4

# The bots' names by seat, and the placeholder of a human seat nobody named.
BOT_NAMES = {1: "Anna", 2: "Ben", 0: "Cleo"}


def human_name(seat: int) -> str:
    """The name of a human seat other than the host's (clients show it in their language)."""
    return f"Player {seat + 1}"


class NameReason(StrEnum):
    """Why a name was refused."""

    EMPTY = "empty"
    TOO_LONG = "too_long"
    MARKUP = "markup"
    CONTROL = "control"
    INVISIBLE = "invisible"
    MARKS_ONLY = "marks_only"
    TOO_MANY_MARKS = "too_many_marks"
    RESERVED = "reserved"


class NameRefused(ValueError):
    """A name that may not be used: ``reason`` says which rule, the message says it to people."""

    def __init__(self, reason: NameReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters
# that render as nothing at all.  Python's unicodedata does not expose the property.
_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Not default-ignorable, but drawn as a blank cell.
_BLANKS = frozenset("\u2800")
# Text and emoji presentation selectors: allowed once, right after a symbol (❤️).
_EMOJI_SELECTORS = frozenset("\ufe0e\ufe0f")
# Runs of spaces (category Zs) become one plain space; line breaks are refused.
_SPACES = re.compile("[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")


def _ignorable(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _IGNORABLE)


def clean_name(raw: str) -> str:
    """``raw`` trimmed and NFC-normalised; raises ``NameRefused`` saying what is wrong."""
    if len(raw) > MAX_RAW_NAME_CHARS:
        raise NameRefused(
            NameReason.TOO_LONG, f"a name has at most {MAX_NAME_CHARS} characters, not {len(raw)}"
        )
    name = _SPACES.sub(" ", unicodedata.normalize("NFC", raw).strip())
    if not name:
        raise NameRefused(NameReason.EMPTY, "a name needs at least one visible character")
    if len(name) > MAX_NAME_CHARS:
        raise NameRefused(
            NameReason.TOO_LONG, f"a name has at most {MAX_NAME_CHARS} characters, not {len(name)}"
        )
    if bad := sorted({ch for ch in name if ch in MARKUP}):
        raise NameRefused(
            NameReason.MARKUP, f"a name may not hold markup characters ({' '.join(bad)})"
        )
    _check_characters(name)
    if _skeleton_key(name) in _reserved():
        raise NameRefused(
            NameReason.RESERVED,
            f"{name!r} is, or looks like, a name the table gives its bots or empty seats",
        )
    return name


def _check_characters(name: str) -> None:
    """Refuse control and invisible characters and marks without a letter to sit on."""
    marks = 0
    previous = ""
    for ch in name:
        category = unicodedata.category(ch)
        if ch in _EMOJI_SELECTORS and unicodedata.category(previous or " ") == "So":
            previous = ch
            continue
        if _ignorable(ch) or ch in _BLANKS:
            raise NameRefused(
                NameReason.INVISIBLE,
                f"a name may not hold invisible characters (U+{ord(ch):04X})",
            )
        # Other category C (control, unassigned, private use, surrogates), and
        # the line and paragraph separators.
        if category.startswith("C") or category in ("Zl", "Zp"):
            raise NameRefused(
                NameReason.CONTROL, "a name may not hold control characters or line breaks"
            )
        if category.startswith("M"):
            if not previous or previous == " ":
                raise NameRefused(
                    NameReason.MARKS_ONLY,
                    "a combining mark needs a letter before it, and a name a letter",
                )
            marks += 1
            if marks > MAX_MARKS_IN_A_ROW:
                raise NameRefused(
                    NameReason.TOO_MANY_MARKS,
                    f"at most {MAX_MARKS_IN_A_ROW} combining marks may sit on one character",
                )
        else:
            marks = 0
        previous = ch


@lru_cache(maxsize=4096)
def _prototype(ch: str) -> str:
    """The representative of ``ch``'s class of confusable characters (itself if none).

    The library lists, for each prototype of Unicode's confusables.txt, every
    character mapped to it, and for each of those, its prototype alone.  A class
    is such a star; where two characters only list each other the lower one
    stands for both, so every member of a class gets the same representative.
    """
    glyphs = _homoglyphs(ch)
    if len(glyphs) != 1:
        return ch  # none, or a prototype: many characters look like it
    other = glyphs[0]
    if len(other) == 1 and len(_homoglyphs(other)) == 1:
        return min(ch, other)
    return other


@lru_cache(maxsize=1)
def _confusables() -> Any:
    """Unicode's confusables data (TR39), kept up to date by the maintainers of
    ``confusable_homoglyphs`` (a package without type hints).  Loaded when a name is
    first checked, not at import: parsed, it is 9 MiB of dicts and 40 ms of a start,
    which a process that never checks a name (most test servers, a replica that only
    forwards) need not pay."""
    from confusable_homoglyphs import confusables  # type: ignore[import-untyped]

    return confusables


def _homoglyphs(ch: str) -> list[str]:
    """What ``ch`` may be confused with, by the library's public ``is_confusable``."""
    found = _confusables().is_confusable(ch, greedy=True)
    return [str(g["c"]) for g in found[0]["homoglyphs"]] if found else []


def skeleton(text: str) -> str:
    """TR39's skeleton of ``text`` (NFD, each character by its confusable prototype, NFD
    again), up to the choice of each class's representative: two strings that look
    alike get the same skeleton."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(_prototype(ch) for ch in decomposed))


def _skeleton_key(name: str) -> str:
    # Case and spacing do not make a different name: "anna" and "Player2" are taken
    # too.  The skeleton comes before the case folding ("PIayer" with a capital I
    # is "Player", but "piayer" is not), and again after it.
    compact = "".join(unicodedata.normalize("NFKC", name).split())
    return skeleton(skeleton(compact).casefold())


@lru_cache(maxsize=1)
def _reserved() -> frozenset[str]:
    taken = [*BOT_NAMES.values(), *(human_name(seat) for seat in range(3))]
    return frozenset(_skeleton_key(name) for name in taken)
