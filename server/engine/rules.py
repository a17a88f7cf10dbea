"""Table options: the house rules of RULES.md as one frozen Struct."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["PRESETS", "Rules"]


class Rules(msgspec.Struct, gc=False, frozen=True, forbid_unknown_fields=True):
    """One table's rules.  Defaults are the "classic" preset.

    - ``removed_ace`` (A): the ace taken out of the deck.
    - ``first_play_three_spades`` (B): the match's first play must hold the 3 of spades.
    - ``later_leader`` (C): who leads deals after the first.
    - ``split_bombs`` (D): a held four of a kind may be broken up.
    - ``bomb_payment`` (E): "immediate" pays when played, "winning" only a bomb that
      ends its trick unbeaten or takes its player out.
    """

    preset: str = "classic"
    removed_ace: Literal["AS", "AC"] = "AS"
    first_play_three_spades: bool = True
    later_leader: Literal["winner", "three_of_spades"] = "winner"
    split_bombs: bool = True
    bomb_payment: Literal["immediate", "winning"] = "immediate"

    @classmethod
    def preset_named(cls, name: str) -> Rules:
        """The preset called ``name``; a ValueError for an unknown name."""
        try:
            return PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown rules preset {name!r}") from None


PRESETS: dict[str, Rules] = {
    "classic": Rules(),
    "sixteen": Rules(
        preset="sixteen",
        first_play_three_spades=False,
        later_leader="three_of_spades",
        split_bombs=False,
        bomb_payment="winning",
    ),
    "kawu": Rules(preset="kawu", removed_ace="AC"),
}
