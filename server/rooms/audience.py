"""Who hears one table, and what each of them hears.

The room actor decides what happens at its table; its ``Audience`` holds the
listeners (the sockets of each human seat, and the spectators) and turns a
change into what each one is told: a seat's ``StateUpdate`` with that seat's
own view (built once per version, shared by the seat's sockets), the
spectators' ``WatchUpdate`` with the public view, hints from one cycle per
seat, emotes.  Views and hint cycles belong to one version of the table:
``new_version`` forgets them.  Only the room's task calls it.
"""

from __future__ import annotations

from collections.abc import Iterable

from server import engine
from server.engine import Event, PublicView, SeatView

from .emotes import EMOTE_BURST, EMOTE_REFILL_SECONDS, RateLimit
from .log import SeatMeta
from .seating import SeatError, SeatReason
from .seats import Listener
from .updates import Closing, EmoteShown, HintAnswer, StateUpdate, TableSnapshot, WatchUpdate

__all__ = ["DEFAULT_MAX_SOCKETS_PER_SEAT", "Audience", "end_all"]

# Sockets one human seat may have at once (the server's ``max_sockets_per_seat``
# setting overrides it): a player's phone and laptop and a tab or two.  Every socket
# of a seat gets every state of it, so this bounds what one token can make the
# server send.
DEFAULT_MAX_SOCKETS_PER_SEAT = 4


def end_all(listeners: list[Listener], why: Closing) -> None:
    """End every one of ``listeners`` for ``why`` and forget them."""
    for listener in listeners:
        listener.end(why)
    listeners.clear()


class Audience:
    """The listeners of one table and what they hear (see the module's docstring)."""

    # A thousand live tables each hold one: a slotted instance keeps no attribute dict.
    __slots__ = (
        "_all_hints",
        "_emote_limits",
        "_hint_next",
        "_max_sockets_per_seat",
        "_max_spectators",
        "_public",
        "_views",
        "humans",
        "spectators",
    )

    def __init__(
        self, max_spectators: int, max_sockets_per_seat: int = DEFAULT_MAX_SOCKETS_PER_SEAT
    ) -> None:
        # Each human seat's sockets, oldest first.
        self.humans: dict[int, list[Listener]] = {}
        self.spectators: list[Listener] = []
        self._max_spectators = max_spectators
        self._max_sockets_per_seat = max(1, max_sockets_per_seat)
        # Per version: each seat's view, the public view, where hint cycles stand.
        self._views: dict[int, SeatView] = {}
        self._public: PublicView | None = None
        self._hint_next: dict[int, int] = {}
        self._all_hints: dict[int, list[list[str]]] = {}
        self._emote_limits: dict[int, RateLimit] = {}

    # --- who listens -------------------------------------------------------------

    def match_seats(self, seats: Iterable[SeatMeta]) -> None:
        """A socket list for each human seat; the sockets of a seat a bot now plays end."""
        for seat in seats:
            if seat.kind == "human":
                self.humans.setdefault(seat.seat, [])
            else:
                end_all(self.humans.pop(seat.seat, []), Closing.REVOKED)

    def listeners(self) -> list[Listener]:
        """Every socket at the table, seated or watching."""
        return [*(x for seat in self.humans.values() for x in seat), *self.spectators]

    def seat_has_socket(self, seat: int) -> bool:
        """Whether any socket sits at ``seat``."""
        return bool(self.humans.get(seat))

    def connected(self, seats: Iterable[SeatMeta]) -> tuple[bool, ...]:
        """Per seat, whether a socket sits there (bots never do)."""
        humans = self.humans
        return tuple([bool(humans.get(s.seat)) for s in seats])

    def any_connection(self) -> bool:
        """Whether anyone at all listens: a seat's socket or a spectator."""
        return any(self.humans.values()) or bool(self.spectators)

    def seat(self, listener: Listener) -> None:
        """Add ``listener`` to its (human) seat's sockets.  A seat keeps its newest
        ``max_sockets_per_seat``: the oldest beyond them is ended (``Closing.REPLACED``),
        since the player who opens the seat once more is most likely on the newest."""
        listeners = self.humans[listener.seat]
        listeners.append(listener)
        while len(listeners) > self._max_sockets_per_seat:
            listeners.pop(0).end(Closing.REPLACED)

    def admit_spectator(self, listener: Listener) -> None:
        """Let ``listener`` watch; ``SeatError`` when the table has all it takes."""
        if len(self.spectators) >= self._max_spectators:
            raise SeatError(
                SeatReason.TOO_MANY_SPECTATORS,
                f"this table already has {self._max_spectators} spectators",
            )
        self.spectators.append(listener)

    def end_everyone(self, why: Closing) -> None:
        """End every socket at the table for ``why`` (the table closes)."""
        for listeners in [*self.humans.values(), self.spectators]:
            for listener in listeners:
                listener.end(why)

    # --- what they hear ------------------------------------------------------------

    def new_version(self) -> None:
        """The table moved on: every view and hint cycle is of the past."""
        self._views.clear()
        self._public = None
        self._hint_next.clear()
        self._all_hints.clear()

    def forget_views(self) -> None:
        """Drop the views built so far (rebuilt on demand): a table waiting for its next
        action need not hold them."""
        self._views.clear()

    def view(self, state: engine.MatchState, seat: int) -> SeatView:
        """``seat``'s view of ``state``, built once per version."""
        view = self._views.get(seat)
        if view is None:
            view = self._views[seat] = engine.seat_view(state, seat)
        return view

    def state_update(
        self,
        state: engine.MatchState,
        version: int,
        seat: int,
        snapshot: TableSnapshot,
        events: list[Event],
        full: bool = False,
    ) -> StateUpdate:
        """What a socket of ``seat`` hears of the table at ``version`` (``full``: whole,
        even to a socket that takes deltas)."""
        return StateUpdate(
            version=version, table=snapshot, view=self.view(state, seat), events=events, full=full
        )

    def watch_update(
        self, state: engine.MatchState, version: int, snapshot: TableSnapshot, full: bool = False
    ) -> WatchUpdate:
        """What a spectator hears of the table at ``version``, with no events."""
        if self._public is None:
            self._public = engine.public_view(state)
        return WatchUpdate(version=version, table=snapshot, view=self._public, events=[], full=full)

    def broadcast(
        self, state: engine.MatchState, version: int, snapshot: TableSnapshot, events: list[Event]
    ) -> None:
        """Tell every socket of every seat, and every spectator, the table as it now is."""
        for seat, listeners in self.humans.items():
            if not listeners:
                continue
            update = self.state_update(state, version, seat, snapshot, events)
            for listener in list(listeners):
                listener.push(update)
        if self.spectators:
            if self._public is None:
                self._public = engine.public_view(state)
            watched = WatchUpdate(version=version, table=snapshot, view=self._public, events=events)
            for listener in list(self.spectators):
                listener.push(watched)

    def hint(self, listener: Listener, state: engine.MatchState, version: int) -> None:
        """The next hint of the listener's seat: the view carries the first few, and
        asking again cycles through every legal play."""
        seat = listener.seat
        hints = self._all_hints.get(seat)
        if hints is None:
            hints = self._all_hints[seat] = engine.hints_for(state, seat)
        if not hints:
            listener.push(HintAnswer(version=version, cards=[], index=0, count=0))
            return
        index = self._hint_next.get(seat, 0) % len(hints)
        self._hint_next[seat] = index + 1
        listener.push(
            HintAnswer(version=version, cards=hints[index], index=index, count=len(hints))
        )

    def emote(self, listener: Listener, emote: str, now: float) -> None:
        """Show ``emote`` from the listener's seat to everyone; ``SeatError`` over the
        seat's allowance."""
        limit = self._emote_limits.setdefault(listener.seat, RateLimit())
        if not limit.allow(now):
            raise SeatError(
                SeatReason.TOO_MANY_EMOTES,
                f"{EMOTE_BURST} emotes at once, then one every {EMOTE_REFILL_SECONDS:g} s; "
                f"try again in {limit.retry_after(now):.1f} s",
            )
        shown = EmoteShown(listener.seat, emote)
        for listeners in [*self.humans.values(), self.spectators]:
            for other in list(listeners):
                other.push(shown)
