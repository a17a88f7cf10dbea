"""What one accepted action becomes: the entries of one write, their events, the meta after.

The room actor checks an action with the engine (``prepare``), writes what this
returns to Redis in one versioned write, and only then tells anyone.  Bots that
answer at once move before that write and are appended with it
(``answer_at_once``): one write, one frame per socket, for an action and its
instant answers.  Nobody outside this process hears of any of them until Redis
holds them all, and the write lands whole or not at all, so no reader ever sees
a bot's move without the move it answered.

Kept apart from the actor because it is the one place that turns an action into
log entries and seat state; it reads no clock and writes nothing (the room
passes ``now`` and does the write, then has the commit counted).
"""

from __future__ import annotations

from dataclasses import dataclass

from server import engine, metrics
from server.engine import Event, NextDeal, Pass, Play
from server.usage import USAGE

from .bot_turns import BotTurns
from .log import LogEntry, NewMatch, TableMeta, match_seed
from .turns import meta_after

__all__ = ["MAX_ANSWERS_AT_ONCE", "Commit", "answer_at_once", "prepare"]

# The most actions one write carries: an action and the answers of the bots that
# answer at once.  Bounded, so that a table of such bots never plays a whole deal
# in one write while the people around it hear nothing.
MAX_ANSWERS_AT_ONCE = 3

# Each kind of entry as the metrics name it.
_KINDS: dict[type, str] = {
    Play: "play",
    Pass: "pass",
    NextDeal: "next_deal",
    NewMatch: "new_match",
}


@dataclass(slots=True)
class Commit:
    """One write's worth: ``entries`` in order, the ``events`` they made, the ``meta``
    after them, the version at which the turn after them began, and the match a
    ``NewMatch`` starts (None for any other action)."""

    entries: list[LogEntry]
    events: list[Event]
    meta: TableMeta
    turn_version: int
    new_match: engine.MatchState | None = None

    def count(self, *, by_bot: bool) -> None:
        """Count the entries, once written, as accepted actions; ``by_bot``: the first
        was a bot's too (the rest always are: the instant bots' answers)."""
        for i, accepted in enumerate(self.entries):
            USAGE.action_accepted()
            metrics.action_accepted(_KINDS[type(accepted)], by_bot=i > 0 or by_bot)


def prepare(
    entry: Play | Pass | NextDeal | NewMatch,
    meta: TableMeta,
    state: engine.MatchState,
    *,
    match_no: int,
    version: int,
    now: float,
    bots: BotTurns,
    standin: bool = False,
) -> Commit:
    """Apply ``entry`` (made at ``version``) and the instant bots' answers to it.

    An engine action changes ``state`` in place (``EngineError`` when the engine
    refuses it, ``state`` unchanged); a ``NewMatch`` leaves it alone and returns the
    new match.  The seats' state moves with the action (streaks, invites, the next
    turn's clock) and is written with it: a restart resumes both exactly.
    """
    if isinstance(entry, NewMatch):
        seed = match_seed(meta.seed, match_no + 1, meta.secret)
        new_match = engine.new_match(meta.rules, seed, meta.deals, entry.entropy)
        after = meta_after(meta, entry, new_match, version + 1, now, standin=standin)
        events: list[Event] = [engine.DealStarted(deal_no=1, leader=new_match.deal.leader)]
        return Commit([entry], events, after, version + 1, new_match)
    events = engine.apply(state, entry)
    after = meta_after(meta, entry, state, version + 1, now, standin=standin)
    entries: list[LogEntry] = [entry]
    after = answer_at_once(entries, events, after, state, version, now, bots)
    return Commit(entries, events, after, version + len(entries))


def answer_at_once(
    entries: list[LogEntry],
    events: list[Event],
    meta: TableMeta,
    state: engine.MatchState,
    version: int,
    now: float,
    bots: BotTurns,
) -> TableMeta:
    """Let bots that answer without a pause move now, before the write: their moves
    join ``entries`` (made from ``version`` on) and their events ``events``; returns
    the meta after the last of them."""
    while len(entries) < MAX_ANSWERS_AT_ONCE and (bot := bots.instant(state)) is not None:
        at = version + len(entries)
        action = bots.decide_now(bot, meta, state, at)
        try:
            events += engine.apply(state, action)
        except engine.EngineError:
            # decide_now promises a legal move.  Should it break that promise, the
            # turn is left to ``BotTurns.schedule``: the same seed decides the same
            # move, and the room replaces the refused move with a legal one.
            break
        entries.append(action)
        meta = meta_after(meta, action, state, at + 1, now)
    return meta
