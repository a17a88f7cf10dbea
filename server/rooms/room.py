"""The room actor: one asyncio task and one inbox per live table.

Only the actor touches the ``MatchState``.  Human requests and bot decisions
both arrive as inbox commands and go through the same ``engine.apply``.  The
room speaks in engine actions and seat views only: ``server.presenter`` turns
wire messages into requests and updates into frames.

An accepted action is appended to Redis (checked against the expected
version) before any seat hears of it; if that write fails, the in-memory state
may be ahead of Redis, so the room shuts itself down and the next connection
rebuilds the table from Redis alone.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import msgspec
from redis.exceptions import RedisError

from server import bots, engine, fairness, metrics
from server.bots import BotAction
from server.engine import EngineError, Event, NextDeal, Pass, Play, SeatView
from server.usage import USAGE

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
    Stop,
    Submit,
)
from .log import (
    BotSpeed,
    LogEntry,
    NewMatch,
    TableMeta,
    TableState,
    bot_seed,
    match_seed,
)
from .names import NameRefused, clean_name
from .seats import BotSeat, Listener
from .store import Lease, StoreError, TableStore
from .updates import (
    Closing,
    HintAnswer,
    Refused,
    RoomError,
    RoomReason,
    StateUpdate,
    TableSnapshot,
)

__all__ = ["Room", "RoomClosed"]

_KINDS: dict[type, str] = {
    Play: "play",
    Pass: "pass",
    NextDeal: "next_deal",
    NewMatch: "new_match",
    BotSpeed: "bot_speed",
}

log = logging.getLogger(__name__)


class RoomClosed(Exception):
    """The room stopped (idle, shutdown or a storage failure); load it again."""


class Room:
    """One live table: the only owner of its ``MatchState``, fed through one inbox."""

    def __init__(
        self,
        meta: TableMeta,
        table: TableState,
        store: TableStore,
        lease: Lease,
        *,
        idle_seconds: float,
        on_closed: Callable[[Room], None],
    ) -> None:
        self.id = meta.id
        self.meta = meta
        self._state = table.match
        self._match_no = table.match_no
        self._bot_speed_ms = table.bot_speed_ms
        self._version = table.version
        self._store = store
        # Every write goes through this lease: once another process has taken the
        # table, the store refuses it (LeaseLost) and the room closes.
        self.lease = lease
        self._idle_seconds = idle_seconds
        self._on_closed = on_closed
        self._inbox: asyncio.Queue[Command] = asyncio.Queue()
        self._humans: dict[int, list[Listener]] = {
            s.seat: [] for s in meta.seats if s.kind == "human"
        }
        self._bots: dict[int, BotSeat] = {
            s.seat: BotSeat(s.seat, s.level or "normal") for s in meta.seats if s.kind == "bot"
        }
        # Per-version caches: a seat's view, and where its hint cycle stands.
        self._views: dict[int, SeatView] = {}
        self._hint_next: dict[int, int] = {}
        self._all_hints: dict[int, list[list[str]]] = {}
        self._bot_task: asyncio.Task[None] | None = None
        self._idle_timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._fairness: tuple[tuple[int, int, bool], tuple[str, ...], fairness.Reveal | None]
        self._fairness = ((-1, -1, False), (), None)
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

    # --- called from connection handlers (never block on the actor) -----------

    def start(self) -> None:
        """Start the actor task (the registry does, once)."""
        self._task = asyncio.create_task(self._run(), name=f"room-{self.id}")

    async def attach(self, listener: Listener) -> None:
        """Seat ``listener``; its full state is queued to it.  Raises ``RoomClosed``."""
        if self.closed:
            raise RoomClosed(self.id)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait(Attach(listener, done))
        await done

    def detach(self, listener: Listener) -> None:
        """Unseat ``listener`` (its socket has gone); other seats hear if its seat empties."""
        if not self.closed:
            self._inbox.put_nowait(Detach(listener))

    def resync(self, listener: Listener) -> None:
        """Send ``listener`` its full state again (a forwarded socket that missed frames)."""
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
            self._schedule_bot()
            self._arm_idle_timer()
            while True:
                command = await self._inbox.get()
                if isinstance(command, Stop):
                    why = command.why
                    break
                if isinstance(command, Idle):
                    self._idle_timer = None
                    if not self._any_connection():
                        why = Closing.IDLE
                        break
                    continue
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
        if self._bot_task is not None:
            self._bot_task.cancel()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._on_closed(self)
        for listeners in self._humans.values():
            for listener in listeners:
                listener.end(why)
        while not self._inbox.empty():
            command = self._inbox.get_nowait()
            if isinstance(command, Attach) and not command.done.done():
                command.done.set_exception(RoomClosed(self.id))
            elif isinstance(command, Submit):
                command.listener.end(why)

    async def _handle(self, command: Command) -> None:
        if isinstance(command, Attach):
            self._attach(command)
        elif isinstance(command, Detach):
            self._detach(command.listener)
        elif isinstance(command, Submit):
            await self._submit(command)
        elif isinstance(command, BotMove):
            await self._bot_move(command)
        elif isinstance(command, Resync):
            self._resync(command.listener)

    def _resync(self, listener: Listener) -> None:
        if listener in self._humans.get(listener.seat, []):
            listener.push(self._state_update(listener.seat, self._snapshot(), []))

    def _attach(self, command: Attach) -> None:
        listener = command.listener
        if command.done.done():  # the handler gave up waiting (socket gone)
            return
        before = self._connected()
        self._humans[listener.seat].append(listener)
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        command.done.set_result(None)
        if self._connected() != before:
            self._broadcast([])
        else:
            listener.push(self._state_update(listener.seat, self._snapshot(), []))

    def _detach(self, listener: Listener) -> None:
        listeners = self._humans.get(listener.seat, [])
        if listener not in listeners:
            return
        before = self._connected()
        listeners.remove(listener)
        if self._connected() != before:
            self._broadcast([])
        self._arm_idle_timer()

    async def _submit(self, command: Submit) -> None:
        listener, request = command.listener, command.request
        if not listener.open:
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
            self._hint(listener)
            return
        if isinstance(request, Rename):
            try:
                request = Rename(seat=listener.seat, name=clean_name(request.name))
            except NameRefused as exc:
                self._refuse(listener, RoomError(RoomReason.INVALID_NAME, str(exc)))
                return
        if isinstance(request, NewMatch) and self._state.winners is None:
            self._refuse(
                listener, RoomError(RoomReason.MATCH_NOT_OVER, "the match is still going on")
            )
            return
        if isinstance(request, BotSpeed):
            await self._set_bot_speed(request.ms)
        elif isinstance(request, Rename):
            await self._set_name(request.seat, request.name)
        elif not await self._commit(request, listener):
            return
        metrics.observe_action_latency(time.perf_counter() - command.received)

    async def _set_bot_speed(self, ms: int) -> None:
        """A table setting, kept in the meta: changing it never grows the log."""
        if ms != self._bot_speed_ms:
            meta = msgspec.structs.replace(self.meta, bot_speed_ms=ms, bot_speed_from=self._version)
            await self._store.save_meta(self.lease, self._version, meta)
            self.meta = meta
            self._bot_speed_ms = ms
            metrics.action_accepted("bot_speed", by_bot=False)
            if self._bot_task is not None:
                self._schedule_bot()  # the bot now thinking waits the new pause
        self._broadcast([])

    async def _set_name(self, seat: int, name: str) -> None:
        """A seat's name is a table setting too: kept in the meta, the log unchanged."""
        meta = _renamed(self.meta, seat, name)
        if meta != self.meta:
            await self._store.save_meta(self.lease, self._version, meta)
            self.meta = meta
        self._broadcast([])

    async def _bot_move(self, command: BotMove) -> None:
        if command.version != self._version:
            return  # decided against an older state; the current turn has its own task
        action: BotAction = command.action
        if action.seat != command.seat:
            log.error("bot on seat %d answered for seat %d", command.seat, action.seat)
            action = bots.fallback_action(self._view(command.seat))
        if not await self._commit(action, None):
            # decide() promises a legal play; if it breaks that promise the table must not stall.
            await self._commit(bots.fallback_action(self._view(command.seat)), None)

    async def _commit(self, entry: LogEntry, origin: Listener | None) -> bool:
        """Check, persist, then announce ``entry``; False when the engine refused it."""
        events: list[Event] = []
        new_state: engine.MatchState | None = None
        if isinstance(entry, Play | Pass | NextDeal):
            try:
                events = engine.apply(self._state, entry)
            except EngineError as exc:
                if origin is not None:
                    self._refuse(origin, exc)
                else:
                    log.error("table %s: bot action refused: %r", self.id, exc)
                return False
        elif isinstance(entry, NewMatch):
            seed = match_seed(self.meta.seed, self._match_no + 1, self.meta.secret)
            new_state = engine.new_match(self.meta.rules, seed, self.meta.deals)
        # The write comes first: a seat never hears of an action Redis does not hold.
        self._version = await self._store.append(self.lease, self._version, entry)
        USAGE.action_accepted()
        metrics.action_accepted(_KINDS[type(entry)], by_bot=origin is None)
        if new_state is not None:
            self._state = new_state
            self._match_no += 1
            events = [engine.DealStarted(deal_no=1, leader=new_state.deal.leader)]
        self._views.clear()
        self._hint_next.clear()
        self._all_hints.clear()
        self._broadcast(events)
        self._schedule_bot()
        return True

    # --- bots ---------------------------------------------------------------

    def _schedule_bot(self) -> None:
        if self._bot_task is not None:
            self._bot_task.cancel()
            self._bot_task = None
        deal = self._state.deal
        bot = self._bots.get(deal.turn)
        if deal.result is not None or bot is None:
            return
        self._bot_task = asyncio.create_task(
            self._bot_turn(bot, self._view(bot.seat), self._version),
            name=f"bot-{self.id}-{bot.seat}",
        )

    async def _bot_turn(self, bot: BotSeat, view: SeatView, version: int) -> None:
        seed = bot_seed(self.meta.seed, bot.seat, version, self.meta.secret)
        action = await bot.move(view, seed, self._bot_speed_ms / 1000)
        if not self.closed:
            self._inbox.put_nowait(BotMove(bot.seat, version, action))

    # --- what seats hear ------------------------------------------------------

    def _view(self, seat: int) -> SeatView:
        view = self._views.get(seat)
        if view is None:
            view = self._views[seat] = engine.seat_view(self._state, seat)
        return view

    def _hints(self, seat: int) -> list[list[str]]:
        # The view carries only the first few hints; cycling reaches every legal play.
        hints = self._all_hints.get(seat)
        if hints is None:
            hints = self._all_hints[seat] = engine.hints_for(self._state, seat)
        return hints

    def _hint(self, listener: Listener) -> None:
        hints = self._hints(listener.seat)
        if not hints:
            listener.push(HintAnswer(version=self._version, cards=[], index=0, count=0))
            return
        index = self._hint_next.get(listener.seat, 0) % len(hints)
        self._hint_next[listener.seat] = index + 1
        listener.push(
            HintAnswer(version=self._version, cards=hints[index], index=index, count=len(hints))
        )

    def _refuse(self, listener: Listener, error: RoomError | EngineError) -> None:
        listener.push(Refused(version=self._version, error=error))

    def _connected(self) -> tuple[bool, ...]:
        return tuple(bool(self._humans.get(s.seat)) for s in self.meta.seats)

    def _any_connection(self) -> bool:
        return any(self._humans.values())

    def _arm_idle_timer(self) -> None:
        if self._any_connection() or self._idle_timer is not None:
            return
        self._idle_timer = asyncio.get_running_loop().call_later(
            self._idle_seconds, self._inbox.put_nowait, Idle()
        )

    def _snapshot(self) -> TableSnapshot:
        commitments, reveal = self._commitments()
        return TableSnapshot(
            meta=self.meta,
            connected=self._connected(),
            bot_speed_ms=self._bot_speed_ms,
            match_no=self._match_no,
            commitments=commitments,
            reveal=reveal,
        )

    def _commitments(self) -> tuple[tuple[str, ...], fairness.Reveal | None]:
        """This match's deal commitments so far, and its seed and salt once it is over."""
        state = self._state
        key = (self._match_no, state.deal.deal_no, state.winners is not None)
        if self._fairness[0] != key:
            salt = fairness.match_salt(self.meta.secret or self.meta.seed, self._match_no)
            commitments = tuple(
                fairness.commitment(state.seed, salt, n) for n in range(1, key[1] + 1)
            )
            reveal = fairness.Reveal(state.seed, salt) if key[2] else None
            self._fairness = (key, commitments, reveal)
        return self._fairness[1], self._fairness[2]

    def _state_update(self, seat: int, snapshot: TableSnapshot, events: list[Event]) -> StateUpdate:
        return StateUpdate(
            version=self._version, table=snapshot, view=self._view(seat), events=events
        )

    def _broadcast(self, events: list[Event]) -> None:
        snapshot = self._snapshot()
        for seat, listeners in self._humans.items():
            if not listeners:
                continue
            update = self._state_update(seat, snapshot, events)
            for listener in list(listeners):
                listener.push(update)


def _renamed(meta: TableMeta, seat: int, name: str) -> TableMeta:
    """``meta`` with ``seat`` called ``name``."""
    seats = [msgspec.structs.replace(s, name=name) if s.seat == seat else s for s in meta.seats]
    return msgspec.structs.replace(meta, seats=seats)
