"""A table's history: its meta (fixed at creation) and its action log.

The log is the table.  Version N means N entries; replaying them from the
meta's seed rebuilds exactly the state every seat saw, so Redis needs nothing
else and a restarted server resumes where it stopped.
"""

from __future__ import annotations

import hashlib
from typing import Literal, TypeAlias

import msgspec

from server import engine
from server.engine import NextDeal, Pass, Play

__all__ = [
    "BotSpeed",
    "LogEntry",
    "NewMatch",
    "SeatMeta",
    "TableMeta",
    "TableState",
    "bot_seed",
    "match_seed",
    "rebuild",
]


class SeatMeta(msgspec.Struct, frozen=True):
    seat: int
    kind: Literal["human", "bot"]
    name: str
    level: str | None = None
    # SHA-256 of the seat's token (humans only); the token itself is never stored.
    token_hash: str | None = None


class TableMeta(msgspec.Struct, frozen=True):
    id: str
    rules: engine.Rules
    seed: int
    deals: int
    seats: list[SeatMeta]
    bot_speed_ms: int
    created_at: float

    @property
    def humans(self) -> int:
        return sum(1 for s in self.seats if s.kind == "human")


class NewMatch(msgspec.Struct, frozen=True, tag="new_match"):
    """Start a new match with the same settings; its deals come from ``match_seed``."""


class BotSpeed(msgspec.Struct, frozen=True, tag="bot_speed"):
    ms: int
    seat: int


LogEntry: TypeAlias = Play | Pass | NextDeal | NewMatch | BotSpeed


class TableState(msgspec.Struct):
    match: engine.MatchState
    match_no: int
    bot_speed_ms: int
    version: int


def _derive(*parts: object) -> int:
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def match_seed(table_seed: int, match_no: int) -> int:
    """The deal seed of a table's ``match_no``-th match (the first uses the table seed)."""
    return table_seed if match_no == 0 else _derive("match", table_seed, match_no)


def bot_seed(table_seed: int, seat: int, version: int) -> int:
    """A bot's seed for the decision it makes at ``version``: the same after a restart."""
    return _derive("bot", table_seed, seat, version)


def rebuild(meta: TableMeta, entries: list[LogEntry]) -> TableState:
    """Replay a table from its meta and log (raises ``EngineError`` on a corrupt log)."""
    match_no = 0
    speed = meta.bot_speed_ms
    actions: list[engine.Action] = []
    for entry in entries:
        if isinstance(entry, NewMatch):
            match_no += 1
            actions = []
        elif isinstance(entry, BotSpeed):
            speed = entry.ms
        else:
            actions.append(entry)
    state = engine.replay(meta.rules, match_seed(meta.seed, match_no), meta.deals, actions)
    return TableState(match=state, match_no=match_no, bot_speed_ms=speed, version=len(entries))
