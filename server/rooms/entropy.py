"""Players' entropy: every human seat's client seed is mixed into the deal it precedes.

The server commits to its seed for a deal before the deal (server.fairness);
between deals (and between matches) each ``state`` frame names the upcoming
deal and its commitment (``Upcoming``).  Each human client answers with a random
client seed bound to that commitment (the ``entropy`` message); the room keeps
one per seat.  The action that starts the deal (``NextDeal``, or ``NewMatch``
for a match's first deal) carries the seeds in seat order ("" for a bot or a
seat that gave none), so the log alone replays the game, and the engine shuffles
from the server's seed and all of them (``engine.cards.deal_key``).  Nobody, the
server included, chooses the cards: the server's seed is fixed before it sees a
client seed, and no client sees another's before the deal.

A deal asked for while a seated, connected human whose client sends seeds (it
has given one at this table since the room was loaded) has not given its seed
waits for it, at most ``entropy_wait_seconds`` (``--entropy-wait-seconds``); then
it is dealt without, and the record shows that seat gave none.  A client that
never sends seeds (a script, a third-party client) is never waited for, so it
never pays the wait.  The only request held meanwhile is the one asking for the
deal: nothing a client sends makes the room hold more.

A table's first deal has no deal before it to publish its commitment in, so its
creator's client declares up front that it sends seeds (``sends_seeds`` in the
``POST /api/tables`` body).  The answer carries the first deal's commitment; the
client sends its ``entropy`` message right after its ``join``, and the room deals
as soon as it has it.  Until then the table is not dealt: nobody is shown a hand
or may act, bots wait, and from the first socket's join the room waits at most
``entropy_wait_seconds`` for the seed before dealing without it.  A creator who
does not declare it (a script, a test) gets a table dealt at once, as ever.  The
seed cannot ride in the create request itself: the server would see it before
committing, and could then pick its own seed to suit.

Two rules keep a table's creator from knowing a friend's cards when the creator
chose the table's seed (no server secret: they know the server's seed):

- the seeds mixed into each deal are published only with the match's seed, once
  the match is over (knowing the seed and every client seed is knowing every hand);
- on such a table with two or more humans, a human seat that gave no seed gets a
  fresh secret from the server instead, shown as such in the record
  (``SERVER_FILLED`` + 32 hex digits), so no deal is ever dealt from what the
  creator alone knows (the first deal of a table that waits for seeds too; one
  dealt at creation, with no seed to wait for, is the chosen seed's alone).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass

import msgspec

from server import fairness
from server.engine import MatchState, NextDeal
from server.fairness import EntropyError, EntropyReason, Upcoming

from .log import NewMatch, TableMeta, match_seed
from .seats import Listener

__all__ = [
    "ENTROPY_WAIT_SECONDS",
    "FIRST_DEAL_SENDERS",
    "SERVER_FILLED",
    "EntropyDue",
    "EntropyRound",
    "GiveEntropy",
    "PublishedFairness",
    "first_commitment",
    "first_dealt",
    "published",
]

# Marks a seat's slot that the server filled with its own fresh secret (see above).
SERVER_FILLED = "s:"

# How long a deal waits for a connected human's client seed (a client answers the
# commitment at once, so this only ever runs out for an old client or a lost frame);
# the default of ``--entropy-wait-seconds``.
ENTROPY_WAIT_SECONDS = 2.0

# The seats a table's first deal waits for when its creator declared ``sends_seeds``:
# the creator's (the only client known to send seeds before anyone has sat down).
FIRST_DEAL_SENDERS = (0,)


@dataclass(frozen=True, slots=True)
class GiveEntropy:
    """A seat's client seed for the deal whose commitment is ``commitment``."""

    commitment: str
    seed: str


@dataclass(frozen=True, slots=True)
class EntropyDue:
    """The wait for client seeds of the deal numbered ``round`` ran out: deal now."""

    round: int


@dataclass(frozen=True, slots=True)
class PublishedFairness:
    """What a frame says about fairness: the match's commitments so far, its seed and
    salt once over, the client seeds of each deal dealt, and the upcoming deal."""

    commitments: tuple[str, ...]
    reveal: fairness.Reveal | None
    entropy: tuple[tuple[str, ...], ...]
    upcoming: Upcoming | None


def _root(meta: TableMeta) -> str | int:
    return meta.secret or meta.seed


def first_commitment(meta: TableMeta) -> str:
    """The commitment to a table's first deal (the create answer carries it)."""
    seed = match_seed(meta.seed, 0, meta.secret)
    return fairness.commitment(seed, fairness.match_salt(_root(meta), 0), 1)


def _filled(meta: TableMeta, given: dict[int, str]) -> tuple[str, ...]:
    """The seeds a deal mixes, in seat order: those ``given``, and on a table whose
    creator chose the seed (two or more humans) a fresh secret for each silent human."""
    given = dict(given)
    if not meta.secret and meta.humans >= 2:
        # The creator knows the server's seed: a silent human's slot gets a secret.
        for seat in meta.seats:
            if seat.kind == "human" and seat.seat not in given:
                given[seat.seat] = SERVER_FILLED + secrets.token_hex(16)
    if not given:
        return ()
    return tuple(given.get(seat, "") for seat in range(len(meta.seats)))


def first_dealt(meta: TableMeta, seeds: tuple[str, ...]) -> TableMeta:
    """``meta`` once its first deal, which waited, is dealt with ``seeds``."""
    return msgspec.structs.replace(meta, first_deal_waits=False, first_entropy=seeds)


def upcoming_deal(meta: TableMeta, state: MatchState, match_no: int) -> tuple[int, int, str] | None:
    """(match, deal, commitment) of the deal dealt next: once the current deal is over,
    or the table's first while it waits for seeds."""
    if meta.first_deal_waits:
        return 0, 1, first_commitment(meta)
    deal = state.deal
    if deal.result is None:
        return None
    if state.winners is None:
        salt = fairness.match_salt(_root(meta), match_no)
        return match_no, deal.deal_no + 1, fairness.commitment(state.seed, salt, deal.deal_no + 1)
    seed = match_seed(meta.seed, match_no + 1, meta.secret)
    salt = fairness.match_salt(_root(meta), match_no + 1)
    return match_no + 1, 1, fairness.commitment(seed, salt, 1)


def published(
    meta: TableMeta, state: MatchState, match_no: int, received: tuple[bool, ...]
) -> PublishedFairness:
    """The fairness part of a frame (``received``: which seats gave the upcoming seed)."""
    deal_no = state.deal.deal_no
    salt = fairness.match_salt(_root(meta), match_no)
    commitments = tuple(fairness.commitment(state.seed, salt, n) for n in range(1, deal_no + 1))
    over = state.winners is not None
    nxt = upcoming_deal(meta, state, match_no)
    return PublishedFairness(
        commitments=commitments,
        reveal=fairness.Reveal(state.seed, salt) if over else None,
        # With the seed only: a creator who chose the seed could deal every hand from it.
        entropy=tuple(state.entropy) if over else (),
        upcoming=None if nxt is None else Upcoming(*nxt, received=received),
    )


class EntropyRound:
    """The client seeds given for the upcoming deal, and the deal request waiting for them."""

    __slots__ = ("_key", "number", "parked", "seeds", "senders")

    def __init__(self) -> None:
        self._key: tuple[int, int, str] | None = None
        self.seeds: dict[int, str] = {}
        # The seats whose clients have given a seed here: only they are waited for.
        self.senders: set[int] = set()
        # The request that asked for the deal while seeds were awaited, and who sent it.
        self.parked: tuple[Listener, NextDeal | NewMatch] | None = None
        # Bumped whenever a deal is dealt: a wait that ran out for an older one is dropped.
        self.number = 0

    def _follow(self, upcoming: tuple[int, int, str] | None) -> None:
        if upcoming != self._key:
            self._key = upcoming
            self.seeds = {}
            self.parked = None

    def received(
        self, meta: TableMeta, state: MatchState, match_no: int, seats: int
    ) -> tuple[bool, ...]:
        """Per seat, whether its seed for the upcoming deal is in."""
        self._follow(upcoming_deal(meta, state, match_no))
        return tuple(seat in self.seeds for seat in range(seats))

    def offer(
        self, seat: int, given: GiveEntropy, meta: TableMeta, state: MatchState, match_no: int
    ) -> bool:
        """Take ``seat``'s seed for the upcoming deal (True if it is new); raises
        ``EntropyError`` when no deal awaits one or the seat already gave another."""
        upcoming = upcoming_deal(meta, state, match_no)
        self._follow(upcoming)
        if upcoming is None:
            raise EntropyError(
                EntropyReason.ENTROPY_CLOSED,
                "no deal is waiting for a client seed: send it once a deal is over",
            )
        if given.commitment != upcoming[2]:
            raise EntropyError(
                EntropyReason.ENTROPY_CLOSED,
                "that commitment is not the upcoming deal's: answer the latest one",
            )
        held = self.seeds.get(seat)
        if held is not None and held != given.seed:
            raise EntropyError(
                EntropyReason.ENTROPY_GIVEN, "this seat already gave its seed for this deal"
            )
        self.seeds[seat] = given.seed
        self.senders.add(seat)
        return held is None

    @staticmethod
    def starts_upcoming(request: NextDeal | NewMatch, state: MatchState) -> bool:
        """Whether ``request`` is the one that deals the upcoming deal (any other is left
        to the engine or the room to refuse at once, never held)."""
        if state.deal.result is None:
            return False
        return isinstance(request, NewMatch) == (state.winners is not None)

    def missing(self, waited_for: Iterable[int]) -> list[int]:
        """The seats of ``waited_for`` whose seed is not in yet."""
        return [seat for seat in waited_for if seat not in self.seeds]

    def mixed(self, meta: TableMeta) -> tuple[str, ...]:
        """The seeds the upcoming deal mixes, in seat order (() if none was given and
        none is needed)."""
        return _filled(meta, self.seeds)

    def stamp(self, entry: NextDeal | NewMatch, meta: TableMeta) -> NextDeal | NewMatch:
        """``entry`` carrying the seeds given, in seat order (unchanged if none was and
        none is needed)."""
        seeds = self.mixed(meta)
        return msgspec.structs.replace(entry, entropy=seeds) if seeds else entry

    def dealt(self) -> None:
        """The deal went out: its seeds and any waiting request are spent."""
        self._key = None
        self.seeds = {}
        self.parked = None
        self.number += 1
