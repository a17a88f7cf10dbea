"""Creating a table: the ``POST /api/tables`` body, its checks, and the stored meta.

Every choice is checked against its one source: presets and match lengths
against the engine, rule options against ``engine.Rules``, bot levels against
``server.bots.LEVELS``, the bot speed against ``log.MAX_BOT_SPEED_MS``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from server import bots, engine

from .clock import (
    DEFAULT_GRACE_SECONDS,
    check_grace_seconds,
    check_turn_seconds,
    default_turn_seconds,
)
from .entropy import first_commitment
from .log import MAX_BOT_SPEED_MS, SeatMeta, TableMeta
from .names import BOT_NAMES, MAX_RAW_NAME_CHARS, clean_name, human_name
from .store import TableStore
from .tokens import hash_token, invite_path, new_table_id, new_token, valid_table_id

__all__ = [
    "BOT_NAMES",
    "CreateTableRequest",
    "CreatedSeat",
    "CreatedTable",
    "RuleOptions",
    "TableLifetime",
    "create_table",
    "delete_tables",
    "human_name",
]


class RuleOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Single house-rule overrides on top of the preset (unset fields keep the preset's).

    The allowed values are ``engine.Rules``'s: the overridden rules are checked
    by converting them to ``Rules``.
    """

    removed_ace: str | None = None
    first_play_three_spades: bool | None = None
    later_leader: str | None = None
    split_bombs: bool | None = None
    bomb_payment: str | None = None


def _one_of(field: str, value: Any, allowed: Any) -> None:
    if value not in allowed:
        choices = ", ".join(str(a) for a in allowed)
        raise ValueError(f"{field} must be one of {choices}, not {value!r}")


class CreateTableRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The ``POST /api/tables`` body; every field has a default."""

    rules: str = "classic"
    options: RuleOptions = RuleOptions()
    deals: int = 1
    bots: list[str] | None = None
    bot_speed_ms: Annotated[int, msgspec.Meta(ge=0, le=MAX_BOT_SPEED_MS)] = 800
    humans: Annotated[int, msgspec.Meta(ge=1, le=3)] = 1
    name: Annotated[str, msgspec.Meta(max_length=MAX_RAW_NAME_CHARS)] = "You"
    # Fixes the deals (for tests, replays and bug reports); random when absent.
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] | None = None
    # Seconds per human turn (0: no clock); absent: none alone, 30 with friends.
    turn_seconds: int | None = None
    # Seconds without a socket during one's turn before the stand-in plays it.
    grace_seconds: int = DEFAULT_GRACE_SECONDS
    standin_level: str = "normal"
    # The creator's client sends client seeds: the first deal waits for its seed,
    # which answers the answer's ``commitment`` right after the join (rooms/entropy.py).
    sends_seeds: bool = False

    def __post_init__(self) -> None:
        # msgspec reports a ValueError raised here as a ValidationError of the body.
        _one_of("rules", self.rules, engine.PRESETS)
        _one_of("deals", self.deals, engine.MATCH_LENGTHS)
        for level in self.bots or ():
            _one_of("a bot level", level, bots.LEVELS)
        _one_of("standin_level", self.standin_level, bots.LEVELS)


class CreatedSeat(msgspec.Struct, frozen=True):
    """A human seat of a new table: its secret token and the invite link that carries it."""

    seat: int
    token: str
    invite: str


class CreatedTable(msgspec.Struct, frozen=True):
    """The ``POST /api/tables`` answer: the table id, its human seats, and the
    commitment to its first deal (a creator's client seed answers it)."""

    table: str
    seats: list[CreatedSeat]
    commitment: str


def _rules(request: CreateTableRequest) -> engine.Rules:
    overrides = {
        name: value
        for name in RuleOptions.__struct_fields__
        if (value := getattr(request.options, name)) is not None
    }
    base = engine.PRESETS[request.rules]
    try:
        rules = msgspec.convert(msgspec.structs.asdict(base) | overrides, engine.Rules)
    except msgspec.ValidationError as exc:
        raise ValueError(f"options: {exc}") from None
    # A table that differs from its preset must not be shown under the preset's name.
    return rules if rules == base else msgspec.structs.replace(rules, preset="custom")


def build_table(request: CreateTableRequest) -> tuple[TableMeta, list[CreatedSeat]]:
    """A new table's meta and its human seats' tokens; raises ``ValueError`` when the
    bot list does not fit the seats or a time is out of range."""
    turn_seconds = (
        request.turn_seconds
        if request.turn_seconds is not None
        else default_turn_seconds(request.humans)
    )
    check_turn_seconds(turn_seconds)
    check_grace_seconds(request.grace_seconds)
    host_name = clean_name(request.name)  # NameRefused is a ValueError
    bot_seats = 3 - request.humans
    levels: list[str] = list(request.bots) if request.bots is not None else ["normal"] * bot_seats
    if len(levels) != bot_seats:
        raise ValueError(
            f"{request.humans} human seat(s) leave {bot_seats} bot seat(s), "
            f"but {len(levels)} bot level(s) were given"
        )
    table_id = new_table_id()
    seats: list[SeatMeta] = []
    created: list[CreatedSeat] = []
    for seat in range(3):
        if seat < request.humans:
            token = new_token()
            name = host_name if seat == 0 else human_name(seat)
            seats.append(SeatMeta(seat=seat, kind="human", name=name, token_hash=hash_token(token)))
            created.append(
                CreatedSeat(seat=seat, token=token, invite=invite_path(table_id, seat, token))
            )
        else:
            level = levels[seat - request.humans]
            seats.append(SeatMeta(seat=seat, kind="bot", name=BOT_NAMES[seat], level=level))
    meta = TableMeta(
        id=table_id,
        rules=_rules(request),
        seed=request.seed if request.seed is not None else secrets.randbits(63),
        # A chosen seed fixes the deals (replays, bug reports); otherwise the deals come
        # from a secret nobody sees until each match ends (server.fairness).
        secret="" if request.seed is not None else secrets.token_hex(32),
        deals=request.deals,
        seats=seats,
        bot_speed_ms=request.bot_speed_ms,
        created_at=time.time(),
        turn_seconds=turn_seconds,
        grace_seconds=request.grace_seconds,
        standin_level=request.standin_level,
        first_deal_waits=request.sends_seeds,
    )
    return meta, created


async def create_table(
    store: TableStore, request: CreateTableRequest, *, max_tables: int | None = None
) -> CreatedTable:
    """Build the table and store it; raises ``ValueError`` for a request that does not
    fit (nothing is stored), ``TooManyTables`` when ``max_tables`` are stored, and
    ``StoreError``/``RedisError`` when it cannot be stored."""
    meta, seats = build_table(request)
    await store.create(meta, max_tables=max_tables)
    return CreatedTable(table=meta.id, seats=seats, commitment=first_commitment(meta))


@dataclass(frozen=True, slots=True)
class TableLifetime:
    """How long a table stays in Redis, by how much it was played.

    A table nobody played at (version 0) lives ``unplayed_seconds`` from its
    creation or its last join; each entry of its log (every action, a bot's
    too) adds ``per_action_seconds``, up to ``most_seconds`` (``--table-ttl``).
    So tables created and left (a flood of creations) are gone within minutes,
    and only play buys a table days.  The values come from the settings
    (``--unjoined-table-ttl``, ``--table-ttl-per-action``, ``--table-ttl``).
    """

    unplayed_seconds: int
    per_action_seconds: int
    most_seconds: int

    def seconds(self, version: int) -> int:
        """The expiry, in seconds from now, of a table at ``version`` just written."""
        grown = self.unplayed_seconds + max(0, version) * self.per_action_seconds
        return max(1, min(self.most_seconds, grown))


async def delete_tables(store: TableStore, table_ids: Iterable[str]) -> dict[str, bool]:
    """Delete each table (an operator's decision): id -> whether it was there.  An id
    that is not a table id is reported absent without touching Redis."""
    found: dict[str, bool] = {}
    for table_id in table_ids:
        found[table_id] = valid_table_id(table_id) and await store.delete(table_id)
    return found
