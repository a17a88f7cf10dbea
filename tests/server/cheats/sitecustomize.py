"""A cheating server build, for tests/server/test_fairness.py only.

A server process started with this directory on ``PYTHONPATH`` imports it at
start-up and deals differently from what it commits to, as a dishonest operator's
modified server would; everything else (commitments, frames, log) is the real code:

- ``PDK_CHEAT=seed``: every deal after the first comes from another seed than the
  one committed (and later revealed);
- ``PDK_CHEAT=ignore``: the players' client seeds are taken, logged and published,
  but the deck is shuffled without them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from server.engine import cards

__all__: list[str] = []

_honest = cards.deal_key


def _dishonest(seed: int, deal_no: int, entropy: Sequence[str] = ()) -> str:
    mode = os.environ.get("PDK_CHEAT")
    if mode == "seed" and deal_no >= 2:
        return _honest(seed + 1, deal_no, entropy)
    if mode == "ignore":
        return _honest(seed, deal_no, ())
    return _honest(seed, deal_no, entropy)


cards.deal_key = _dishonest
