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

The actor keeps the loop, its inbox and the order of things: check, write,
tell.  Each part it drives is a helper that owns its state, called only from
the actor's task: the table and its versioned writes (``HeldTable``); what an
action becomes (``commit.py``); the bots' turns, the stand-in and the idle close
(``RoomTimers``); joins, leaves, host and seat requests, settings and
quick-match takeovers (``SeatChanges``, over ``seat_requests.py`` and
``seat_takeover.py``; ``gate.py`` refuses what the meta and match alone refuse);
the players' seeds and the fairness each frame publishes (``FairDeals``); until
when its lease is surely held (``LeaseTerm``); who listens and what each hears
(``Audience``), and the table part of every frame (``Teller``).  Seat state lives
in the table meta, written with the action that changed it (or alone), under
the same version check.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from redis.exceptions import RedisError

from server import engine, metrics, ratings
from server.engine import EngineError, NextDeal, Pass, Play
from server.fairness import EntropyError, EntropyReason
from server.inbox import Inbox

from .audience import DEFAULT_MAX_SOCKETS_PER_SEAT, Audience
from .clock import SystemClock, WallClock
from .commands import (
    AskHint,
    Attach,
    BotMove,
    Command,
    Detach,
    Idle,
    Rename,
    Request,
    Resync,
    SeatRequest,
    SendEmote,
    StandinDue,
    Stop,
    Submit,
)
from .commit import prepare
from .entropy import ENTROPY_WAIT_SECONDS, EntropyDue, GiveEntropy
from .fair_deals import FairDeals
from .gate import check, cleaned
from .held_table import HeldTable
from .lease_term import LeaseTerm
from .log import BotSpeed, NewMatch, TableMeta, TableState
from .seat_changes import SeatChanges
from .seat_takeover import unlist
from .seating import SeatError, SeatReason
from .seats import Listener
from .store import Lease, StoreError, TableStore
from .telling import Teller
from .timers import RoomTimers
from .updates import Closing, RoomError, RoomReason

__all__ = ["DEFAULT_MAX_SPECTATORS", "Room", "RoomClosed"]

# Sockets watching one table (the server's ``max_spectators`` setting overrides it).
DEFAULT_MAX_SPECTATORS = 20

log = logging.getLogger(__name__)


class RoomClosed(Exception):
    """The room stopped (idle, shutdown or a storage failure); load it again."""


class Room:
    """One live table: the only owner of its ``MatchState``, fed through one inbox."""

    # A thousand live tables each hold one: a slotted instance keeps no attribute dict.
    __slots__ = (
        "_audience",
        "_clock",
        "_fair",
        "_inbox",
        "_lease_term",
        "_on_closed",
        "_seats",
        "_table",
        "_task",
        "_teller",
        "_timers",
        "closed",
        "id",
        "lease",
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
        self._clock: WallClock = clock or SystemClock()
        self._table = HeldTable(meta, table, store, lease, self._clock)
        self.lease = lease
        self._lease_term = LeaseTerm(store, lease, lease_clock, lease_seconds, lease_until)
        self._on_closed = on_closed
        self._inbox: Inbox[Command] = Inbox()
        self._audience = Audience(max_spectators, max_sockets_per_seat)
        self._audience.match_seats(meta.seats)
        self._timers = RoomTimers(
            self.id,
            self._table,
            self._audience,
            self._clock,
            self._post,
            bot_speed_ms=table.bot_speed_ms,
            idle_seconds=idle_seconds,
        )
        self._task: asyncio.Task[None] | None = None
        # The players' client seeds for the upcoming deal (rooms/fair_deals.py).
        self._fair = FairDeals(
            self._clock, self._post, self._audience.seat_has_socket, entropy_wait_seconds
        )
        self._teller = Teller(
            self._table, self._audience, self._fair, self._timers.bots, self._clock
        )
        self._seats = SeatChanges(
            self._table, self._audience, self._timers, self._teller, self._clock
        )
        self.closed = False

    # --- read-only views for the registry and tests ---------------------------

    @property
    def meta(self) -> TableMeta:
        """The table's meta as last stored (read-only for everyone but the actor)."""
        return self._table.meta

    @property
    def version(self) -> int:
        """How many actions the table has accepted (its Redis log length)."""
        return self._table.version

    @property
    def state(self) -> engine.MatchState:
        """The current match (read-only for everyone but the actor)."""
        return self._table.state

    @property
    def listeners(self) -> list[Listener]:
        """Every socket at the table now, seated or watching (the cluster's handover
        counts where they are)."""
        return self._audience.listeners()

    # --- called from connection handlers (never block on the actor) -----------

    def start(self) -> None:
        """Start the actor task (the registry does, once)."""
        self._task = asyncio.create_task(self._run(), name=f"room-{self.id}")
        # A table loaded with its match over: the last owner may have died before rating it.
        ratings.match_finished(self.meta, self._table.state, self._table.match_no)

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
            await self._table.save_meta(self._table.with_clock(self.meta))
            self._timers.schedule()
            self._timers.arm_idle()
            while True:
                command = await self._inbox.get()
                if isinstance(command, Stop):
                    why = command.why
                    break
                if isinstance(command, Idle):
                    self._timers.idle_fired()
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
        self._timers.stop()
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
            self._seats.leave(command.listener)
        elif isinstance(command, Submit):
            await self._submit(command)
        elif isinstance(command, BotMove):
            await self._bot_move(command)
        elif isinstance(command, Resync):
            self._teller.resync(command.listener)
        elif isinstance(command, StandinDue):
            self._timers.play_standin(command)
        elif isinstance(command, EntropyDue):
            if self.meta.first_deal_waits:
                if self._fair.first_due(command.round):
                    await self._deal_first()
                return
            held = self._fair.due(command.round)
            if held is not None:
                await self._commit(held[1], held[0])

    async def _attach(self, command: Attach) -> None:
        if command.done.done():  # the handler gave up waiting (socket gone)
            return
        try:
            seated = await self._seats.join(command.listener, command.token_hash)
        except SeatError as exc:
            command.done.set_exception(exc)
            return
        except BaseException:
            command.done.set_exception(RoomClosed(self.id))
            raise
        self._timers.disarm_idle()
        command.done.set_result(None)
        if self.meta.first_deal_waits:
            # Nothing is shown before the first deal: every socket hears of it when dealt.
            if self._fair.first_ready(self.meta):
                await self._deal_first()
            return
        if seated:
            self._teller.broadcast([])
        else:
            self._teller.push_state(command.listener)
        self._timers.schedule_standin()

    async def _submit(self, command: Submit) -> None:
        listener, request = command.listener, command.request
        if not listener.open:
            return
        refuse = self._teller.refuse
        if self._seats.takeovers.waiting(listener):
            reason = "you take this seat when the deal ends; until then you watch"
            refuse(listener, SeatError(SeatReason.SPECTATOR, reason))
            return
        if isinstance(request, SendEmote):
            try:
                self._audience.emote(listener, request.emote, self._clock.now())
            except SeatError as exc:
                refuse(listener, exc)
            return
        if isinstance(request, GiveEntropy):
            await self._give_entropy(listener, request)
            return
        if self.meta.first_deal_waits:
            reason = "the first deal is waiting for the players' seeds: nothing to act on yet"
            refuse(listener, EntropyError(EntropyReason.NOT_DEALT, reason))
            return
        table = self._table
        if command.version != table.version:
            refuse(
                listener,
                RoomError(
                    RoomReason.STALE_VERSION,
                    f"made against version {command.version}; the table is at {table.version}",
                ),
            )
            return
        if isinstance(request, AskHint):
            self._audience.hint(listener, table.state, table.version)
            return
        try:
            if isinstance(request, Rename):
                request = cleaned(request, listener.seat)
            check(request, listener.seat, table.meta, table.state)
        except (RoomError, SeatError) as exc:
            refuse(listener, exc)
            return
        if isinstance(request, SeatRequest):
            await self._seats.request(listener, request)
            return
        if isinstance(request, BotSpeed):
            await self._seats.set_bot_speed(listener, request.ms)
        elif isinstance(request, Rename):
            await self._seats.rename(request.seat, request.name)
        else:
            # A deal waits for the seated humans' client seeds (rooms/fair_deals.py).
            held = isinstance(request, NextDeal | NewMatch) and self._fair.hold(
                listener, request, table.meta, table.state, table.match_no
            )
            if held or not await self._commit(request, listener):
                return
        metrics.observe_action_latency(time.perf_counter() - command.received)

    async def _bot_move(self, command: BotMove) -> None:
        action = self._timers.move_of(command)
        if action is None:
            return
        standin = command.standin_ticket is not None
        if not await self._commit(action, None, standin=standin):
            # decide() promises a legal play; if it breaks that promise the table must not stall.
            fallback = self._timers.fallback(command.seat)
            await self._commit(fallback, None, standin=standin)

    async def _commit(
        self,
        entry: Play | Pass | NextDeal | NewMatch,
        origin: Listener | None,
        *,
        standin: bool = False,
    ) -> bool:
        """Check, persist, then announce ``entry``; False when the engine refused it."""
        table = self._table
        if isinstance(entry, NextDeal | NewMatch):
            entry = self._fair.stamp(entry, table.meta)
        try:
            commit = prepare(
                entry,
                table.meta,
                table.state,
                match_no=table.match_no,
                version=table.version,
                now=self._clock.now(),
                bots=self._timers.bots,
                standin=standin,
            )
        except EngineError as exc:
            if origin is not None:
                self._teller.refuse(origin, exc)
            else:
                log.error("table %s: bot action refused: %r", self.id, exc)
            return False
        # The write comes first: a seat never hears of an action Redis does not hold.
        await table.append(commit)
        commit.count(by_bot=origin is None)
        if isinstance(entry, NextDeal | NewMatch):
            self._fair.dealt()
        self._audience.new_version()
        if any(isinstance(event, engine.MatchEnded) for event in commit.events):
            ratings.match_finished(table.meta, table.state, table.match_no)
            unlist(self.id)
        moved = await self._seats.takeovers.take_over_seats()
        self._teller.broadcast(commit.events)
        self._seats.takeovers.seat_moved(moved, commit.events)
        self._timers.schedule()
        # Heard and handed to the bot: a table waiting for its next action need not hold
        # this version's views (the rare attach or refused bot move rebuilds them).
        self._audience.forget_views()
        return True

    def _post(self, command: Command) -> None:
        if not self.closed:
            self._inbox.put_nowait(command)

    # --- players' entropy (rooms/fair_deals.py) ---------------------------------

    async def _give_entropy(self, listener: Listener, given: GiveEntropy) -> None:
        table = self._table
        try:
            outcome = self._fair.give(listener.seat, given, table.meta, table.state, table.match_no)
        except EntropyError as exc:
            self._teller.refuse(listener, exc)
            return
        if outcome.first:
            await self._deal_first()
        elif outcome.deal is not None:
            await self._commit(outcome.deal[1], outcome.deal[0])
        elif outcome.new:
            self._teller.broadcast([])

    async def _deal_first(self) -> None:
        """Deal the table's first deal, which waited for its creator's seed (entropy.py):
        the meta keeps the seeds (there is no log entry to carry them), then all hear."""
        table = self._table
        if not table.meta.first_deal_waits:
            return
        await table.deal_first(self._fair.first_deal(table.meta))
        self._fair.dealt()
        self._teller.broadcast([])
        self._timers.schedule()
