"""The room actor: one asyncio task and one inbox per live table.

Only the actor touches the ``MatchState``.  Human requests and bot decisions
both arrive as inbox commands and go through the same ``engine.apply``.  The
room speaks in engine actions and seat views only: ``server.presenter`` turns
wire messages into requests and updates into frames.

An accepted action is appended to Redis (checked against the expected
version) before any seat hears of it; if that write fails, the in-memory state
may be ahead of Redis, so the room shuts itself down and the next connection
rebuilds the table from Redis alone.  Bots that answer at once move before
that write and are appended with it (``_answer_at_once``): one write, one
frame per socket, for an action and its instant answers.

The room also keeps the seats: who is human or bot, the turn clock and the
stand-in that plays a human's turn when the clock runs out or they have been
gone for the grace time, the host's seat controls.  Seat state lives in the
table meta, which the room writes with the action that changed it (or alone),
under the same version check.  Who listens, and what each listener hears
(views, hints, emotes), is the room's ``Audience`` (``audience.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import msgspec
from redis.exceptions import RedisError

from server import bots, engine, metrics
from server.bots import BotAction
from server.engine import EngineError, Event, NextDeal, Pass, Play, SeatView
from server.fairness import EntropyError
from server.inbox import Inbox
from server.usage import USAGE

from .audience import Audience, end_all
from .clock import SystemClock, Timer, WallClock, standin_due
from .commands import (
    AskHint,
    Attach,
    Back,
    BotMove,
    Command,
    Detach,
    Idle,
    InviteSeat,
    MakeBot,
    OpenSeat,
    Rename,
    Request,
    Resync,
    SendEmote,
    StandinDue,
    Stop,
    Submit,
    WatchLink,
)
from .entropy import (
    ENTROPY_WAIT_SECONDS,
    EntropyDue,
    EntropyRound,
    GiveEntropy,
    PublishedFairness,
    published,
)
from .log import BotSpeed, LogEntry, NewMatch, TableMeta, TableState, bot_seed, match_seed
from .names import NameRefused, clean_name
from .seating import (
    SeatError,
    SeatReason,
    claim_open_seat,
    hand_back,
    make_bot,
    mark_joined,
    on_auto,
    open_seat,
    reissue_invite,
    retired_reason,
    set_watch_link,
)
from .seats import SPECTATOR, BotSeat, Listener
from .store import Lease, StoreError, TableStore
from .tokens import hash_token, new_token
from .turns import clock_for, human_turn, meta_after, seats_settled
from .updates import (
    Closing,
    InviteIssued,
    Refused,
    RoomError,
    RoomReason,
    StateUpdate,
    TableSnapshot,
)

__all__ = ["DEFAULT_MAX_SPECTATORS", "Room", "RoomClosed"]

# Sockets watching one table (the server's ``max_spectators`` setting overrides it).
DEFAULT_MAX_SPECTATORS = 20

# The most actions one write carries: an action and the answers of the bots that
# answer at once.  Bounded, so that a table of such bots never plays a whole deal
# in one write while the people around it hear nothing.
_MAX_ANSWERS_AT_ONCE = 3

_SeatRequest = Back | InviteSeat | MakeBot | OpenSeat | WatchLink

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

    # A thousand live tables each hold one: a slotted instance keeps no attribute dict.
    __slots__ = (
        "_audience",
        "_away_since",
        "_bot_speed_ms",
        "_bot_task",
        "_bots",
        "_clock",
        "_entropy",
        "_fairness",
        "_idle_seconds",
        "_idle_timer",
        "_inbox",
        "_match_no",
        "_on_closed",
        "_standin_task",
        "_standin_timer",
        "_standin_turn",
        "_state",
        "_store",
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
    ) -> None:
        self.id = meta.id
        self.meta = meta
        self._state = table.match
        self._match_no = table.match_no
        self._bot_speed_ms = table.bot_speed_ms
        self._version = table.version
        self._turn_version = table.turn_version
        self._store = store
        # Every write goes through this lease: once another process has taken the
        # table, the store refuses it (LeaseLost) and the room closes.
        self.lease = lease
        self._idle_seconds = idle_seconds
        self._on_closed = on_closed
        self._clock: WallClock = clock or SystemClock()
        self._inbox: Inbox[Command] = Inbox()
        self._audience = Audience(max_spectators)
        self._bots: dict[int, BotSeat] = {}
        self._reseat()
        # When each human seat lost its last socket (a freshly loaded table: now).
        now = self._clock.now()
        self._away_since: dict[int, float] = dict.fromkeys(self._audience.humans, now)
        self._standin_timer: Timer | None = None
        self._standin_task: asyncio.Task[None] | None = None
        # Bumped whenever the stand-in is rescheduled: a late stand-in move is dropped.
        self._standin_turn = 0
        self._bot_task: asyncio.Task[None] | None = None
        self._idle_timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._fairness: tuple[tuple[object, ...], PublishedFairness | None] = ((), None)
        # The players' client seeds for the upcoming deal (rooms/entropy.py).
        self._entropy = EntropyRound()
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
        self._cancel_standin()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._on_closed(self)
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
            self._stand_in(command)
        elif isinstance(command, EntropyDue):
            await self._deal_parked(command.round)

    def _resync(self, listener: Listener) -> None:
        if listener in self._audience.humans.get(listener.seat, []):
            listener.push(self._state_update(listener.seat, self._snapshot(), []))

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
            reason = retired_reason(self.meta, token_hash) or SeatReason.INVITE_REVOKED
            raise SeatError(reason, "this invite no longer opens the seat")
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
        self._audience.humans[seat.seat].append(listener)
        self._away_since.pop(seat.seat, None)
        return changed or self._connected() != before

    def _detach(self, listener: Listener) -> None:
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
            self._away_since[listener.seat] = self._clock.now()
            self._schedule_standin()
        if self._connected() != before:
            self._broadcast([])
        self._arm_idle_timer()

    async def _submit(self, command: Submit) -> None:
        listener, request = command.listener, command.request
        if not listener.open:
            return
        if isinstance(request, SendEmote):
            self._emote(listener, request.emote)
            return
        if isinstance(request, GiveEntropy):
            await self._give_entropy(listener, request)
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
        if isinstance(request, Rename):
            try:
                request = Rename(seat=listener.seat, name=clean_name(request.name))
            except NameRefused as exc:
                self._refuse(listener, RoomError(RoomReason.INVALID_NAME, str(exc)))
                return
        if isinstance(request, Back | InviteSeat | MakeBot | OpenSeat | WatchLink):
            await self._seat_request(listener, request)
            return
        if isinstance(request, Play | Pass) and on_auto(self.meta.seats[listener.seat]):
            self._refuse(
                listener,
                SeatError(
                    SeatReason.SEAT_ON_AUTO,
                    "a stand-in plays this seat: say you are back first",
                ),
            )
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
        else:
            # A deal waits for the seated humans' client seeds (rooms/entropy.py).
            held = isinstance(request, NextDeal | NewMatch) and self._await_entropy(
                listener, request
            )
            if held or not await self._commit(request, listener):
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
        standin = command.standin_turn is not None
        if standin and command.standin_turn != self._standin_turn:
            return  # the seat's human came back (or the turn was rescheduled) meanwhile
        action: BotAction = command.action
        if action.seat != command.seat:
            log.error("bot on seat %d answered for seat %d", command.seat, action.seat)
            action = bots.fallback_action(self._bot_view(command.seat))
        if not await self._commit(action, None, standin=standin):
            # decide() promises a legal play; if it breaks that promise the table must not stall.
            fallback = bots.fallback_action(self._bot_view(command.seat))
            await self._commit(fallback, None, standin=standin)

    async def _commit(
        self, entry: LogEntry, origin: Listener | None, *, standin: bool = False
    ) -> bool:
        """Check, persist, then announce ``entry``; False when the engine refused it."""
        events: list[Event] = []
        new_state: engine.MatchState | None = None
        if isinstance(entry, NextDeal | NewMatch):
            entry = self._entropy.stamp(entry, self.meta)
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
            new_state = engine.new_match(self.meta.rules, seed, self.meta.deals, entry.entropy)
        # The seats' state moves with the action (streaks, invites, the next turn's clock)
        # and is written with it: a restart resumes both exactly.
        turn_version = self._turn_version if isinstance(entry, BotSpeed) else self._version + 1
        meta = meta_after(
            self.meta,
            entry,
            new_state or self._state,
            turn_version,
            self._clock.now(),
            standin=standin,
        )
        entries: list[LogEntry] = [entry]
        if isinstance(entry, Play | Pass | NextDeal):
            meta = self._answer_at_once(entries, events, meta)
            turn_version = self._version + len(entries)
        # The write comes first: a seat never hears of an action Redis does not hold.
        self._version = await self._store.append(
            self.lease, self._version, entries, None if meta == self.meta else meta
        )
        for i, accepted in enumerate(entries):
            USAGE.action_accepted()
            metrics.action_accepted(_KINDS[type(accepted)], by_bot=i > 0 or origin is None)
        self.meta = meta
        self._turn_version = turn_version
        if isinstance(entry, NextDeal | NewMatch):
            self._entropy.dealt()
        if new_state is not None:
            self._state = new_state
            self._match_no += 1
            events = [engine.DealStarted(deal_no=1, leader=new_state.deal.leader)]
        self._audience.new_version()
        self._broadcast(events)
        self._schedule_bot()
        self._schedule_standin()
        # Heard and handed to the bot: a table waiting for its next action need not hold
        # this version's views (the rare attach or refused bot move rebuilds them).
        self._audience.forget_views()
        return True

    def _answer_at_once(
        self, entries: list[LogEntry], events: list[Event], meta: TableMeta
    ) -> TableMeta:
        """Let bots that answer without a pause move now, before the write: their moves
        join ``entries`` (and their events ``events``) and go to Redis in the same write.

        Nobody outside this process hears of any of them until Redis holds them all,
        and the write lands whole or not at all, so no reader ever sees a bot's move
        without the move it answered.  Returns the meta after the last of them.
        """
        now = self._clock.now()
        while len(entries) < _MAX_ANSWERS_AT_ONCE and (bot := self._instant_bot()) is not None:
            version = self._version + len(entries)
            action = self._decide_now(bot, version)
            try:
                events += engine.apply(self._state, action)
            except EngineError:
                # decide_now promises a legal move.  Should it break that promise, the
                # turn is left to ``_schedule_bot``: the same seed decides the same move,
                # and ``_bot_move`` replaces the refused move with a legal one.
                break
            entries.append(action)
            meta = meta_after(meta, action, self._state, version + 1, now)
        return meta

    # --- seats: host controls, hand-back, meta writes -------------------------

    async def _seat_request(self, listener: Listener, request: _SeatRequest) -> None:
        actor = listener.seat
        issued: InviteIssued | None = None
        token = new_token()
        try:
            if isinstance(request, Back):
                meta = hand_back(self.meta, actor)
            elif isinstance(request, InviteSeat):
                meta = reissue_invite(self.meta, actor, request.seat, hash_token(token))
                issued = InviteIssued(self.id, request.seat, token)
            elif isinstance(request, MakeBot):
                present = self._audience.seat_has_socket(request.seat)
                meta = make_bot(self.meta, actor, request.seat, present=present)
            elif isinstance(request, OpenSeat):
                between_deals = self._state.deal.result is not None
                meta = open_seat(
                    self.meta, actor, request.seat, hash_token(token), between_deals=between_deals
                )
                issued = InviteIssued(self.id, request.seat, token)
            else:
                meta = set_watch_link(self.meta, actor, hash_token(token))
                issued = InviteIssued(self.id, None, token)
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
            self._away_since[request.seat] = self._clock.now()
        elif isinstance(request, WatchLink):
            end_all(self._audience.spectators, Closing.REVOKED)
        self._reseat()
        self._broadcast([])
        if [s.kind for s in self.meta.seats] != kinds_before:
            self._schedule_bot()
        self._schedule_standin()

    def _reseat(self) -> None:
        """Match the human seats' socket lists and the bots to the meta's seat kinds."""
        self._audience.match_seats(self.meta.seats)
        for seat in self.meta.seats:
            if seat.kind == "human":
                self._bots.pop(seat.seat, None)
                continue
            level = seat.level or "normal"
            bot = self._bots.get(seat.seat)
            if bot is None or bot.level != level:
                self._bots[seat.seat] = BotSeat(seat.seat, level)

    def _with_clock(self, meta: TableMeta) -> TableMeta:
        clock = clock_for(meta, self._state, self._turn_version, self._clock.now())
        return meta if clock == meta.clock else msgspec.structs.replace(meta, clock=clock)

    async def _save_meta(self, meta: TableMeta) -> None:
        if meta == self.meta:
            return
        await self._store.save_meta(self.lease, self._version, meta)
        self.meta = meta

    # --- the stand-in ---------------------------------------------------------

    def _cancel_standin(self) -> None:
        if self._standin_timer is not None:
            self._standin_timer.cancel()
            self._standin_timer = None
        if self._standin_task is not None:
            self._standin_task.cancel()
            self._standin_task = None

    def _schedule_standin(self) -> None:
        """Arm the stand-in for the current turn if a human has it: at the clock's end, after
        the grace time without a socket, or at once for a seat on auto."""
        self._cancel_standin()
        self._standin_turn += 1
        seat = human_turn(self.meta, self._state)
        if seat is None or self.closed:
            return
        clock = self.meta.clock
        if clock is not None and (clock.seat != seat or clock.version != self._turn_version):
            clock = None
        away = None
        # Nobody waits for a lone player, so their turns are never handed away for absence.
        if (
            self.meta.humans >= 2
            and seats_settled(self.meta)
            and not self._audience.seat_has_socket(seat)
        ):
            away = self._away_since.get(seat)
        due = standin_due(
            on_auto=on_auto(self.meta.seats[seat]),
            clock=clock,
            away_since=away,
            grace_seconds=self.meta.grace_seconds,
        )
        if due is not None:
            command = StandinDue(seat, self._standin_turn)
            self._standin_timer = self._clock.call_at(due.at, lambda: self._post(command))

    def _post(self, command: Command) -> None:
        if not self.closed:
            self._inbox.put_nowait(command)

    def _stand_in(self, command: StandinDue) -> None:
        if command.turn != self._standin_turn or human_turn(self.meta, self._state) != command.seat:
            return
        self._standin_timer = None
        seat = self.meta.seats[command.seat]
        # On auto the stand-in keeps the table's pace; after a timeout it plays at once.
        pause = self._bot_speed_ms / 1000 if on_auto(seat) else 0.0
        self._standin_task = asyncio.create_task(
            self._standin_move(
                BotSeat(seat.seat, self.meta.standin_level),
                self._bot_view(seat.seat),
                self._version,
                command.turn,
                pause,
            ),
            name=f"standin-{self.id}-{seat.seat}",
        )

    async def _standin_move(
        self, bot: BotSeat, view: SeatView, version: int, turn: int, pause: float
    ) -> None:
        action = await bot.move(view, bot_seed(self.meta.seed, bot.seat, version), pause)
        self._post(BotMove(bot.seat, version, action, standin_turn=turn))

    # --- players' entropy (rooms/entropy.py) ------------------------------------

    def _awaited(self) -> list[int]:
        """The human seats a deal waits for: those with a socket to send a seed from."""
        return [
            s.seat
            for s in self.meta.seats
            if s.kind == "human" and self._audience.seat_has_socket(s.seat)
        ]

    async def _give_entropy(self, listener: Listener, given: GiveEntropy) -> None:
        try:
            new = self._entropy.offer(listener.seat, given, self.meta, self._state, self._match_no)
        except EntropyError as exc:
            self._refuse(listener, exc)
            return
        if self._entropy.parked is not None and not self._entropy.missing(self._awaited()):
            await self._deal_parked(self._entropy.number)
        elif new:
            self._broadcast([])

    def _await_entropy(self, listener: Listener, request: NextDeal | NewMatch) -> bool:
        """Hold a request for a deal while a connected human's seed is missing (True), at
        most ENTROPY_WAIT_SECONDS; a second request while one is held is that deal too."""
        self._entropy.received(self.meta, self._state, self._match_no, len(self.meta.seats))
        if not self._entropy.starts_upcoming(request, self._state):
            return False
        if self._entropy.parked is not None:
            return True
        if not self._entropy.missing(self._awaited()):
            return False
        self._entropy.parked = (listener, request)
        due = EntropyDue(self._entropy.number)
        self._clock.call_at(self._clock.now() + ENTROPY_WAIT_SECONDS, lambda: self._post(due))
        return True

    async def _deal_parked(self, number: int) -> None:
        parked = self._entropy.parked
        if parked is not None and number == self._entropy.number:
            await self._commit(parked[1], parked[0])

    # --- emotes ---------------------------------------------------------------

    def _emote(self, listener: Listener, emote: str) -> None:
        try:
            self._audience.emote(listener, emote, self._clock.now())
        except SeatError as exc:
            self._refuse(listener, exc)

    # --- bots ---------------------------------------------------------------

    def _schedule_bot(self) -> None:
        if self._bot_task is not None:
            self._bot_task.cancel()
            self._bot_task = None
        instant = self._instant_bot()
        if instant is not None:
            # Decide now and queue the move behind whatever the inbox already holds,
            # without a task per turn.
            action = self._decide_now(instant, self._version)
            self._inbox.put_nowait(BotMove(instant.seat, self._version, action))
            return
        deal = self._state.deal
        bot = self._bots.get(deal.turn)
        if deal.result is not None or bot is None:
            return
        self._bot_task = asyncio.create_task(
            self._bot_turn(bot, self._bot_view(bot.seat), self._version),
            name=f"bot-{self.id}-{bot.seat}",
        )

    def _instant_bot(self) -> BotSeat | None:
        """The bot whose turn it is if it answers at once: no pause to wait and under a
        millisecond of thinking."""
        deal = self._state.deal
        bot = self._bots.get(deal.turn)
        if deal.result is not None or bot is None:
            return None
        if self._bot_speed_ms != 0 or bot.level not in bots.INLINE_LEVELS:
            return None
        return bot

    def _decide_now(self, bot: BotSeat, version: int) -> BotAction:
        """The move of ``bot`` (one that answers at once) on the table at ``version``."""
        seed = bot_seed(self.meta.seed, bot.seat, version, self.meta.secret)
        return bots.decide_now(bot.level, seed, self._bot_view(bot.seat))

    async def _bot_turn(self, bot: BotSeat, view: SeatView, version: int) -> None:
        seed = bot_seed(self.meta.seed, bot.seat, version, self.meta.secret)
        action = await bot.move(view, seed, self._bot_speed_ms / 1000)
        if not self.closed:
            self._inbox.put_nowait(BotMove(bot.seat, version, action))

    # --- what seats hear ------------------------------------------------------

    def _bot_view(self, seat: int) -> SeatView:
        # Built once per turn (a refused move's fallback rebuilds it): nothing to cache.
        return engine.seat_view(self._state, seat, hints=engine.BOT_HINTS)

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
        fair = self._commitments()
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

    def _commitments(self) -> PublishedFairness:
        """This match's deal commitments and client seeds so far, its seed and salt once
        over, and the upcoming deal's commitment (server.fairness, rooms/entropy.py)."""
        state = self._state
        received = self._entropy.received(self.meta, state, self._match_no, len(self.meta.seats))
        key = (
            self._match_no,
            state.deal.deal_no,
            state.deal.result is not None,
            state.winners is not None,
            received,
        )
        cached = self._fairness[1]
        if self._fairness[0] != key or cached is None:
            cached = published(self.meta, state, self._match_no, received)
            self._fairness = (key, cached)
        return cached

    def _state_update(self, seat: int, snapshot: TableSnapshot, events: list[Event]) -> StateUpdate:
        return self._audience.state_update(self._state, self._version, seat, snapshot, events)

    def _broadcast(self, events: list[Event]) -> None:
        self._audience.broadcast(self._state, self._version, self._snapshot(), events)


def _renamed(meta: TableMeta, seat: int, name: str) -> TableMeta:
    """``meta`` with ``seat`` called ``name``."""
    seats = [msgspec.structs.replace(s, name=name) if s.seat == seat else s for s in meta.seats]
    return msgspec.structs.replace(meta, seats=seats)
