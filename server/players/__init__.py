"""Players: an identity a browser gets without signing up (``identity``)."""

from .identity import (
    COLOURS,
    Player,
    PlayerStore,
    ProfileRefused,
    parse_credential,
)

__all__ = ["COLOURS", "Player", "PlayerStore", "ProfileRefused", "parse_credential"]
