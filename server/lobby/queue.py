"""Quick match: a queue per rules preset and match length, paired three at a time.

The queue lives in Redis, so any process may take a player's join, poll or leave.
Every step is one Lua script, so pairing is atomic across processes: a player is
popped from the queue and given a seat in the same step, and ``where`` (one key per
player) says the one place a player is, queued or seated, never two.  All keys share
the hash tag ``{mm}``, so each script stays in one slot on Redis Cluster (the queues
are small and each step is microseconds of Redis time; ``bench/quick_match.py``):

- ``pdk:{mm}:q:<queue>``: sorted set, queued player -> when they joined (ms);
- ``pdk:{mm}:seen``: sorted set, every queued player -> when last heard from (ms);
- ``pdk:{mm}:entry:<player>``: the player's name, colour and seat token's hash;
- ``pdk:{mm}:where:<player>``: ``q:<queue>`` or ``t:<table>:<seat>``;
- ``pdk:{mm}:match:<table>``: the group a table was made for (JSON), so that any
  process can create the table if the one that paired them died first;
- fillable tables (a table started with bots that later players of its queue may
  join, ``server.lobby.fillable``): ``pdk:{mm}:fill:<queue>``, sorted set, table ->
  when it was listed (ms), oldest filled first; ``pdk:{mm}:fills``, the same for
  every queue (its size is bounded by ``fill_max``); ``pdk:{mm}:fillq``, hash,
  table -> its queue; ``pdk:{mm}:bots:<table>``, list of its bot seats not yet given
  (expires after ``fill_ttl_ms``: the table is unlisted with it);
  ``pdk:{mm}:taken:<table>:<seat>``: who was given that bot seat (JSON ``[player,
  entry]``), which the table's owner reads when the player's socket joins;
  ``pdk:{mm}:given:<table>``, sorted set, a bot seat given but not yet claimed by
  its player's socket -> until when it waits for that socket (ms, ``fill_claim_ms``
  after it was given).  The owner claims the seat when the socket joins
  (``server.lobby.fillable``); a seat still unclaimed past its time is offered
  again by the next join of the queue (its ``taken`` and the player's ``where`` go),
  so a player who was given a seat and closed the tab does not keep it from others.

Each step first drops players not heard from for ``drop_ms`` (a closed tab stops
polling), then pairs: three or more queued are seated three at a time, oldest
first; a queue whose oldest player has waited ``wait_ms`` is seated as it is, with
bots in the missing seats, and that table is listed as fillable.  A join finds a
fillable table of its queue first: it pops one of its bot seats and the player is
seated there at once (``where`` says so), in the same script, so a seat is given to
exactly one player and nobody is in two places.  ``where``, ``match`` and ``taken``
records expire after ``seat_ttl_ms`` unless refreshed by the player's polls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from server import engine
from server.rooms.store import Redis

__all__ = [
    "UNLIST", "Group", "Matchmaker", "Member", "Place", "given_key", "queue_name", "taken_key",
]  # fmt: skip

# KEYS[1]: the queue's key (it routes the script; every key shares the tag).
# Shared head: purge(now, drop_ms) and pair(queue, now, wait_ms, ttl_ms, table).
_HEAD = """
local P = 'pdk:{mm}:'
-- The fillable set's bound and its entries' lifetime (set from each script's ARGV).
local FILL = {max = 0, ttl = 0, claim = 0}
local function unlist(table_id)
  local q = redis.call('HGET', P .. 'fillq', table_id)
  if q then redis.call('ZREM', P .. 'fill:' .. q, table_id) end
  redis.call('HDEL', P .. 'fillq', table_id)
  redis.call('ZREM', P .. 'fills', table_id)
  redis.call('DEL', P .. 'bots:' .. table_id)
  redis.call('DEL', P .. 'given:' .. table_id)
end
-- Whether table ``t`` still offers a seat or waits on a given one's socket (both
-- keys expire with the table's listing).
local function offered(t)
  return redis.call('EXISTS', P .. 'bots:' .. t, P .. 'given:' .. t) > 0
end
local function list_fillable(queue, table_id, humans, now)
  if FILL.max <= 0 then return end
  if redis.call('ZCARD', P .. 'fills') >= FILL.max then
    -- Entries whose bot seats expired make room; the set is at most FILL.max long.
    for _, t in ipairs(redis.call('ZRANGE', P .. 'fills', 0, -1)) do
      if not offered(t) then unlist(t) end
    end
    if redis.call('ZCARD', P .. 'fills') >= FILL.max then return end
  end
  for seat = humans, 2 do redis.call('RPUSH', P .. 'bots:' .. table_id, seat) end
  redis.call('PEXPIRE', P .. 'bots:' .. table_id, FILL.ttl)
  redis.call('HSET', P .. 'fillq', table_id, queue)
  redis.call('ZADD', P .. 'fill:' .. queue, now, table_id)
  redis.call('ZADD', P .. 'fills', now, table_id)
end
-- Whether ``who`` sits at table ``t`` already (its group, or a bot seat given before).
local function sits_at(t, who)
  local record = redis.call('GET', P .. 'match:' .. t)
  if record then
    for _, m in ipairs(cjson.decode(record).members) do
      if m[1] == who then return true end
    end
  end
  for seat = 0, 2 do
    local taken = redis.call('GET', P .. 'taken:' .. t .. ':' .. seat)
    if taken and cjson.decode(taken)[1] == who then return true end
  end
  return false
end
-- Bot seats of table ``t`` given before ``now`` minus the claim time whose player's
-- socket never came: offered again (the player's ``where`` and ``taken`` go).
local function reoffer(t, now)
  local gkey = P .. 'given:' .. t
  local late = redis.call('ZRANGEBYSCORE', gkey, '-inf', now)
  if #late == 0 then return end
  local life = redis.call('PTTL', gkey)
  local bots = P .. 'bots:' .. t
  for _, seat in ipairs(late) do
    local tkey = P .. 'taken:' .. t .. ':' .. seat
    local taken = redis.call('GET', tkey)
    if taken then
      local wkey = P .. 'where:' .. cjson.decode(taken)[1]
      if redis.call('GET', wkey) == 't:' .. t .. ':' .. seat then redis.call('DEL', wkey) end
      redis.call('DEL', tkey)
    end
    redis.call('ZREM', gkey, seat)
    redis.call('RPUSH', bots, seat)
  end
  redis.call('PEXPIRE', bots, life > 0 and life or FILL.ttl)
end
-- A bot seat of the oldest fillable table of ``queue`` that ``who`` does not sit at
-- already: their place, or nil.  At most FILL.max tables are looked at.
local function fill(queue, who, entry, ttl, now)
  if FILL.max <= 0 then return nil end
  local fkey = P .. 'fill:' .. queue
  for _, t in ipairs(redis.call('ZRANGE', fkey, 0, FILL.max - 1)) do
    reoffer(t, now)
    local bots = P .. 'bots:' .. t
    local seat = nil
    if redis.call('EXISTS', bots) == 1 and not sits_at(t, who) then
      -- The given seat waits for its socket as long as the table is listed, at most.
      local gkey = P .. 'given:' .. t
      local life = redis.call('PTTL', bots)
      seat = redis.call('LPOP', bots)
      redis.call('ZADD', gkey, now + FILL.claim, seat)
      redis.call('PEXPIRE', gkey, life > 0 and life or FILL.ttl)
    end
    if not offered(t) then
      -- Expired, or its last bot seat was given and claimed: the table leaves the set.
      redis.call('ZREM', fkey, t)
      unlist(t)
    end
    if seat then
      local where = 't:' .. t .. ':' .. seat
      redis.call('SET', P .. 'where:' .. who, where, 'PX', ttl)
      redis.call('SET', P .. 'taken:' .. t .. ':' .. seat, cjson.encode({who, entry}), 'PX', ttl)
      return where
    end
  end
  return nil
end
local function now_ms(given)
  if given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function purge(now, drop_ms)
  local gone = redis.call('ZRANGEBYSCORE', P .. 'seen', '-inf', now - drop_ms, 'LIMIT', 0, 200)
  for _, who in ipairs(gone) do
    local w = redis.call('GET', P .. 'where:' .. who)
    if w and string.sub(w, 1, 2) == 'q:' then
      redis.call('ZREM', P .. 'q:' .. string.sub(w, 3), who)
      redis.call('DEL', P .. 'where:' .. who)
    end
    redis.call('DEL', P .. 'entry:' .. who)
    redis.call('ZREM', P .. 'seen', who)
  end
end
local function pair(queue, now, wait_ms, ttl_ms, table_id)
  local qkey = P .. 'q:' .. queue
  local n = redis.call('ZCARD', qkey)
  if n == 0 then return nil end
  local take = 0
  if n >= 3 then
    take = 3
  else
    local oldest = redis.call('ZRANGE', qkey, 0, 0, 'WITHSCORES')
    if now - tonumber(oldest[2]) >= wait_ms then take = n end
  end
  if take == 0 then return nil end
  local popped = redis.call('ZPOPMIN', qkey, take)
  local members = {}
  for i = 1, #popped, 2 do
    local who = popped[i]
    local seat = #members
    local entry = redis.call('GET', P .. 'entry:' .. who)
    table.insert(members, {who, entry or '{}'})
    redis.call('SET', P .. 'where:' .. who, 't:' .. table_id .. ':' .. seat, 'PX', ttl_ms)
    redis.call('DEL', P .. 'entry:' .. who)
    redis.call('ZREM', P .. 'seen', who)
  end
  local record = cjson.encode({queue = queue, members = members})
  redis.call('SET', P .. 'match:' .. table_id, record, 'PX', ttl_ms)
  if take < 3 then
    list_fillable(queue, table_id, take, now)
    -- Kept while the table is offered: a player is never given a seat of their own table.
    redis.call('PEXPIRE', P .. 'match:' .. table_id, math.max(ttl_ms, FILL.ttl))
  end
  return record
end
"""

# ARGV: player, queue, now ('' for Redis's TIME), entry JSON, wait_ms, drop_ms,
# seat_ttl_ms, most queued, a fresh table id, fill_max, fill_ttl_ms, fill_claim_ms.
# Returns {status, where, match JSON or ''}: status 'queued', 'filled' (a bot seat of
# a fillable table), 'busy' or 'already'.
_JOIN = (
    _HEAD
    + """
local who, queue = ARGV[1], ARGV[2]
local now = now_ms(ARGV[3])
FILL.max, FILL.ttl, FILL.claim = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
purge(now, tonumber(ARGV[6]))
local w = redis.call('GET', P .. 'where:' .. who)
if w then return {'already', w, ''} end
local filled = fill(queue, who, ARGV[4], tonumber(ARGV[7]), now)
if filled then return {'filled', filled, ''} end
if redis.call('ZCARD', P .. 'seen') >= tonumber(ARGV[8]) then return {'busy', '', ''} end
redis.call('ZADD', P .. 'q:' .. queue, now, who)
redis.call('ZADD', P .. 'seen', now, who)
redis.call('SET', P .. 'entry:' .. who, ARGV[4], 'PX', tonumber(ARGV[7]))
redis.call('SET', P .. 'where:' .. who, 'q:' .. queue, 'PX', tonumber(ARGV[7]))
local made = pair(queue, now, tonumber(ARGV[5]), tonumber(ARGV[7]), ARGV[9])
return {'queued', redis.call('GET', P .. 'where:' .. who), made or ''}
"""
)

# ARGV: player, now, wait_ms, drop_ms, seat_ttl_ms, a fresh table id, fill_max,
# fill_ttl_ms, fill_claim_ms.  Returns {where or '', match JSON or '', ms waited or -1}.
_POLL = (
    _HEAD
    + """
local who = ARGV[1]
local now = now_ms(ARGV[2])
FILL.max, FILL.ttl, FILL.claim = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local ttl = tonumber(ARGV[5])
local w = redis.call('GET', P .. 'where:' .. who)
if w and string.sub(w, 1, 2) == 'q:' then
  redis.call('ZADD', P .. 'seen', 'XX', now, who)
end
purge(now, tonumber(ARGV[4]))
w = redis.call('GET', P .. 'where:' .. who)
if not w then return {'', '', -1} end
if string.sub(w, 1, 2) == 't:' then
  redis.call('PEXPIRE', P .. 'where:' .. who, ttl)
  return {w, '', -1}
end
local queue = string.sub(w, 3)
local joined = redis.call('ZSCORE', P .. 'q:' .. queue, who)
local made = pair(queue, now, tonumber(ARGV[3]), ttl, ARGV[6])
redis.call('PEXPIRE', P .. 'where:' .. who, ttl)
redis.call('PEXPIRE', P .. 'entry:' .. who, ttl)
return {redis.call('GET', P .. 'where:' .. who), made or '', now - tonumber(joined or now)}
"""
)

# ARGV: a table.  It takes no more quick-match players.
UNLIST = (
    _HEAD
    + """
unlist(ARGV[1])
return 1
"""
)

# ARGV: player.  Returns what the player left: 'queue', 'table' or 'nothing'.
_LEAVE = """
local P = 'pdk:{mm}:'
local who = ARGV[1]
local w = redis.call('GET', P .. 'where:' .. who)
if not w then return 'nothing' end
redis.call('DEL', P .. 'where:' .. who)
if string.sub(w, 1, 2) == 'q:' then
  redis.call('ZREM', P .. 'q:' .. string.sub(w, 3), who)
  redis.call('ZREM', P .. 'seen', who)
  redis.call('DEL', P .. 'entry:' .. who)
  return 'queue'
end
return 'table'
"""


def queue_name(rules: str, deals: int) -> str:
    """The queue of a rules preset and match length; ``ValueError`` for others."""
    if rules not in engine.PRESETS:
        raise ValueError(f"rules must be one of {', '.join(engine.PRESETS)}, not {rules!r}")
    if deals not in engine.MATCH_LENGTHS:
        lengths = ", ".join(str(d) for d in engine.MATCH_LENGTHS)
        raise ValueError(f"deals must be one of {lengths}, not {deals!r}")
    return f"{rules}:{deals}"


@dataclass(frozen=True, slots=True)
class Member:
    """A queued player as a table is made for them."""

    player: str
    name: str
    colour: str
    token_hash: str


@dataclass(frozen=True, slots=True)
class Group:
    """Players seated together (seat i is ``members[i]``), the rest of the seats bots."""

    table: str
    rules: str
    deals: int
    members: tuple[Member, ...]


@dataclass(frozen=True, slots=True)
class Place:
    """Where a player is: queued (``table`` None, ``waited_ms`` so far) or seated."""

    queue: str | None
    table: str | None
    seat: int | None
    waited_ms: int = 0
    # Seated at a bot's seat of a table already playing: theirs from the next deal.
    filled: bool = False


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _place(where: str, waited_ms: int = 0, *, filled: bool = False) -> Place | None:
    if where.startswith("q:"):
        return Place(where[2:], None, None, max(0, waited_ms))
    if where.startswith("t:"):
        table, _, seat = where[2:].rpartition(":")
        return Place(None, table, int(seat), filled=filled)
    return None


def taken_key(table: str, seat: int) -> str:
    """Who was given bot seat ``seat`` of fillable ``table`` (JSON ``[player, entry]``)."""
    return f"pdk:{{mm}}:taken:{table}:{seat}"


def given_key(table: str) -> str:
    """The bot seats of fillable ``table`` given but not yet claimed by their player's
    socket (sorted set: seat -> until when it waits for that socket, ms)."""
    return f"pdk:{{mm}}:given:{table}"


def group_from_record(table: str, record: str) -> Group:
    """The group a ``match`` record describes."""
    data = json.loads(record)
    rules, _, deals = str(data["queue"]).partition(":")
    members = tuple(
        Member(
            player=str(who),
            name=str(entry.get("name", "")),
            colour=str(entry.get("colour", "")),
            token_hash=str(entry.get("hash", "")),
        )
        for who, raw in data["members"]
        for entry in [json.loads(raw)]
    )
    return Group(table, rules, int(deals), members)


class Matchmaker:
    """The quick-match queues (see the module's docstring); ``now_ms`` None reads
    Redis's clock, so processes on hosts whose clocks disagree still agree on waits."""

    def __init__(
        self,
        redis: Redis,
        *,
        wait_ms: int,
        drop_ms: int,
        seat_ttl_ms: int,
        max_queued: int,
        fill_max: int = 200,
        fill_ttl_ms: int = 900_000,
        fill_claim_ms: int = 60_000,
    ) -> None:
        self._redis = redis
        self._fill = (fill_max, fill_ttl_ms, fill_claim_ms)
        self._wait = wait_ms
        self._drop = drop_ms
        self._ttl = seat_ttl_ms
        self._max = max_queued
        self._join = redis.register_script(_JOIN)
        self._poll = redis.register_script(_POLL)
        self._leave = redis.register_script(_LEAVE)

    async def join(
        self,
        player: Member,
        queue: str,
        table_id: str,
        *,
        now_ms: int | None = None,
    ) -> tuple[Place | None, Group | None, bool]:
        """Queue ``player`` (or find where they already are): their place, the group
        this step seated (to make its table, id ``table_id``), and whether the player
        was already queued or seated (then nothing changed)."""
        entry = json.dumps(
            {"name": player.name, "colour": player.colour, "hash": player.token_hash}
        )
        status, where, made = await self._join(
            keys=[f"pdk:{{mm}}:q:{queue}"],
            args=[
                player.player, queue, "" if now_ms is None else now_ms, entry,
                self._wait, self._drop, self._ttl, self._max, table_id, *self._fill,
            ],
        )  # fmt: skip
        status = _text(status)
        if status == "busy":
            return None, None, False
        group = group_from_record(table_id, _text(made)) if _text(made) else None
        return _place(_text(where), filled=status == "filled"), group, status == "already"

    async def poll(
        self, player: str, table_id: str, *, now_ms: int | None = None
    ) -> tuple[Place | None, Group | None]:
        """Where ``player`` is now (None: nowhere), after marking them heard from and
        pairing their queue; and the group this step seated, if any."""
        where, made, waited = await self._poll(
            keys=["pdk:{mm}:seen"],
            args=[
                player, "" if now_ms is None else now_ms, self._wait, self._drop,
                self._ttl, table_id, *self._fill,
            ],
        )  # fmt: skip
        group = group_from_record(table_id, _text(made)) if _text(made) else None
        return _place(_text(where), int(waited)), group

    async def leave(self, player: str) -> str:
        """Take ``player`` out of the queue or away from their quick-match seat:
        ``"queue"``, ``"table"`` or ``"nothing"``."""
        return _text(await self._leave(keys=["pdk:{mm}:seen"], args=[player]))

    async def token_hash_of(self, player: str, place: Place) -> str | None:
        """The seat-token hash ``player`` joined with, for their ``place``."""
        if place.table is not None and place.seat is not None:
            group = await self.group_of(place.table)
            if group is None or place.seat >= len(group.members):
                taken = await self._redis.get(taken_key(place.table, place.seat))
                if taken is None:
                    return None
                who, entry = json.loads(_text(taken))
                return str(json.loads(entry).get("hash")) if who == player else None
            member = group.members[place.seat]
            return member.token_hash if member.player == player else None
        entry = await self._redis.get(f"pdk:{{mm}}:entry:{player}")
        return None if entry is None else str(json.loads(_text(entry)).get("hash"))

    async def group_of(self, table_id: str) -> Group | None:
        """The group a table was made for (None once its record expired)."""
        record = await self._redis.get(f"pdk:{{mm}}:match:{table_id}")
        return None if record is None else group_from_record(table_id, _text(record))
