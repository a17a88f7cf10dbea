"""A room's fair deals: the players' client seeds for the upcoming deal, the deal
request held while a connected human's seed is awaited, the table's first deal
while it waits for its creator's seed, and what frames publish.

The rules (who is waited for, how long, what is published when) are told in
``entropy.py``; this is the one object a ``Room`` owns to follow them, so the
actor only asks it: what to publish (``published``), whether a deal request
waits (``hold``), what a seed or a wait running out releases (``give``,
``due``), and what the deal's entry carries (``stamp``, ``dealt``); for the
first deal, whether a join deals it now (``first_ready``) and its meta once
dealt (``first_deal``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from server.engine import MatchState, NextDeal

from .clock import WallClock
from .entropy import (
    ENTROPY_WAIT_SECONDS,
    FIRST_DEAL_SENDERS,
    EntropyDue,
    EntropyRound,
    GiveEntropy,
    PublishedFairness,
    first_dealt,
    published,
)
from .log import NewMatch, TableMeta
from .seats import Listener

__all__ = ["FairDeals", "Given"]


@dataclass(frozen=True, slots=True)
class Given:
    """What a seat's seed changed: ``deal`` is the held request to deal now (its last
    awaited seed is in), ``first`` says the table's first deal is to be dealt now,
    else ``new`` says whether the seed is news to the table."""

    deal: tuple[Listener, NextDeal | NewMatch] | None
    new: bool
    first: bool = False


class FairDeals:
    """The client seeds of one table's upcoming deal, its held deal request, and the
    fairness part of its frames (recomputed only when it can have changed)."""

    __slots__ = ("_cache", "_clock", "_first_armed", "_has_socket", "_post", "_round", "_wait")

    def __init__(
        self,
        clock: WallClock,
        post: Callable[[EntropyDue], None],
        has_socket: Callable[[int], bool],
        wait_seconds: float = ENTROPY_WAIT_SECONDS,
    ) -> None:
        self._clock = clock
        # The longest a deal waits for seeds (``--entropy-wait-seconds``).
        self._wait = wait_seconds
        # The first deal's wait is armed once, at the first join (see ``first_ready``).
        self._first_armed = False
        # How a wait that ran out reaches the actor: an ``EntropyDue`` in its inbox.
        self._post = post
        self._has_socket = has_socket
        self._round = EntropyRound()
        self._cache: tuple[tuple[object, ...], PublishedFairness | None] = ((), None)

    def _awaited(self, meta: TableMeta) -> list[int]:
        """The human seats a deal waits for: those with a socket whose client sends seeds."""
        return [
            s.seat
            for s in meta.seats
            if s.kind == "human" and s.seat in self._round.senders and self._has_socket(s.seat)
        ]

    def give(
        self, seat: int, given: GiveEntropy, meta: TableMeta, state: MatchState, match_no: int
    ) -> Given:
        """Take ``seat``'s seed; raises ``EntropyError`` (see ``EntropyRound.offer``)."""
        new = self._round.offer(seat, given, meta, state, match_no)
        if meta.first_deal_waits:
            return Given(deal=None, new=new, first=not self._round.missing(FIRST_DEAL_SENDERS))
        parked = self._round.parked
        if parked is not None and not self._round.missing(self._awaited(meta)):
            return Given(deal=parked, new=new)
        return Given(deal=None, new=new)

    def hold(
        self,
        listener: Listener,
        request: NextDeal | NewMatch,
        meta: TableMeta,
        state: MatchState,
        match_no: int,
    ) -> bool:
        """Hold a request for a deal while a connected human's seed is missing (True), at
        most ENTROPY_WAIT_SECONDS; a second request while one is held is that deal too."""
        self._round.received(meta, state, match_no, len(meta.seats))
        if not self._round.starts_upcoming(request, state):
            return False
        if self._round.parked is not None:
            return True
        if not self._round.missing(self._awaited(meta)):
            return False
        self._round.parked = (listener, request)
        due = EntropyDue(self._round.number)
        self._clock.call_at(self._clock.now() + self._wait, lambda: self._post(due))
        return True

    def first_ready(self, meta: TableMeta) -> bool:
        """A socket joined while the table's first deal waits: True to deal it now (the
        creator's seed is in); else the wait, at most ``wait_seconds`` from the first
        join, is armed (once)."""
        if not self._round.missing(FIRST_DEAL_SENDERS):
            return True
        if not self._first_armed:
            self._first_armed = True
            due = EntropyDue(self._round.number)
            self._clock.call_at(self._clock.now() + self._wait, lambda: self._post(due))
        return False

    def first_due(self, number: int) -> bool:
        """Whether the wait numbered ``number`` that ran out is the first deal's (not one
        for a deal dealt meanwhile)."""
        return number == self._round.number

    def first_deal(self, meta: TableMeta) -> TableMeta:
        """``meta`` with its first deal dealt from the seeds given so far."""
        return first_dealt(meta, self._round.mixed(meta))

    def due(self, number: int) -> tuple[Listener, NextDeal | NewMatch] | None:
        """The held request to deal now that the wait numbered ``number`` ran out (None
        when that deal was dealt meanwhile)."""
        parked = self._round.parked
        return parked if parked is not None and number == self._round.number else None

    def stamp(self, entry: NextDeal | NewMatch, meta: TableMeta) -> NextDeal | NewMatch:
        """``entry`` carrying the seeds given (``EntropyRound.stamp``)."""
        return self._round.stamp(entry, meta)

    def dealt(self) -> None:
        """The deal went out: its seeds and any held request are spent."""
        self._round.dealt()

    def published(self, meta: TableMeta, state: MatchState, match_no: int) -> PublishedFairness:
        """This match's deal commitments and client seeds so far, its seed and salt once
        over, and the upcoming deal's commitment (server.fairness, entropy.py)."""
        received = self._round.received(meta, state, match_no, len(meta.seats))
        key = (
            match_no,
            state.deal.deal_no,
            state.deal.result is not None,
            state.winners is not None,
            received,
        )
        cached = self._cache[1]
        if self._cache[0] != key or cached is None:
            cached = published(meta, state, match_no, received)
            self._cache = (key, cached)
        return cached
