"""A table's history: its meta and its action log.

The log is the game.  Version N means N entries; replaying them from the
meta's seed rebuilds exactly the state every seat saw.  The meta holds what is
not a move: the rules and seed (fixed at creation) and the seats' state (who is
human, bot or on auto, invites, the running turn clock), which the room writes
together with the entry that changed it (or alone, checked against the version),
so a restarted server or another process resumes exactly.
"""

from __future__ import annotations

import hashlib
from typing import Literal, Protocol, TypeAlias

import msgspec

from server import engine
from server.engine import NextDeal, Pass, Play

from .clock import DEFAULT_GRACE_SECONDS, TurnClock

__all__ = [
    "MAX_BOT_SPEED_MS",
    "BotSpeed",
    "DealWatcher",
    "LogEntry",
    "NewMatch",
    "Replay",
    "RetiredToken",
    "SeatMeta",
    "TableMeta",
    "TableState",
    "Takeover",
    "bot_seed",
    "match_seed",
    "rebuild",
]


class SeatMeta(msgspec.Struct, frozen=True):
    """One seat as stored: who sits there (human or bot level) and its token's hash."""

    seat: int
    kind: Literal["human", "bot"]
    name: str
    level: str | None = None
    # SHA-256 of the seat's token; the token itself is never stored.  On a bot seat it
    # is an open invite: its first join makes the seat human (between deals only).
    token_hash: str | None = None
    # Stand-in turns in a row; at clock.AUTO_AFTER the seat is on auto until hand-back.
    standins: int = 0
    # Its human has sat down at least once (clocks wait until everyone has).
    joined: bool = False
    # The match a bot played part of before a person took this seat over (rooms/
    # seat_takeover.py): that match rates the seat as a bot's; -1: none.
    bot_match: int = -1


class RetiredToken(msgspec.Struct, frozen=True):
    """A token that no longer opens anything, kept so its refusal can say why."""

    hash: str
    why: Literal["revoked", "expired"]


class Takeover(msgspec.Struct, frozen=True):
    """A bot seat given to a person, theirs from the next deal boundary on."""

    seat: int
    token_hash: str
    name: str


class TableMeta(msgspec.Struct, frozen=True):
    """What a table was created with (and its seat state): with the log, all of it."""

    id: str
    rules: engine.Rules
    seed: int
    deals: int
    seats: list[SeatMeta]
    bot_speed_ms: int
    created_at: float
    turn_seconds: int = 0
    grace_seconds: int = DEFAULT_GRACE_SECONDS
    standin_level: str = "normal"
    # The running turn clock (None: no clock runs now).
    clock: TurnClock | None = None
    # SHA-256 of the watch link's token (spectators), if one was handed out.
    watch_hash: str | None = None
    retired: list[RetiredToken] = msgspec.field(default_factory=list)
    # 64 hex digits the server chose and never shows: every match's deal seed and
    # commitment salt derive from it (server.fairness).  Empty for a table created
    # with a chosen seed (and for tables older than provably fair shuffles).
    secret: str = ""
    # The bot speed is a table setting stored here; BotSpeed log entries before this
    # version (written by older servers) are history, not the current setting.
    bot_speed_from: int = 0
    # The table's first deal waits for its creator's client seed (``sends_seeds`` at
    # creation, rooms/entropy.py): nothing is shown or played until it is dealt.
    first_deal_waits: bool = False
    # The seats' client seeds mixed into the table's first deal, in seat order (the
    # first deal has no log entry to carry them; later deals' entries carry theirs).
    first_entropy: tuple[str, ...] = ()
    # Bot seats a quick-match player was given, taken over at the next deal boundary
    # (rooms/seat_takeover.py).
    takeovers: tuple[Takeover, ...] = ()

    @property
    def humans(self) -> int:
        """How many seats are human."""
        return sum(1 for s in self.seats if s.kind == "human")


class NewMatch(msgspec.Struct, frozen=True, omit_defaults=True, tag="new_match"):
    """Start a new match with the same settings; its deals come from ``match_seed``.

    ``entropy``: the seats' client seeds mixed into its first deal (server.fairness)."""

    entropy: tuple[str, ...] = ()


# The longest pause a table may set before each bot move (at creation and in game).
MAX_BOT_SPEED_MS = 5000


class BotSpeed(msgspec.Struct, frozen=True, tag="bot_speed"):
    """Seat ``seat`` set the pause before each bot move to ``ms``.

    A request only: the room stores the new speed in the meta (older servers
    appended it to the log, which ``rebuild`` still reads)."""

    ms: int
    seat: int


LogEntry: TypeAlias = Play | Pass | NextDeal | NewMatch | BotSpeed


class TableState(msgspec.Struct):
    """A table rebuilt from its log: the match, how many matches came before, the bot
    speed, and the version (log length)."""

    match: engine.MatchState
    match_no: int
    bot_speed_ms: int
    version: int
    # The version at which the current turn began (entries after it only changed the
    # bot speed): a stored turn clock belongs to this turn if it started there.
    turn_version: int = 0


def _derive(text: str) -> int:
    """A 63-bit seed from ``text`` (its parts joined by "/": the format is the seeds')."""
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def match_seed(table_seed: int, match_no: int, secret: str = "") -> int:
    """The deal seed of a table's ``match_no``-th match.

    With the table's ``secret`` every match's seed derives from it, so revealing
    one match's seed (server.fairness) tells nothing about the next.  A table
    with a chosen seed (no secret) deals its first match from that seed.
    """
    if secret:
        return _derive(f"match/{secret}/{match_no}")
    return table_seed if match_no == 0 else _derive(f"match/{table_seed}/{match_no}")


def bot_seed(meta: TableMeta, seat: int, version: int) -> int:
    """The seed of the decision a bot (or the stand-in) makes for ``seat`` at ``version``:
    the same after a restart.

    From the table's secret where it has one (the public seed only for a table
    created with a chosen one), as the deals are: a player who knows the table's
    number cannot foresee the bots' choices.  It takes the whole meta so that no
    caller can leave the secret out.
    """
    # Every bot decision derives one: an f-string, not a join over a generator.
    return _derive(f"bot/{meta.secret or meta.seed}/{seat}/{version}")


class DealWatcher(Protocol):
    """Told each deal as a ``Replay`` reads it: dealt (its hands whole), then ended."""

    def dealt(self, match_no: int, deal: engine.DealState) -> None:
        """A deal was dealt; ``deal.hands`` change as it is played, so copy what is kept."""

    def ended(self, match_no: int, deal: engine.DealState) -> None:
        """The deal's last move was applied: ``deal.result`` and ``deal.moves`` are final."""


class Replay:
    """A table read forward from its log, one entry at a time: the one reading of entries.

    A ``BotSpeed`` entry changes no game (it sets the speed only at or after
    the meta's ``bot_speed_from``: later changes live in the meta), a
    ``NewMatch`` starts the next match from ``match_seed``, and every other
    entry is an engine action.  ``rebuild`` feeds a whole log and reads the
    state once; an audit may read ``match`` after each entry.  Actions are
    applied when ``match`` is read, so a finished match is never replayed,
    unless a ``watcher`` is given: then every action is applied as it is fed
    and the watcher hears each deal dealt and ended (history, for replays).
    """

    def __init__(self, meta: TableMeta, watcher: DealWatcher | None = None) -> None:
        self._meta = meta
        self._watcher = watcher
        self.version = 0
        self.match_no = 0
        self.bot_speed_ms = meta.bot_speed_ms
        # The version at which the current turn began (see ``TableState``).
        self.turn_version = 0
        self._match: engine.MatchState | None = None
        self._pending: list[engine.Action] = []
        self._entropy: tuple[str, ...] = meta.first_entropy

    def feed(self, entry: LogEntry) -> None:
        """Read the next entry of the log."""
        self.version += 1
        if isinstance(entry, BotSpeed):
            if self.version - 1 >= self._meta.bot_speed_from:
                self.bot_speed_ms = entry.ms
            return
        self.turn_version = self.version
        if isinstance(entry, NewMatch):
            self.match_no += 1
            self._match = None
            self._pending = []
            self._entropy = entry.entropy
        else:
            self._pending.append(entry)
        if self._watcher is not None:
            self.match  # noqa: B018 - reading it applies the entry now

    @property
    def match(self) -> engine.MatchState:
        """The match as of the entries fed so far (``EngineError`` on a corrupt log,
        after which this replay is not to be read again)."""
        watcher = self._watcher
        if self._match is None:
            meta = self._meta
            seed = match_seed(meta.seed, self.match_no, meta.secret)
            self._match = engine.new_match(meta.rules, seed, meta.deals, self._entropy)
            if watcher is not None:
                watcher.dealt(self.match_no, self._match.deal)
        pending, self._pending = self._pending, []
        for action in pending:
            engine.apply(self._match, action)
            if watcher is None:
                continue
            if isinstance(action, NextDeal):
                watcher.dealt(self.match_no, self._match.deal)
            elif self._match.deal.result is not None:
                watcher.ended(self.match_no, self._match.deal)
        return self._match

    def table(self) -> TableState:
        """The whole table as of the entries fed so far."""
        return TableState(
            match=self.match,
            match_no=self.match_no,
            bot_speed_ms=self.bot_speed_ms,
            version=self.version,
            turn_version=self.turn_version,
        )


def rebuild(meta: TableMeta, entries: list[LogEntry]) -> TableState:
    """Replay a table from its meta and log (raises ``EngineError`` on a corrupt log)."""
    replay = Replay(meta)
    for entry in entries:
        replay.feed(entry)
    return replay.table()
