"""Whose turn runs on which clock, and what a committed move does to the seats' state.

Pure functions of the table meta, the match state and the time: the room actor
calls them after each accepted action (and on load, and when a seat changes)
and stores the meta they return with the action, in one versioned write.
"""

from __future__ import annotations

import msgspec

from server import engine
from server.engine import NextDeal, Pass, Play

from .clock import TurnClock, start_clock
from .log import LogEntry, NewMatch, TableMeta
from .seating import after_standin, expire_open_invites, hand_back, on_auto

__all__ = ["clock_for", "human_turn", "meta_after", "seats_settled"]


def human_turn(meta: TableMeta, state: engine.MatchState) -> int | None:
    """The human seat whose turn it is, or None (a bot's turn, or the deal is over)."""
    deal = state.deal
    if deal.result is not None or meta.seats[deal.turn].kind != "human":
        return None
    return deal.turn


def seats_settled(meta: TableMeta) -> bool:
    """Clocks and the grace time run only once every human seat has been taken once:
    a friend who has not opened their link yet is waited for, not played for."""
    return all(s.joined for s in meta.seats if s.kind == "human")


def clock_for(
    meta: TableMeta, state: engine.MatchState, turn_version: int, now: float
) -> TurnClock | None:
    """The clock of the turn that began at ``turn_version``: the stored one if it belongs
    to this very turn (a restart or takeover continues it), else a new one from ``now``;
    None when no clock runs (a bot's turn, a seat on auto, no clock, seats not settled)."""
    seat = human_turn(meta, state)
    if seat is None or meta.turn_seconds <= 0 or not seats_settled(meta):
        return None
    if on_auto(meta.seats[seat]):
        return None
    current = meta.clock
    if current is not None and current.version == turn_version and current.seat == seat:
        return current
    return start_clock(seat, turn_version, meta.turn_seconds, now)


def meta_after(
    meta: TableMeta,
    entry: LogEntry,
    state: engine.MatchState,
    turn_version: int,
    now: float,
    *,
    standin: bool = False,
) -> TableMeta:
    """The meta once ``entry`` is accepted, ``state`` is the game after it and the current
    turn began at ``turn_version``.

    A move by a human seat resets its stand-in streak; a move the stand-in made for
    it extends the streak.  A new deal or match retires open-seat invites nobody took.
    The clock is that of the current turn (a bot speed change keeps it running).
    """
    if isinstance(entry, Play | Pass) and meta.seats[entry.seat].kind == "human":
        meta = after_standin(meta, entry.seat) if standin else hand_back(meta, entry.seat)
    elif isinstance(entry, NextDeal | NewMatch):
        meta = expire_open_invites(meta)
    clock = clock_for(meta, state, turn_version, now)
    if clock != meta.clock:
        meta = msgspec.structs.replace(meta, clock=clock)
    return meta
