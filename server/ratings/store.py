"""Ratings, statistics and leaderboards in Redis, each step idempotent on its own.

A finished match is settled in three steps, every one safe to repeat, so a job
that dies anywhere (a SIGKILL, a lost Redis connection, an owner change) is simply
run again by whoever has it next and counts once:

1. **Freeze** (the table's slot): the seats' players are read from the table's
   side key, their ratings read and the new ones computed; the result is written
   with ``SET NX``.  A retry reads the result frozen first instead of computing a
   second one, so every later step applies the same numbers.
2. **Apply** (each player's slot): one script sets the marker
   ``pdk:player:{<id>}:rated:<table>:<match>`` with ``NX`` and, only if it was not
   there, adds the match to the player's statistics and the rating change to the
   player's rating.  The change is added (not the result written), so two matches
   of one player that end at once at two tables both count.
3. **Rank** (the leaderboard's slot): the player's rating as it now stands is
   written to the preset's sorted set.  Writing a value, not adding one, is
   idempotent by itself.

No step touches two slots, so it works the same on Redis Cluster, where a
player's keys, a table's and a leaderboard's live on different nodes.

Keys:

- ``pdk:{<table>}:players``: hash seat -> ``<player id> <seat token hash>``, written
  when a player takes a seat through the lobby; a seat counts for that player only
  while its token is still the one the player was given.
- ``pdk:{<table>}:rated:<match>``: the frozen result (JSON), kept ``retention``.
- ``pdk:player:{<id>}:stats``: hash ``matches``, ``deals``, ``deals_won``,
  ``shut_outs``, ``bombs``, ``points``, per preset and track ``mu:<p>:<t>``,
  ``sigma:<p>:<t>``, ``n:<p>:<t>``, and ``last`` (the latest rating change, JSON).
- ``pdk:{board}:<preset>:<track>``: sorted set player id -> shown rating, the best
  ``board_size`` kept.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from openskill.models import PlackettLuce

from server.engine.rules import PRESETS
from server.rooms.store import Redis

from .record import MatchRecord

__all__ = ["BoardRow", "RatingStore", "Track", "shown"]

# A player's statistics key is the identity's (server.players.identity deletes it).
_STATS = "pdk:player:{{{}}}:stats"
_PLAYER = "pdk:player:{{{}}}"


class Track(StrEnum):
    """Matches among people only are rated apart from matches with bots."""

    PEOPLE = "people"
    BOTS = "bots"


def shown(mu: float, sigma: float) -> float:
    """The rating shown and ranked: the model's conservative estimate mu - 3 sigma (0
    for a new player), one decimal."""
    return round(mu - 3 * sigma, 1)


def board_key(preset: str, track: Track | str) -> str:
    return f"pdk:{{board}}:{preset}:{track}"


def players_key(table: str) -> str:
    return f"pdk:{{{table}}}:players"


def _result_key(table: str, match_no: int) -> str:
    return f"pdk:{{{table}}}:rated:{match_no}"


def _marker_key(player: str, table: str, match_no: int) -> str:
    return f"pdk:player:{{{player}}}:rated:{table}:{match_no}"


# KEYS: marker, stats, player.  ARGV: retention, stats ttl, points, deals won,
# shut-outs, bombs, deals, rating suffix ("" for none), mu change, new sigma, last.
_APPLY = """
if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('HINCRBY', KEYS[2], 'matches', 1)
redis.call('HINCRBY', KEYS[2], 'points', ARGV[3])
redis.call('HINCRBY', KEYS[2], 'deals_won', ARGV[4])
redis.call('HINCRBY', KEYS[2], 'shut_outs', ARGV[5])
redis.call('HINCRBY', KEYS[2], 'bombs', ARGV[6])
redis.call('HINCRBY', KEYS[2], 'deals', ARGV[7])
local suffix = ARGV[8]
if suffix ~= '' then
  if redis.call('HEXISTS', KEYS[2], 'mu:' .. suffix) == 0 then
    redis.call('HSET', KEYS[2], 'mu:' .. suffix, ARGV[12])
  end
  redis.call('HINCRBYFLOAT', KEYS[2], 'mu:' .. suffix, ARGV[9])
  redis.call('HSET', KEYS[2], 'sigma:' .. suffix, ARGV[10])
  redis.call('HINCRBY', KEYS[2], 'n:' .. suffix, 1)
  redis.call('HSET', KEYS[2], 'last', ARGV[11])
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1
"""


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One leaderboard line."""

    rank: int
    player: str
    name: str
    colour: str
    rating: float
    matches: int


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RatingStore:
    """Settle finished matches; read profiles and leaderboards."""

    def __init__(
        self,
        redis: Redis,
        *,
        retention_seconds: int,
        player_ttl_seconds: int,
        board_size: int,
        table_ttl_seconds: int,
    ) -> None:
        self._redis = redis
        self._retention = retention_seconds
        self._player_ttl = player_ttl_seconds
        self._board_size = board_size
        self._table_ttl = table_ttl_seconds
        self._model = PlackettLuce()
        self._apply = redis.register_script(_APPLY)

    # ------------------------------------------------------------- seating

    async def seat_player(self, table: str, seat: int, player: str, token_hash: str) -> None:
        """Record that ``player`` took ``seat`` of ``table`` with the token ``token_hash``."""
        key = players_key(table)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, str(seat), f"{player} {token_hash}")
            pipe.expire(key, self._table_ttl)
            await pipe.execute()

    async def seated(self, table: str) -> dict[int, tuple[str, str]]:
        """Seat -> (player, token hash) as recorded for ``table``."""
        raw = await self._redis.hgetall(players_key(table))
        found: dict[int, tuple[str, str]] = {}
        for seat, value in raw.items():
            player, _, token = _text(value).partition(" ")
            found[int(_text(seat))] = (player, token)
        return found

    # ------------------------------------------------------------ settling

    async def settle(self, record: MatchRecord) -> dict[int, dict[str, Any]]:
        """Count ``record`` once (all three steps); returns the frozen result per seat."""
        result = await self.freeze(record)
        for seat, line in result.items():
            applied = await self._apply_one(record, seat, line)
            if applied >= 0 and line.get("track"):
                await self._rank(line["player"], record.preset, line["track"])
        return result

    async def freeze(self, record: MatchRecord) -> dict[int, dict[str, Any]]:
        """Step 1: the match's rating changes, computed once and kept."""
        key = _result_key(record.table, record.match_no)
        stored = await self._redis.get(key)
        if stored is not None:
            return {int(k): v for k, v in json.loads(stored).items()}
        seated = await self.seated(record.table)
        players: dict[int, str] = {}
        for line in record.seats:
            entry = seated.get(line.seat)
            # A seat whose token changed since (an invite handed it to someone else)
            # is no longer that player's.
            if line.human and entry is not None and entry[1] == line.token_hash:
                players[line.seat] = entry[0]
        # One identity, one seat: a player found on two seats is rated on neither.
        twice = {p for p, n in Counter(players.values()).items() if n > 1}
        players = {s: p for s, p in players.items() if p not in twice}
        result = await self._compute(record, players)
        encoded = json.dumps({str(k): v for k, v in result.items()})
        if not await self._redis.set(key, encoded, nx=True, ex=self._retention):
            stored = await self._redis.get(key)
            if stored is not None:
                return {int(k): v for k, v in json.loads(stored).items()}
        return result

    async def _compute(
        self, record: MatchRecord, players: dict[int, str]
    ) -> dict[int, dict[str, Any]]:
        rated = record.preset in PRESETS
        track = Track.PEOPLE if record.human_only else Track.BOTS
        suffix = f"{record.preset}:{track}"
        teams = []
        for line in record.seats:
            player = players.get(line.seat)
            mu = sigma = None
            if player is not None and rated:
                mu_raw, sigma_raw = await self._redis.hmget(
                    _STATS.format(player), [f"mu:{suffix}", f"sigma:{suffix}"]
                )
                if mu_raw is not None and sigma_raw is not None:
                    mu, sigma = float(mu_raw), float(sigma_raw)
            # Bots and seats without an identity play at the model's new-player rating
            # and are never changed.
            teams.append([self._model.rating(mu=mu, sigma=sigma)])
        points = [line.points for line in record.seats]
        # Rank by match points, ties sharing a place (0 is first).
        ranks = [float(sum(1 for q in points if q > p)) for p in points]
        after = self._model.rate(teams, ranks=ranks) if rated and players else teams
        result: dict[int, dict[str, Any]] = {}
        for line, before, new in zip(record.seats, teams, after, strict=True):
            player = players.get(line.seat)
            if player is None:
                continue
            entry: dict[str, Any] = {
                "player": player,
                "points": line.points,
                "deals_won": line.deals_won,
                "shut_outs": line.shut_outs,
                "bombs": line.bombs,
                "deals": record.deals,
                "track": str(track) if rated else "",
            }
            if rated:
                entry |= {
                    "mu0": before[0].mu,
                    "sigma0": before[0].sigma,
                    "mu1": new[0].mu,
                    "sigma1": new[0].sigma,
                }
            result[line.seat] = entry
        return result

    async def _apply_one(self, record: MatchRecord, seat: int, line: dict[str, Any]) -> int:
        """Step 2 for one player: -1 when the player is gone, 0 if counted before."""
        player = line["player"]
        suffix = f"{record.preset}:{line['track']}" if line["track"] else ""
        last = ""
        if suffix:
            last = json.dumps(
                {
                    "table": record.table,
                    "match": record.match_no,
                    "seat": seat,
                    "preset": record.preset,
                    "track": line["track"],
                    "before": shown(line["mu0"], line["sigma0"]),
                    "after": shown(line["mu1"], line["sigma1"]),
                }
            )
        result = await self._apply(
            keys=[
                _marker_key(player, record.table, record.match_no),
                _STATS.format(player),
                _PLAYER.format(player),
            ],
            args=[
                self._retention,
                self._player_ttl,
                line["points"],
                line["deals_won"],
                line["shut_outs"],
                line["bombs"],
                line["deals"],
                suffix,
                repr(line.get("mu1", 0.0) - line.get("mu0", 0.0)),
                repr(line.get("sigma1", 0.0)),
                last,
                repr(line.get("mu0", 0.0)),
            ],
        )
        return int(result)

    async def _rank(self, player: str, preset: str, track: str) -> None:
        """Step 3: the player's rating as it stands now, on the preset's board."""
        suffix = f"{preset}:{track}"
        mu, sigma = await self._redis.hmget(
            _STATS.format(player), [f"mu:{suffix}", f"sigma:{suffix}"]
        )
        if mu is None or sigma is None:
            return
        key = board_key(preset, track)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {player: shown(float(mu), float(sigma))})
            # Only the best ``board_size`` are kept: the board's memory is bounded.
            pipe.zremrangebyrank(key, 0, -(self._board_size + 1))
            await pipe.execute()

    # ------------------------------------------------------------- reading

    async def profile(self, player: str, *, own: bool = False) -> dict[str, Any]:
        """A player's statistics and ratings; the table of the last change only for
        the player themselves (``own``): others learn no table id from a profile."""
        raw = {
            _text(k): _text(v)
            for k, v in (await self._redis.hgetall(_STATS.format(player))).items()
        }
        matches = int(raw.get("matches", 0))
        stats = {
            "matches": matches,
            "deals": int(raw.get("deals", 0)),
            "deals_won": int(raw.get("deals_won", 0)),
            "shut_outs": int(raw.get("shut_outs", 0)),
            "bombs": int(raw.get("bombs", 0)),
            "average_points": round(int(raw.get("points", 0)) / matches, 1) if matches else 0.0,
        }
        ratings = []
        for field, value in sorted(raw.items()):
            if not field.startswith("n:"):
                continue
            suffix = field[2:]
            preset, _, track = suffix.partition(":")
            mu, sigma = float(raw[f"mu:{suffix}"]), float(raw[f"sigma:{suffix}"])
            ratings.append(
                {
                    "preset": preset,
                    "track": track,
                    "rating": shown(mu, sigma),
                    "mu": round(mu, 3),
                    "sigma": round(sigma, 3),
                    "matches": int(value),
                }
            )
        last = json.loads(raw["last"]) if "last" in raw else None
        if last is not None:
            shown_keys = ("match", "preset", "track", "before", "after") + (
                ("table",) if own else ()
            )
            last = {k: last[k] for k in shown_keys}
            last["change"] = round(last["after"] - last["before"], 1)
        return {"stats": stats, "ratings": ratings, "last": last}

    async def leaderboard(self, preset: str, track: Track, limit: int) -> list[BoardRow]:
        """The best ``limit`` of the preset's board; players gone since leave it."""
        key = board_key(preset, track)
        top: list[Any] = await self._redis.zrevrange(key, 0, limit - 1, withscores=True)
        if not top:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            for member, _ in top:
                pipe.hmget(_PLAYER.format(_text(member)), ["name", "colour"])
                pipe.hget(_STATS.format(_text(member)), f"n:{preset}:{track}")
            rows: list[Any] = await pipe.execute()
        board: list[BoardRow] = []
        gone: list[str] = []
        for i, (member, score) in enumerate(top):
            fields: list[Any] = rows[2 * i]
            name, colour = fields
            n = rows[2 * i + 1]
            player = _text(member)
            if name is None:
                gone.append(player)
                continue
            board.append(
                BoardRow(
                    len(board) + 1,
                    player,
                    _text(name),
                    _text(colour) if colour is not None else "",
                    float(score),
                    int(n) if n is not None else 0,
                )
            )
        if gone:
            await self._redis.zrem(key, *gone)
        return board

    async def forget(self, player: str) -> None:
        """Take a deleted player off every board (their statistics go with the identity)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for preset in PRESETS:
                for track in Track:
                    pipe.zrem(board_key(preset, track), player)
            await pipe.execute()
