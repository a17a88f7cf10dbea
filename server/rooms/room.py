"""The room actor: one asyncio task and one inbox per live table.

Only the actor touches the ``MatchState``.  Human requests and bot decisions
both arrive as inbox commands and go through the same ``engine.apply``.  The
room speaks in engine actions and seat views only: ``server.presenter`` turns
wire messages into requests and updates into frames.

An accepted action is appended to Redis (checked against the expected
version) before any seat hears of it; if that write fails, the in-memory state
may be ahead of Redis, so the room shuts itself down and the next connection
rebuilds the table from Redis alone.  Bots that answer at once move before
that write and are appended with it: one write, one frame per socket, for an
action and its instant answers.

The actor keeps the loop and the order of things: check, write, tell.  What an
action becomes is ``commit.py``; the bots and their pauses ``bot_turns.py``;
the stand-in's timers ``standin.py``; what host and seat requests and settings
do to the meta ``seat_requests.py``, and what the meta and match alone refuse
``gate.py``; the players' seeds a deal waits for and the fairness each frame
publishes, the room's ``FairDeals`` (``fair_deals.py``); until when its lease
is surely held, its ``LeaseTerm`` (``lease_term.py``); who listens, and what each
listener hears (views, hints, emotes), the room's ``Audience`` (``audience.py``).  Seat state
lives in the table meta, which the room writes with the action that changed it
(or alone), under the same version check.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import msgspec
from redis.exceptions import RedisError

from server import bots, engine, metrics, ratings
from server.bots import BotAction
from server.engine import EngineError, Event, NextDeal, Pass, Play
from server.fairness import EntropyError, EntropyReason
from server.inbox import Inbox
from server.usage import USAGE

from .audience import DEFAULT_MAX_SOCKETS_PER_SEAT, Audience, end_all
from .bot_turns import BotTurns, bot_view
from .clock import SystemClock, WallClock
from .commands import (
    AskHint,
    Attach,
    BotMove,
    Command,
    Detach,
    Idle,
    InviteSeat,
    Rename,
    Request,
    Resync,
    SeatRequest,
    SendEmote,
    StandinDue,
    Stop,
    Submit,
    WatchLink,
)
from .commit import prepare
from .entropy import ENTROPY_WAIT_SECONDS, EntropyDue, GiveEntropy
from .fair_deals import FairDeals
from .gate import check, cleaned
from .lease_term import LeaseTerm
from .log import BotSpeed, NewMatch, TableMeta, TableState, rebuild
from .seat_requests import renamed, seat_change, with_bot_speed
from .seat_takeover import SeatTakeovers, take_over, unlist
from .seating import (
    SeatError,
    SeatReason,
    claim_open_seat,
    hand_back,
    mark_joined,
    retired_reason,
)
from .seats import SPECTATOR, Listener
from .standin import StandIn
from .store import Lease, StoreError, TableStore
from .turns import clock_for
from .updates import (
    Closing,
    Refused,
    RoomError,
    RoomReason,
    StateUpdate,
    TableSnapshot,
)

__all__ = ["DEFAULT_MAX_SPECTATORS", "Room", "RoomClosed"]

# Sockets watching one table (the server's ``max_spectators`` setting overrides it).
DEFAULT_MAX_SPECTATORS = 20

_KINDS: dict[type, str] = {
    Play: "play",
    Pass: "pass",
    NextDeal: "next_deal",
    NewMatch: "new_match",
}

log = logging.getLogger(__name__)


class RoomClosed(Exception):
    """The room stopped (idle, shutdown or a storage failure); load it again."""


class Room:
    """One live table: the only owner of its ``MatchState``, fed through one inbox."""

    # A thousand live tables each hold one: a slotted instance keeps no attribute dict.
    __slots__ = (
        "_audience",
        "_bots",
        "_clock",
        "_fair",
        "_idle_seconds",
        "_idle_timer",
        "_inbox",
        "_lease_term",
        "_match_no",
        "_on_closed",
        "_standin",
        "_state",
        "_store",
        "_takeovers",
        "_task",
        "_turn_version",
        "_version",
        "closed",
        "id",
        "lease",
        "meta",
    )

    def __init__(
        self,
        meta: TableMeta,
        table: TableState,
        store: TableStore,
        lease: Lease,
        *,
        idle_seconds: float,
        on_closed: Callable[[Room], None],
        clock: WallClock | None = None,
        max_spectators: int = DEFAULT_MAX_SPECTATORS,
        max_sockets_per_seat: int = DEFAULT_MAX_SOCKETS_PER_SEAT,
        lease_clock: WallClock,
        lease_seconds: float,
        lease_until: float,
        entropy_wait_seconds: float = ENTROPY_WAIT_SECONDS,
    ) -> None:
        self.id = meta.id
        self.meta = meta
        self._state = table.match
        self._match_no = table.match_no
        self._version = table.version
        self._turn_version = table.turn_version
        self._store = store
        # Every write goes through this lease: once another process has taken the
        # table, the store refuses it (LeaseLost) and the room closes.
        self.lease = lease
        self._lease_term = LeaseTerm(store, lease, lease_clock, lease_seconds, lease_until)
        self._idle_seconds = idle_seconds
        self._on_closed = on_closed
        self._clock: WallClock = clock or SystemClock()
        self._inbox: Inbox[Command] = Inbox()
        self._audience = Audience(max_spectators, max_sockets_per_seat)
        self._bots = BotTurns(self.id, self._clock, self._post, table.bot_speed_ms)
        self._reseat()
        self._standin = StandIn(self.id, self._clock, self._post, self._audience.humans)
        self._idle_timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        # Quick-match players waiting for the bot seat they were given (seat_takeover.py).
        self._takeovers = SeatTakeovers()
        # The players' client seeds for the upcoming deal (rooms/fair_deals.py).
        self._fair = FairDeals(
            self._clock, self._post, self._audience.seat_has_socket, entropy_wait_seconds
        )
        self.closed = False

    # --- read-only views for the registry and tests ---------------------------

    @property
    def version(self) -> int:
        """How many actions the table has accepted (its Redis log length)."""
        return self._version

    @property
    def state(self) -> engine.MatchState:
        """The current match (read-only for everyone but the actor)."""
        return self._state

    @property
    def listeners(self) -> list[Listener]:
        """Every socket at the table now, seated or watching (the cluster's handover
        counts where they are)."""
        return [
            *(x for seat in self._audience.humans.values() for x in seat),
            *self._audience.spectators,
        ]

    @property
    def _bot_speed_ms(self) -> int:
        return self._bots.speed_ms

    # --- called from connection handlers (never block on the actor) -----------

    def start(self) -> None:
        """Start the actor task (the registry does, once)."""
        self._task = asyncio.create_task(self._run(), name=f"room-{self.id}")
        # A table loaded with its match over: the last owner may have died before rating it.
        ratings.match_finished(self.meta, self._state, self._match_no)

    async def attach(self, listener: Listener, token_hash: str | None = None) -> None:
        """Seat ``listener``, which joined with the token whose hash is ``token_hash``; its
        full state is queued to it.  Raises ``RoomClosed``, or ``SeatError`` when the
        token no longer opens its seat (or the table has all the spectators it takes)."""
        if self.closed:
            raise RoomClosed(self.id)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait(Attach(listener, done, token_hash))
        await done

    def detach(self, listener: Listener) -> None:
        """Unseat ``listener`` (its socket has gone); other seats hear if its seat empties."""
        if not self.closed:
            self._inbox.put_nowait(Detach(listener))

    def resync(self, listener: Listener) -> None:
        """Send ``listener`` its full state again (a forwarded socket that missed frames,
        a client that lost track of its deltas)."""
        if not self.closed:
            self._inbox.put_nowait(Resync(listener))

    def submit(self, listener: Listener, version: int, request: Request) -> None:
        """Queue ``request`` from ``listener``'s seat, made against table ``version``.

        The answer (a new state for everyone, a hint or a refusal for the sender)
        arrives through the listeners; a closed room ends the listener instead.
        """
        if self.closed:
            listener.end(Closing.TABLE_UNAVAILABLE)
        else:
            self._inbox.put_nowait(Submit(listener, version, request))

    def lease_renewed(self, until: float) -> None:
        """The lease is surely held until ``until`` (the lease clock): a renewal sent that
        long before it ends succeeded."""
        self._lease_term.renewed(until)

    async def wait_closed(self) -> None:
        """Return once the actor has stopped."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def stop(self, why: Closing = Closing.SHUTDOWN) -> None:
        """Stop the actor after what is already queued, ending every socket for ``why``."""
        if self._task is None or self._task.done():
            return
        self._inbox.put_nowait(Stop(why))
        await asyncio.shield(self._task)

    # --- the actor -------------------------------------------------------------

    async def _run(self) -> None:
        why = Closing.TABLE_UNAVAILABLE
        try:
            # A stored clock of the current turn runs on; a missing one starts now.
            await self._save_meta(self._with_clock(self.meta))
            self._schedule_bot()
            self._schedule_standin()
            self._arm_idle_timer()
            while True:
                command = await self._inbox.get()
                if isinstance(command, Stop):
                    why = command.why
                    break
                if isinstance(command, Idle):
                    self._idle_timer = None
                    if not self._audience.any_connection():
                        why = Closing.IDLE
                        break
                    continue
                # Nothing tells a socket before the lease is surely ours (lease_term.py).
                await self._lease_term.hold()
                await self._handle(command)
        except (StoreError, RedisError, OSError) as exc:
            log.warning("table %s: %s; closing the room", self.id, exc)
        except Exception:
            # A bug must not leave a table wedged: close it; reconnecting reloads from Redis.
            log.exception("table %s: room failed", self.id)
        finally:
            self._close(why)

    def _close(self, why: Closing) -> None:
        self.closed = True
        self._bots.cancel()
        self._standin.cancel()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._on_closed(self)
        if why is Closing.IDLE:
            unlist(self.id)  # nobody is here: no quick-match player should be sent here
        self._audience.end_everyone(why)
        while not self._inbox.empty():
            command = self._inbox.get_nowait()
            if isinstance(command, Attach) and not command.done.done():
                command.done.set_exception(RoomClosed(self.id))
            elif isinstance(command, Submit):
                command.listener.end(why)

    async def _handle(self, command: Command) -> None:
        if isinstance(command, Attach):
            await self._attach(command)
        elif isinstance(command, Detach):
            self._detach(command.listener)
        elif isinstance(command, Submit):
            await self._submit(command)
        elif isinstance(command, BotMove):
            await self._bot_move(command)
        elif isinstance(command, Resync):
            self._resync(command.listener)
        elif isinstance(command, StandinDue):
            self._standin.play(command, self.meta, self._state, self._version, self._bot_speed_ms)
        elif isinstance(command, EntropyDue):
            if self.meta.first_deal_waits:
                if self._fair.first_due(command.round):
                    await self._deal_first()
                return
            held = self._fair.due(command.round)
            if held is not None:
                await self._commit(held[1], held[0])

    def _resync(self, listener: Listener) -> None:
        if self.meta.first_deal_waits:
            return  # its first state comes with the first deal
        # Whole, even to a socket that takes deltas: it (or its process) lost track.
        if listener in self._audience.humans.get(listener.seat, []):
            snapshot = self._snapshot()
            listener.push(
                self._audience.state_update(
                    self._state, self._version, listener.seat, snapshot, [], full=True
                )
            )
        elif listener in self._audience.spectators:
            update = self._audience.watch_update(self._state, self._version, self._snapshot(), True)
            listener.push(update)

    async def _attach(self, command: Attach) -> None:
        if command.done.done():  # the handler gave up waiting (socket gone)
            return
        try:
            seated = await self._seat_listener(command)
        except SeatError as exc:
            command.done.set_exception(exc)
            return
        except BaseException:
            command.done.set_exception(RoomClosed(self.id))
            raise
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        command.done.set_result(None)
        if self.meta.first_deal_waits:
            # Nothing is shown before the first deal: every socket hears of it when dealt.
            if self._fair.first_ready(self.meta):
                await self._deal_first()
            return
        if seated:
            self._broadcast([])
        else:
            listener = command.listener
            listener.push(self._state_update(listener.seat, self._snapshot(), []))
        self._schedule_standin()

    async def _seat_listener(self, command: Attach) -> bool:
        """Seat a socket (checking its token against the room's own meta); True when
        anything others see changed.  Reconnecting hands a seat back from the stand-in,
        and the first join with an open seat's invite makes that bot seat human."""
        listener, token_hash = command.listener, command.token_hash
        if listener.seat == SPECTATOR:
            if token_hash is None or token_hash != self.meta.watch_hash:
                raise SeatError(SeatReason.INVITE_REVOKED, "this watch link was replaced")
            self._audience.admit_spectator(listener)
            return True
        seat = self.meta.seats[listener.seat]
        if token_hash is not None and token_hash != seat.token_hash:
            claimed = await self._takeovers.claim(self.meta, listener.seat, token_hash)
            if claimed is None:
                reason = retired_reason(self.meta, token_hash) or SeatReason.INVITE_REVOKED
                raise SeatError(reason, "this invite no longer opens the seat")
            if await self._take_or_wait(listener, claimed):
                return True
            seat = self.meta.seats[listener.seat]
        meta = self.meta
        if seat.kind == "bot":
            if self._state.deal.result is None:
                raise SeatError(SeatReason.INVITE_EXPIRED, "the next deal has already started")
            meta = claim_open_seat(meta, seat.seat)
        meta = self._with_clock(hand_back(mark_joined(meta, seat.seat), seat.seat))
        changed = meta != self.meta
        await self._save_meta(meta)
        if seat.kind == "bot":
            self._reseat()
        before = self._connected()
        self._audience.seat(listener)
        self._standin.away_since.pop(seat.seat, None)
        return changed or self._connected() != before

    def _detach(self, listener: Listener) -> None:
        if self._takeovers.forget(listener):
            self._audience.spectators.remove(listener)
            self._broadcast([])
            self._arm_idle_timer()
            return
        if listener.seat == SPECTATOR:
            if listener in self._audience.spectators:
                self._audience.spectators.remove(listener)
                self._broadcast([])
                self._arm_idle_timer()
            return
        listeners = self._audience.humans.get(listener.seat, [])
        if listener not in listeners:
            return
        before = self._connected()
        listeners.remove(listener)
        if not listeners:
            self._standin.away_since[listener.seat] = self._clock.now()
            self._schedule_standin()
        if self._connected() != before:
            self._broadcast([])
        self._arm_idle_timer()

    async def _submit(self, command: Submit) -> None:
        listener, request = command.listener, command.request
        if not listener.open:
            return
        if self._takeovers.waiting(listener):
            reason = "you take this seat when the deal ends; until then you watch"
            self._refuse(listener, SeatError(SeatReason.SPECTATOR, reason))
            return
        if isinstance(request, SendEmote):
            try:
                self._audience.emote(listener, request.emote, self._clock.now())
            except SeatError as exc:
                self._refuse(listener, exc)
            return
        if isinstance(request, GiveEntropy):
            await self._give_entropy(listener, request)
            return
        if self.meta.first_deal_waits:
            reason = "the first deal is waiting for the players' seeds: nothing to act on yet"
            self._refuse(listener, EntropyError(EntropyReason.NOT_DEALT, reason))
            return
        if command.version != self._version:
            self._refuse(
                listener,
                RoomError(
                    RoomReason.STALE_VERSION,
                    f"made against version {command.version}; the table is at {self._version}",
                ),
            )
            return
        if isinstance(request, AskHint):
            self._audience.hint(listener, self._state, self._version)
            return
        try:
            if isinstance(request, Rename):
                request = cleaned(request, listener.seat)
            check(request, listener.seat, self.meta, self._state)
        except (RoomError, SeatError) as exc:
            self._refuse(listener, exc)
            return
        if isinstance(request, SeatRequest):
            await self._seat_request(listener, request)
            return
        if isinstance(request, BotSpeed):
            await self._set_bot_speed(listener, request.ms)
        elif isinstance(request, Rename):
            await self._set_name(request.seat, request.name)
        else:
            # A deal waits for the seated humans' client seeds (rooms/fair_deals.py).
            held = isinstance(request, NextDeal | NewMatch) and self._fair.hold(
                listener, request, self.meta, self._state, self._match_no
            )
            if held or not await self._commit(request, listener):
                return
        metrics.observe_action_latency(time.perf_counter() - command.received)

    async def _set_bot_speed(self, listener: Listener, ms: int) -> None:
        """A table setting, kept in the meta: changing it never grows the log, never
        restarts a bot's pause under way nor its search (``BotTurns.set_speed``)."""
        try:
            meta = with_bot_speed(self.meta, listener.seat, ms, self._version)
        except SeatError as exc:
            self._refuse(listener, exc)
            return
        if ms != self._bot_speed_ms:
            await self._store.save_meta(self.lease, self._version, meta)
            self.meta = meta
            self._bots.set_speed(ms)
            metrics.action_accepted("bot_speed", by_bot=False)
        self._broadcast([])

    async def _set_name(self, seat: int, name: str) -> None:
        """A seat's name is a table setting too: kept in the meta, the log unchanged."""
        await self._save_meta(renamed(self.meta, seat, name))
        self._broadcast([])

    async def _bot_move(self, command: BotMove) -> None:
        if command.version != self._version:
            return  # decided against an older state; the current turn has its own task
        standin = command.standin_ticket is not None
        if standin and not self._standin.is_current(command.standin_ticket or 0):
            return  # the seat's human came back (or the turn was rescheduled) meanwhile
        action: BotAction = command.action
        if action.seat != command.seat:
            log.error("bot on seat %d answered for seat %d", command.seat, action.seat)
            action = bots.fallback_action(bot_view(self._state, command.seat))
        if not await self._commit(action, None, standin=standin):
            # decide() promises a legal play; if it breaks that promise the table must not stall.
            fallback = bots.fallback_action(bot_view(self._state, command.seat))
            await self._commit(fallback, None, standin=standin)

    async def _commit(
        self,
        entry: Play | Pass | NextDeal | NewMatch,
        origin: Listener | None,
        *,
        standin: bool = False,
    ) -> bool:
        """Check, persist, then announce ``entry``; False when the engine refused it."""
        if isinstance(entry, NextDeal | NewMatch):
            entry = self._fair.stamp(entry, self.meta)
        try:
            commit = prepare(
                entry,
                self.meta,
                self._state,
                match_no=self._match_no,
                version=self._version,
                now=self._clock.now(),
                bots=self._bots,
                standin=standin,
            )
        except EngineError as exc:
            if origin is not None:
                self._refuse(origin, exc)
            else:
                log.error("table %s: bot action refused: %r", self.id, exc)
            return False
        meta, entries = commit.meta, commit.entries
        # The write comes first: a seat never hears of an action Redis does not hold.
        self._version = await self._store.append(
            self.lease, self._version, entries, None if meta == self.meta else meta
        )
        for i, accepted in enumerate(entries):
            USAGE.action_accepted()
            metrics.action_accepted(_KINDS[type(accepted)], by_bot=i > 0 or origin is None)
        self.meta = meta
        self._turn_version = commit.turn_version
        if isinstance(entry, NextDeal | NewMatch):
            self._fair.dealt()
        if commit.new_match is not None:
            self._state = commit.new_match
            self._match_no += 1
        self._audience.new_version()
        if any(isinstance(event, engine.MatchEnded) for event in commit.events):
            ratings.match_finished(self.meta, self._state, self._match_no)
            unlist(self.id)
        moved = await self._take_over_seats()
        self._broadcast(commit.events)
        self._seat_moved(moved, commit.events)
        self._schedule_bot()
        self._schedule_standin()
        # Heard and handed to the bot: a table waiting for its next action need not hold
        # this version's views (the rare attach or refused bot move rebuilds them).
        self._audience.forget_views()
        return True

    # --- seats: host controls, hand-back, meta writes -------------------------

    async def _seat_request(self, listener: Listener, request: SeatRequest) -> None:
        try:
            meta, issued = seat_change(
                self.meta,
                listener.seat,
                request,
                present=self._audience.seat_has_socket,
                between_deals=self._state.deal.result is not None,
            )
        except SeatError as exc:
            self._refuse(listener, exc)
            return
        kinds_before = [s.kind for s in self.meta.seats]
        await self._save_meta(self._with_clock(meta))
        if issued is not None:
            listener.push(issued)
        if isinstance(request, InviteSeat):
            # The old token stops at once, for sockets already seated with it too.
            end_all(self._audience.humans[request.seat], Closing.REVOKED)
            self._standin.away_since[request.seat] = self._clock.now()
        elif isinstance(request, WatchLink):
            end_all(self._audience.spectators, Closing.REVOKED)
        self._reseat()
        self._broadcast([])
        if [s.kind for s in self.meta.seats] != kinds_before:
            self._schedule_bot()
        self._schedule_standin()

    # --- quick-match players taking over bot seats (seat_takeover.py) -------------

    async def _take_or_wait(self, listener: Listener, claimed: TableMeta) -> bool:
        """A bot seat given to ``listener``'s player: mid-deal they watch until it ends
        (True); between deals the seat is theirs now (False: seat them as usual)."""
        if self._state.deal.result is None:
            await self._save_meta(claimed)
            self._takeovers.wait(listener)
            self._audience.spectators.append(listener)
            return True
        bot_match = -1 if self._state.winners is not None else self._match_no
        await self._save_meta(take_over(claimed, [listener.seat], bot_match))
        self._reseat()
        return False

    async def _take_over_seats(self) -> list[Listener]:
        """A deal just ended: the waiting players' seats become theirs (stored first)."""
        seats = self._takeovers.ready(self.meta) if self._state.deal.result is not None else []
        if not seats:
            return []
        bot_match = -1 if self._state.winners is not None else self._match_no
        await self._save_meta(take_over(self.meta, seats, bot_match))
        moved = self._takeovers.seated(seats)
        for listener in moved:
            self._audience.spectators.remove(listener)
        self._reseat()
        return moved

    def _seat_moved(self, moved: list[Listener], events: list[Event]) -> None:
        """Seat the players who took over: each gets its seat's whole picture (it was
        shown the spectators' one), then the others see them connected."""
        if not moved:
            return
        for listener in moved:
            self._audience.seat(listener)
        snapshot = self._snapshot()
        for listener in moved:
            update = self._audience.state_update(
                self._state, self._version, listener.seat, snapshot, events, True
            )
            listener.push(update)
        self._broadcast([])

    def _reseat(self) -> None:
        """Match the human seats' socket lists and the bots to the meta's seat kinds."""
        self._audience.match_seats(self.meta.seats)
        self._bots.reseat(self.meta.seats)

    def _with_clock(self, meta: TableMeta) -> TableMeta:
        if meta.first_deal_waits:
            return meta  # no turn before the first deal
        clock = clock_for(meta, self._state, self._turn_version, self._clock.now())
        return meta if clock == meta.clock else msgspec.structs.replace(meta, clock=clock)

    async def _save_meta(self, meta: TableMeta) -> None:
        if meta == self.meta:
            return
        await self._store.save_meta(self.lease, self._version, meta)
        self.meta = meta

    # --- the stand-in and the bots ---------------------------------------------

    def _schedule_standin(self) -> None:
        """Arm the stand-in for the current turn (see ``standin.py``)."""
        if not self.closed and not self.meta.first_deal_waits:
            self._standin.arm(
                self.meta, self._state, self._turn_version, self._audience.seat_has_socket
            )

    def _schedule_bot(self) -> None:
        """Start the bot's turn if it is a bot's (see ``bot_turns.py``)."""
        if not self.meta.first_deal_waits:
            self._bots.schedule(self.meta, self._state, self._version)

    def _post(self, command: Command) -> None:
        if not self.closed:
            self._inbox.put_nowait(command)

    # --- players' entropy (rooms/fair_deals.py) ---------------------------------

    async def _give_entropy(self, listener: Listener, given: GiveEntropy) -> None:
        try:
            outcome = self._fair.give(listener.seat, given, self.meta, self._state, self._match_no)
        except EntropyError as exc:
            self._refuse(listener, exc)
            return
        if outcome.first:
            await self._deal_first()
        elif outcome.deal is not None:
            await self._commit(outcome.deal[1], outcome.deal[0])
        elif outcome.new:
            self._broadcast([])

    async def _deal_first(self) -> None:
        """Deal the table's first deal, which waited for its creator's seed (entropy.py):
        the meta keeps the seeds (there is no log entry to carry them), then all hear."""
        if not self.meta.first_deal_waits:
            return
        meta = self._fair.first_deal(self.meta)
        self._state = rebuild(meta, []).match
        await self._save_meta(self._with_clock(meta))
        self._fair.dealt()
        self._broadcast([])
        self._schedule_bot()
        self._schedule_standin()

    # --- what seats hear ------------------------------------------------------

    def _refuse(
        self, listener: Listener, error: RoomError | EngineError | SeatError | EntropyError
    ) -> None:
        listener.push(Refused(version=self._version, error=error))

    def _connected(self) -> tuple[bool, ...]:
        return self._audience.connected(self.meta.seats)

    def _arm_idle_timer(self) -> None:
        if self._audience.any_connection() or self._idle_timer is not None:
            return
        self._idle_timer = asyncio.get_running_loop().call_later(
            self._idle_seconds, self._inbox.put_nowait, Idle()
        )

    def _snapshot(self) -> TableSnapshot:
        fair = self._fair.published(self.meta, self._state, self._match_no)
        return TableSnapshot(
            meta=self.meta,
            connected=self._connected(),
            bot_speed_ms=self._bot_speed_ms,
            match_no=self._match_no,
            commitments=fair.commitments,
            reveal=fair.reveal,
            entropy=fair.entropy,
            upcoming=fair.upcoming,
            spectators=len(self._audience.spectators),
            now=self._clock.now(),
        )

    def _state_update(self, seat: int, snapshot: TableSnapshot, events: list[Event]) -> StateUpdate:
        return self._audience.state_update(self._state, self._version, seat, snapshot, events)

    def _broadcast(self, events: list[Event]) -> None:
        if self.meta.first_deal_waits:
            return  # nothing to show before the first deal (see ``_deal_first``)
        self._audience.broadcast(self._state, self._version, self._snapshot(), events)
