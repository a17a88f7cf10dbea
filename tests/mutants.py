"""Hand-made mutants of the engine, the bots and the rooms: does the suite notice each bug?

    python tests/mutants.py [--only engine|bots|rooms|cluster] [--name SUBSTRING] [--start N]
                            [--timeout 600] [--workdir DIR]

Each mutant is one realistic bug (a rule dropped, a comparison off by one, a
proof ignored), written as an exact text replacement in one file.  The script
copies the working tree to a temporary directory once, then for each mutant
edits the copy, runs the tests that should catch it (``pytest -x``), and puts
the file back.  A mutant is "killed" when the tests fail and "survived" when
they pass; survivors are either gaps to close with a test or bugs no unit test
can see (strength, speed), listed with the reason in docs/architecture.md,
"Mutation survivors".  It is not part of the suite: it runs the suite ~50 times.
One pytest at a time, so it costs one core.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
ENGINE_TESTS = ["tests/engine", "tests/bots/test_lockstep.py"]
BOTS_TESTS = ["tests/bots"]
# The "rooms" group: rooms, protocol, presenter, the socket side and the app.
ROOMS_TESTS = ["tests/rooms"]
WIRE_TESTS = [
    "tests/server/test_presenter.py",
    "tests/server/test_protocol.py",
    "tests/server/test_socket_connection.py",
]
APP_TESTS = ["tests/server/test_app.py"]
DELTA_TESTS = ["tests/server/test_deltas.py", "tests/server/test_delta_frames.py"]
# The socket's own limits (join timeout, frame size, flooding) are tested apart.
SOCKET_LIMIT_TESTS = ["tests/server/test_limits.py"]
# The "cluster" group: real server processes on one Redis, talking over its bus.
CLUSTER_TESTS = [
    "tests/cluster/test_table_handle.py",
    "tests/cluster/test_forward.py",
    "tests/cluster/test_node.py",
    "tests/cluster/test_processes.py",
]
# Handover: ownership follows the players (server/cluster/node.py, forward.py).
HANDOVER_TESTS = [
    "tests/cluster/test_route_handover_bus.py",
    "tests/cluster/test_route_affinity.py",
]
# Provably fair shuffles: the verifier on tampered records, the players' entropy.
VERIFY_TESTS = ["tests/server/test_verify.py"]
ENTROPY_TESTS = ["tests/rooms/test_entropy.py", "tests/server/test_fairness.py"]
NAMES_TESTS = ["tests/rooms/test_names.py"]
ORIGIN_TESTS = ["tests/server/test_origins.py"]
# Who is closed when the server is full, and the log's own limits.
GUARD_TESTS = ["tests/server/test_connection_guard.py", "tests/server/test_eviction.py"]
LOG_TESTS = ["tests/server/test_logs.py"]
# Budgets shared through Redis (server.budgets, server.seat_limits).
BUDGET_TESTS = ["tests/server/test_budgets.py", "tests/server/test_seat_limits.py"]


class Mutant(NamedTuple):
    name: str
    path: str
    old: str
    new: str
    tests: list[str]


def engine(name: str, path: str, old: str, new: str) -> Mutant:
    return Mutant(name, f"server/engine/{path}", old, new, ENGINE_TESTS)


def bots(name: str, path: str, old: str, new: str) -> Mutant:
    return Mutant(name, f"server/bots/{path}", old, new, BOTS_TESTS)


MUTANTS = [
    # -- the flow of play and scoring (RankDeal) --
    engine(
        "shut-out doubling dropped",
        "rankdeal.py",
        "pay = sizes[s] * (2 if shut_out[s] else 1)",
        "pay = sizes[s]",
    ),
    engine(
        "bomb pays 10 instead of 20",
        "rankdeal.py",
        "points[bomber] = BOMB_POINTS * (SEATS - 1)",
        "points[bomber] = BOMB_POINTS",
    ),
    engine(
        "immediate bomb never pays",
        "rankdeal.py",
        "            if self.pay_immediately:\n                self._pay(t)",
        "            if self.pay_immediately:\n                pass",
    ),
    engine(
        "winning bomb going out does not pay",
        "rankdeal.py",
        "            if self.pending == t:\n                self._pay(t)",
        "            if self.pending == t:\n                pass",
    ),
    engine(
        "pending bomb not paid when its trick clears",
        "rankdeal.py",
        "            if self.pending >= 0:\n                self._pay(self.pending)",
        "            if self.pending >= 0:\n                pass",
    ),
    engine(
        "beaten winning bomb still pays",
        "rankdeal.py",
        "                self.pending = t\n",
        "                self._pay(t)\n",
    ),
    engine(
        "trick clears after one pass",
        "rankdeal.py",
        "if self.passes == SEATS - 1:",
        "if self.passes >= 1:",
    ),
    engine(
        "cleared trick led by the next seat, not the last player",
        "rankdeal.py",
        "            self.turn = self.leader\n            return True",
        "            self.turn = (self.turn + 1) % SEATS\n            return True",
    ),
    engine(
        "a play does not reset the pass count",
        "rankdeal.py",
        "        self.leader = t\n        self.passes = 0",
        "        self.leader = t",
    ),
    engine(
        "a player is never marked as having played",
        "rankdeal.py",
        "        self.played_any[t] = True\n",
        "",
    ),
    # -- what beats what, and readings --
    engine(
        "an equal bomb beats a bomb",
        "combos.py",
        "return table.top + 1 if table.kind == BOMB else 0",
        "return table.top if table.kind == BOMB else 0",
    ),
    engine(
        "following ignores the length",
        "combos.py",
        "if kind == table.kind and length == table.length:",
        "if kind == table.kind:",
    ),
    engine(
        "an equal top beats",
        "combos.py",
        "    if kind == table.kind and length == table.length:\n        return table.top + 1",
        "    if kind == table.kind and length == table.length:\n        return table.top",
    ),
    engine(
        "four-card straights",
        "combos.py",
        "if n >= 5 and len(present) == n and _consecutive(present):",
        "if n >= 4 and len(present) == n and _consecutive(present):",
    ),
    engine(
        "the 2 joins runs",
        "combos.py",
        "return ranks[-1] - ranks[0] == len(ranks) - 1 and ranks[-1] <= TOP_RUN_RANK",
        "return ranks[-1] - ranks[0] == len(ranks) - 1",
    ),
    engine(
        "aces may form a bomb",
        "combos.py",
        "TOP_BOMB_RANK = KING",
        "TOP_BOMB_RANK = ACE",
    ),
    engine(
        "short forms rank above full ones",
        "combos.py",
        "return (r.kind == BOMB, not r.short, r.length, r.top)",
        "return (r.kind == BOMB, r.short, r.length, r.top)",
    ),
    engine(
        "a trio with one extra is a full trio+two",
        "combos.py",
        "                out.append(Reading(TRIO_TWO, 1, t, True))",
        "                out.append(Reading(TRIO_TWO, 1, t, n == 3))",
    ),
    engine(
        "card count off by a byte",
        "combos.py",
        "return ((pairs * _BYTE_SUM) >> 48) & 255",
        "return ((pairs * _BYTE_SUM) >> 40) & 255",
    ),
    engine(
        "subset test without guards",
        "combos.py",
        "return ((whole | _GUARDS) - part) & _GUARDS == _GUARDS",
        "return (whole - part) >= 0",
    ),
    # -- legal plays --
    engine(
        "last-card rule dropped",
        "moves.py",
        "            singles = singles[-1:]",
        "            pass",
    ),
    engine(
        "bombs always splittable",
        "moves.py",
        "    if split_bombs:\n        return 0",
        "    if True:\n        return 0",
    ),
    engine(
        "first play need not hold a 3",
        "moves.py",
        "        plays = {p for p in plays if count_at(p, 0)}",
        "        pass",
    ),
    engine(
        "short forms never legal",
        "moves.py",
        "            if table is None or beats(reading, table):\n                plays.add(hand)",
        "            if False:\n                plays.add(hand)",
    ),
    engine(
        "airplanes of two trios not generated",
        "moves.py",
        "for start, length in _runs(avail, 3, 2):",
        "for start, length in _runs(avail, 3, 3):",
    ),
    engine(
        "trio kickers from locked bombs",
        "moves.py",
        "for kick in submultisets(free - trio, 2):",
        "for kick in submultisets(hand - trio, 2):",
    ),
    # -- apply --
    engine(
        "rule B checked on the rank, not the card",
        "game.py",
        "        if deal.needs_three_of_spades and THREE_OF_SPADES not in cards:\n"
        "            raise IllegalActionError(",
        "        if False:\n            raise IllegalActionError(",
    ),
    engine(
        "must-beat not enforced on a pass",
        "game.py",
        "    if core.legal():\n        raise IllegalActionError(Reason.MUST_BEAT",
        "    if False:\n        raise IllegalActionError(Reason.MUST_BEAT",
    ),
    engine(
        "a tie for the most wins only the first",
        "game.py",
        "state.winners = [s for s in range(SEATS) if state.totals[s] == best]",
        "state.winners = [state.totals.index(best)]",
    ),
    engine(
        "later deals led by the holder of the 3 of spades always",
        "game.py",
        'if state.rules.later_leader == "winner":',
        'if state.rules.later_leader == "never":',
    ),
    engine(
        "the trick is kept after it clears",
        "game.py",
        "        deal.table = None\n        deal.trick = []",
        "        deal.table = None",
    ),
    engine(
        "bomb event not sent",
        "game.py",
        "    if core.paid >= 0:\n        events.append(BombPaid(seat=core.paid, "
        "points=bomb_payment(core.paid)))\n    if len(hand) == 1:",
        "    if len(hand) == 1:",
    ),
    engine(
        "memo never evicts",
        "memo.py",
        "                if len(cache) >= maxsize:\n"
        "                    _drop_oldest(cache, evict)\n"
        "                cache[arg] = value",
        "                cache[arg] = value",
    ),
    engine(
        "hints do not put going out first",
        "hints.py",
        "        return (0,)",
        "        return (2,)",
    ),
    engine(
        "hints count every rank the play touches as a broken group",
        "hints.py",
        "rank_mask(hand - play)).bit_count()",
        "rank_mask(hand)).bit_count()",
    ),
    engine(
        "a view's public fields are shifted by one",
        "view.py",
        "        list(deal.bomb_points),\n        list(state.totals),",
        "        list(state.totals),\n        list(deal.bomb_points),",
    ),
    engine(
        "bomb points counted twice into the match totals",
        "game.py",
        "        state.totals[s] += deal_totals[s]\n",
        "        state.totals[s] += deal_totals[s] + deal.bomb_points[s]\n",
    ),
    # -- bots: planning a hand --
    bots(
        "the planner never tries a run",
        "plan.py",
        "_RUNS = ((1, 5, STRAIGHT), (2, 2, PAIR_RUN), (3, 2, AIRPLANE))",
        "_RUNS: tuple[tuple[int, int, int], ...] = ()",
    ),
    bots(
        "the planner keeps the last of equal splits",
        "plan.py",
        "                if cost < best_cost:",
        "                if cost <= best_cost:",
    ),
    bots(
        "the planner counts a bomb as a weak group",
        "plan.py",
        "_BOMB_COST = group_cost(BOMB, 1, 0)",
        "_BOMB_COST = 1.0",
    ),
    # -- bots: what a seat knows --
    bots(
        "observation keeps no pending bomb",
        "observe.py",
        "pending = view.leader if table is not None and table.kind == BOMB and not pay_now else -1",
        "pending = -1",
    ),
    bots(
        "unseen cards include the played ones",
        "observe.py",
        "unseen=counts_of_table_deck(view.rules) - hand - played,",
        "unseen=counts_of_table_deck(view.rules) - hand,",
    ),
    bots(
        "history forgets the last-card situation",
        "observe.py",
        "nxt_one = sizes[(move.seat + 1) % SEATS] == 1",
        "nxt_one = False",
    ),
    bots(
        "a pass proves nothing",
        "sampler.py",
        "        return not legal_plays(then, c.table, c.next_has_one, False, split)",
        "        return True",
    ),
    bots(
        "forced singles bound nothing",
        "sampler.py",
        "            bound = min(bound, c.forced_top)",
        "            pass",
    ),
    bots(
        "own moves taken as proofs",
        "sampler.py",
        "        if move.seat == obs.seat:\n            continue",
        "        if move.seat == -1:\n            continue",
    ),
    bots(
        "the seat's own cards dealt to opponents",
        "sampler.py",
        "        hands[self.b] = self.obs.unseen - hand_a",
        "        hands[self.b] = self.obs.unseen + self.obs.hand - hand_a",
    ),
    # -- bots: how they choose --
    bots(
        "easy does not go out when it can",
        "policy.py",
        "    if hand in legal:\n        return hand\n    if sit.table is None:",
        "    if sit.table is None:",
    ),
    bots(
        "normal ignores an opponent about to go out",
        "policy.py",
        "                score += 3.0",
        "                score += 0.0",
    ),
    bots(
        "normal values bombs negatively",
        "policy.py",
        "        return -1.5",
        "        return 1.5",
    ),
    bots(
        "nothing is ever beatable",
        "plan.py",
        "    size = NEVER\n    need = lowest_beating_top(table, BOMB, 1)",
        "    return NEVER\n    need = lowest_beating_top(table, BOMB, 1)",
    ),
    bots(
        "trios absorb no kickers",
        "plan.py",
        "        if capacity:\n            weak",
        "        if False:\n            weak",
    ),
    bots(
        "search picks the worst candidate",
        "search.py",
        "best = max(range(len(cands)), key=lambda i: (totals[i], -i))",
        "best = min(range(len(cands)), key=lambda i: (totals[i], -i))",
    ),
    bots(
        "endgame minimises the mover's score",
        "search.py",
        "if best is None or v[t] > best[t]:",
        "if best is None or v[t] < best[t]:",
    ),
    bots(
        "search ignores its clock",
        "search.py",
        "if self.ticks % CLOCK_EVERY == 0 and self.clock() >= self.deadline:",
        "if False:",
    ),
    bots(
        "scored bomb points kept in the endgame memo",
        "search.py",
        "    sim.bomb = [0] * SEATS\n    return sim",
        "    return sim",
    ),
    bots(
        "strong sampler seed ignores the position",
        "strong.py",
        'return random.Random(f"strong/{seed}/{view.deal_no}/{len(view.moves)}")',
        'return random.Random(f"strong/{seed}/{view.deal_no}")',
    ),
    bots(
        "strong think time with max instead of min",
        "__init__.py",
        "return min(DEFAULT_BUDGET, max(0.01, 0.8 * budget))",
        "return max(DEFAULT_BUDGET, max(0.01, 0.8 * budget))",
    ),
    bots(
        "strong plays as normal",
        "strong.py",
        "        return to_action(view, play)\n",
        "        from .levels import NormalBot\n\n"
        "        return NormalBot(self.seed).choose(view)\n",
    ),
    bots(
        "strong does not pause the collector",
        "strong.py",
        "    gc.disable()\n",
        "",
    ),
    bots(
        "legality check ignores the 3 of spades",
        "__init__.py",
        "    if view.must_include is not None and view.must_include not in action.cards:\n"
        "        return False",
        "    if False:\n        return False",
    ),
    # -- rooms: the room actor --
    Mutant(
        "stale-minus-one",
        "server/rooms/room.py",
        "        if command.version != table.version:\n            refuse(",
        "        if command.version not in (table.version, table.version - 1):\n"
        "            refuse(",
        ROOMS_TESTS,
    ),
    Mutant(
        "stale-future-accepted",
        "server/rooms/room.py",
        "        if command.version != table.version:\n            refuse(",
        "        if command.version < table.version:\n            refuse(",
        ROOMS_TESTS,
    ),
    Mutant(
        "bot-move-version-unchecked",
        "server/rooms/timers.py",
        "        if move.version != table.version:\n            return None  # decided",
        "        if False:\n            return None  # decided",
        ROOMS_TESTS,
    ),
    Mutant(
        "new-match-while-running",
        "server/rooms/gate.py",
        "isinstance(request, NewMatch) and state.winners is None",
        "isinstance(request, NewMatch) and state.winners is not None",
        ROOMS_TESTS,
    ),
    Mutant(
        "hint-no-cycle",
        "server/rooms/audience.py",
        "self._hint_next[seat] = index + 1",
        "self._hint_next[seat] = index",
        ROOMS_TESTS,
    ),
    Mutant(
        "hint-cycle-survives-commit",
        "server/rooms/audience.py",
        "        self._hint_next.clear()\n",
        "",
        ROOMS_TESTS,
    ),
    Mutant(
        "views-survive-commit",
        "server/rooms/audience.py",
        "        self._views.clear()\n        self._public = None\n",
        "        self._public = None\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "hints-survive-commit",
        "server/rooms/audience.py",
        "        self._all_hints.clear()\n",
        "",
        ROOMS_TESTS,
    ),
    Mutant(
        "refused-action-stored",
        "server/rooms/commit.py",
        "    events = engine.apply(state, entry)\n",
        "    try:\n"
        "        events = engine.apply(state, entry)\n"
        "    except engine.EngineError:\n"
        "        events = []\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "announce-before-store",
        "server/rooms/room.py",
        "        # The write comes first: a seat never hears of an action Redis does not hold.\n",
        "        self._teller.broadcast(commit.events)\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "join-not-announced",
        "server/rooms/seat_changes.py",
        "        return changed or self._teller.connected() != before",
        "        return changed",
        ROOMS_TESTS,
    ),
    Mutant(
        "leave-not-announced",
        "server/rooms/seat_changes.py",
        "            self._timers.schedule_standin()\n"
        "        if self._teller.connected() != before:",
        "            self._timers.schedule_standin()\n        if False:",
        ROOMS_TESTS,
    ),
    Mutant(
        "idle-closes-a-watched-room",
        "server/rooms/room.py",
        "                    if not self._audience.any_connection():",
        "                    if True:",
        ROOMS_TESTS,
    ),
    Mutant(
        "close-leaves-sockets-open",
        "server/rooms/audience.py",
        "            for listener in listeners:\n                listener.end(why)",
        "            for listener in listeners:\n                pass",
        ROOMS_TESTS,
    ),
    Mutant(
        "close-forgets-queued-submits",
        "server/rooms/room.py",
        "            elif isinstance(command, Submit):\n                command.listener.end(why)",
        "            elif isinstance(command, Submit):\n                pass",
        ROOMS_TESTS,
    ),
    Mutant(
        "submit-to-closed-room-ignored",
        "server/rooms/room.py",
        "            listener.end(Closing.TABLE_UNAVAILABLE)\n        else:",
        "            pass\n        else:",
        ROOMS_TESTS,
    ),
    Mutant(
        "refusal-to-everyone",
        "server/rooms/telling.py",
        "        listener.push(Refused(version=self._table.version, error=error))",
        "        for others in self._audience.humans.values():\n"
        "            for other in others:\n"
        "                other.push(Refused(version=self._table.version, error=error))",
        ROOMS_TESTS,
    ),
    Mutant(
        "bot-fallback-dropped",
        "server/rooms/room.py",
        "            await self._commit(fallback, None, standin=standin)",
        "            pass",
        ROOMS_TESTS,
    ),
    Mutant(
        "bot-seat-unchecked",
        "server/rooms/timers.py",
        "        if action.seat != move.seat:",
        "        if False:",
        ROOMS_TESTS,
    ),
    Mutant(
        "bot-plays-after-deal-end",
        "server/rooms/bot_turns.py",
        "        if deal.result is not None or bot is None:\n            return\n",
        "        if bot is None:\n            return\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "instant-bot-plays-after-deal-end",
        "server/rooms/bot_turns.py",
        "        if deal.result is not None or bot is None:\n            return None\n",
        "        if bot is None:\n            return None\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "bot-speed-not-applied",
        "server/rooms/seat_changes.py",
        "            bots.set_speed(ms)\n",
        "            pass\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "new-match-same-deals",
        "server/rooms/commit.py",
        "match_seed(meta.seed, match_no + 1, meta.secret)",
        "match_seed(meta.seed, match_no, meta.secret)",
        ROOMS_TESTS,
    ),
    Mutant(
        "new-match-number-kept",
        "server/rooms/held_table.py",
        "            self.match_no += 1\n",
        "",
        ROOMS_TESTS,
    ),
    Mutant(
        "bot-seed-ignores-version",
        "server/rooms/bot_turns.py",
        "bot_view(state, bot.seat), bot_seed(meta, bot.seat, version), version)",
        "bot_view(state, bot.seat), bot_seed(meta, bot.seat, 0), version)",
        ROOMS_TESTS,
    ),
    Mutant(
        "instant-bot-seed-ignores-version",
        "server/rooms/bot_turns.py",
        "        seed = bot_seed(meta, bot.seat, version)\n        return",
        "        seed = bot_seed(meta, bot.seat, 0)\n        return",
        ROOMS_TESTS,
    ),
    Mutant(
        "instant-bots-written-one-by-one",
        "server/rooms/commit.py",
        "    after = answer_at_once(entries, events, after, state, version, now, bots)\n",
        "",
        ROOMS_TESTS,
    ),
    Mutant(
        "bot-speed-change-restarts-pause",
        "server/rooms/bot_turns.py",
        "                await waiter\n",
        "                await waiter\n                started = self._clock.now()\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "bot-speed-from-any-seat",
        "server/rooms/seat_requests.py",
        "    if actor != HOST_SEAT:\n",
        "    if False:\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "told-without-checking-the-lease",
        "server/rooms/room.py",
        "                await self._lease_term.hold()\n",
        "",
        ROOMS_TESTS,
    ),
    Mutant(
        "newest-socket-of-a-seat-replaced",
        "server/rooms/audience.py",
        "            listeners.pop(0).end(Closing.REPLACED)",
        "            listeners.pop().end(Closing.REPLACED)",
        ROOMS_TESTS,
    ),
    Mutant(
        "invite-pushed-before-meta-stored",
        "server/rooms/seat_changes.py",
        "        await table.save_meta(table.with_clock(meta))\n"
        "        if issued is not None:\n"
        "            listener.push(issued)\n",
        "        if issued is not None:\n"
        "            listener.push(issued)\n"
        "        await table.save_meta(table.with_clock(meta))\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "registry-lease-in-seconds",
        "server/rooms/registry.py",
        "self._lease_ms = max(1, round(lease_seconds * 1000))",
        "self._lease_ms = max(1, round(lease_seconds))",
        ROOMS_TESTS,
    ),
    # -- rooms: log, store, tables, tokens --
    Mutant(
        "rebuild-ignores-bot-speed",
        "server/rooms/log.py",
        "                self.bot_speed_ms = entry.ms\n",
        "                pass\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "rebuild-keeps-old-match-actions",
        "server/rooms/log.py",
        "            self.match_no += 1\n"
        "            self._match = None\n"
        "            self._pending = []",
        "            self.match_no += 1\n            self._match = None",
        ROOMS_TESTS,
    ),
    Mutant(
        "first-match-derived-seed",
        "server/rooms/log.py",
        'return table_seed if match_no == 0 else _derive(f"match/{table_seed}/{match_no}")',
        'return _derive(f"match/{table_seed}/{match_no}")',
        ROOMS_TESTS,
    ),
    Mutant(
        # Version N means N entries read: the next to read is entries[N], not N + 1.
        "history-cache-reads-on-one-entry-late",
        "server/rooms/history.py",
        "for entry in entries[self.version :]:",
        "for entry in entries[self.version + 1 :]:",
        ROOMS_TESTS,
    ),
    Mutant(
        "store-append-unchecked",
        "server/rooms/store.py",
        "if n ~= tonumber(ARGV[2]) then",
        "if false then",
        ROOMS_TESTS,
    ),
    Mutant(
        "store-append-keeps-expiry",
        "server/rooms/store.py",
        "for i = 1, 3 do\n  redis.call('EXPIRE', KEYS[i], ARGV[3])\nend\nreturn n",
        "return n",
        ROOMS_TESTS,
    ),
    Mutant(
        "store-load-keeps-expiry",
        "server/rooms/store.py",
        "for i = 1, 3 do\n  if redis.call('TTL', KEYS[i]) < tonumber(ARGV[1]) then\n"
        "    redis.call('EXPIRE', KEYS[i], ARGV[1])\n  end\nend\nreturn {meta",
        "return {meta",
        ROOMS_TESTS,
    ),
    Mutant(
        "store-fence-unchecked",
        "server/rooms/store.py",
        "if redis.call('GET', KEYS[1]) ~= ARGV[1] then",
        "if false then",
        ROOMS_TESTS,
    ),
    Mutant(
        "lease-renewed-in-seconds",
        "server/rooms/store.py",
        "redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. ARGV[2], 'PX', ARGV[3])",
        "redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. ARGV[2], 'EX', ARGV[3])",
        ROOMS_TESTS,
    ),
    Mutant(
        "lease-taken-in-seconds",
        "server/rooms/store.py",
        "redis.call('SET', KEYS[2], fence .. ' ' .. ARGV[1], 'PX', ARGV[2])",
        "redis.call('SET', KEYS[2], fence .. ' ' .. ARGV[1], 'EX', ARGV[2])",
        ROOMS_TESTS,
    ),
    Mutant(
        "store-create-overwrites",
        "server/rooms/store.py",
        "return bool(await self._redis.set(key, value, ex=ttl, nx=True))",
        "return bool(await self._redis.set(key, value, ex=ttl))",
        ROOMS_TESTS,
    ),
    Mutant(
        "replica-ack-ignores-a-short-wait",
        "server/rooms/redis_failover.py",
        "        elif not self.acknowledged(waited):\n",
        "        elif False:\n",
        ["tests/rooms/test_redis_failover.py"],
    ),
    Mutant(
        "cluster-replica-ack-ignores-a-short-wait",
        "server/rooms/cluster_replica_ack.py",
        "        elif int(waited) < ack.replicas:\n",
        "        elif False:\n",
        ["tests/rooms/test_cluster_replica_ack.py"],
    ),
    Mutant(
        "tables-any-preset",
        "server/rooms/tables.py",
        '        _one_of("rules", self.rules, engine.PRESETS)\n',
        "",
        ROOMS_TESTS,
    ),
    Mutant(
        "tables-any-bot-level",
        "server/rooms/tables.py",
        '            _one_of("a bot level", level, bots.LEVELS)\n',
        "            pass\n",
        ROOMS_TESTS,
    ),
    Mutant(
        "tables-custom-never",
        "server/rooms/tables.py",
        'return rules if rules == base else msgspec.structs.replace(rules, preset="custom")',
        "return rules",
        [*ROOMS_TESTS, *APP_TESTS],
    ),
    Mutant(
        "token-first-seat-wins-wrongly",
        "server/rooms/tokens.py",
        "and hmac.compare_digest(digest, stored) and found is None:",
        "and found is None:",
        ROOMS_TESTS,
    ),
    Mutant(
        "table-id-any-length",
        "server/rooms/tokens.py",
        r'_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")',
        r'_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")',
        [*ROOMS_TESTS, *APP_TESTS],
    ),
    # -- rooms group: presenter, protocol, socket side --
    Mutant(
        "delta-claims-the-version-it-makes-as-its-base",
        "server/presenter/delta_frames.py",
        "                    base=None if base_version == update.version - 1 else base_version,",
        "                    base=update.version,",
        DELTA_TESTS,
    ),
    Mutant(
        "resync-answered-with-a-delta",
        "server/rooms/telling.py",
        "self.state_update(listener.seat, snapshot, [], full=True)",
        "self.state_update(listener.seat, snapshot, [])",
        DELTA_TESTS,
    ),
    Mutant(
        "splice-one-place-late",
        "server/deltas/ops.py",
        "            self.ops.append([path, start, end_old - start, new[start:end_new]])",
        "            self.ops.append([path, start + 1, end_old - start, new[start:end_new]])",
        DELTA_TESTS,
    ),
    Mutant(
        "appended-move-one-place-late",
        "server/deltas/builder.py",
        "ops += map(list, zip(paths[n : len(value)], value[n:], strict=True))",
        "ops += map(list, zip(paths[n + 1 : len(value) + 1], value[n:], strict=True))",
        DELTA_TESTS,
    ),
    Mutant(
        "delta-events-always-left-out",
        "server/presenter/delta_frames.py",
        "    if events == deltas.appended(old, new):\n        return None",
        "    if True:\n        return None",
        DELTA_TESTS,
    ),
    Mutant(
        "table-read-as-the-tricks-last-move-even-a-pass",
        "server/deltas/wire.py",
        'if expanded[i]["kind"] != "pass"',
        "if True",
        DELTA_TESTS,
    ),
    Mutant(
        "play-for-seat-zero",
        "server/presenter/inbound.py",
        "return Play(seat=seat, cards=list(message.cards))",
        "return Play(seat=0, cards=list(message.cards))",
        WIRE_TESTS,
    ),
    Mutant(
        "bot-speed-seat-and-ms-swapped",
        "server/presenter/inbound.py",
        "return BotSpeed(ms=message.ms, seat=seat)",
        "return BotSpeed(ms=seat, seat=message.ms)",
        WIRE_TESTS,
    ),
    Mutant(
        "bots-shown-disconnected",
        "server/presenter/table.py",
        'connected=s.kind == "bot" or table.connected[s.seat],',
        "connected=table.connected[s.seat],",
        WIRE_TESTS,
    ),
    Mutant(
        "error-frame-without-version",
        "server/presenter/refusals.py",
        "message=error.message, version=version))",
        "message=error.message, version=None))",
        WIRE_TESTS,
    ),
    Mutant(
        "second-join-goes-to-room",
        "server/presenter/inbound.py",
        "    if isinstance(message, JoinMsg):\n        refusal",
        "    if isinstance(message, JoinMsg) and False:\n        refusal",
        WIRE_TESTS,
    ),
    Mutant(
        "unavailable-closes-as-going-away",
        "server/presenter/refusals.py",
        "Closing.TABLE_UNAVAILABLE: (CloseCode.TABLE_UNAVAILABLE,",
        "Closing.TABLE_UNAVAILABLE: (1001,",
        WIRE_TESTS,
    ),
    Mutant(
        "frame-cap-off-by-one",
        "server/protocol.py",
        "    if size > max_bytes:",
        "    if size > max_bytes + 1:",
        WIRE_TESTS,
    ),
    Mutant(
        "utf8-shortcut-assumes-three-bytes",
        "server/protocol.py",
        "len(text) * 4 <= max_bytes",
        "len(text) * 3 <= max_bytes",
        WIRE_TESTS,
    ),
    Mutant(
        "unknown-type-called-invalid",
        "server/protocol.py",
        "    if envelope.type not in _CLIENT_TYPES:",
        "    if False:",
        WIRE_TESTS,
    ),
    Mutant(
        "slow-client-kept",
        "server/connection.py",
        "        except asyncio.QueueFull:\n            self.shut(",
        "        except asyncio.QueueFull:\n            return False\n            self.shut(",
        WIRE_TESTS,
    ),
    Mutant(
        "shut-overwrites-reason",
        "server/connection.py",
        "        if self.close_code is not None:\n            return\n        self.close_code",
        "        self.close_code",
        WIRE_TESTS,
    ),
    Mutant(
        "push-after-shut",
        "server/connection.py",
        "        if not self.open:\n            return False\n        # Nothing ahead of it",
        "        # Nothing ahead of it",
        WIRE_TESTS,
    ),
    Mutant(
        "gallery-full-closed-4401",
        "server/presenter/refusals.py",
        "        if error.reason is SeatReason.TOO_MANY_SPECTATORS\n",
        "        if False\n",
        ["tests/server/test_seats.py"],
    ),
    # -- rooms group: the transport's connection guard and the log --
    Mutant(
        "eviction-ignores-the-newcomers-share",
        "server/connection_guard.py",
        "        need = held + 2\n",
        "        need = 1\n",
        GUARD_TESTS,
    ),
    Mutant(
        "joined-socket-never-counted-as-seated",
        "server/transport.py",
        "            guard.seated(self.transport, table)",
        "            pass",
        GUARD_TESTS,
    ),
    Mutant(
        "websocket-fragments-dropped",
        "server/websocket_protocol.py",
        "            self.frames.append(bytes(frame.data))",
        "            pass",
        ["tests/server/test_websocket_protocol.py"],
    ),
    Mutant(
        "refused-access-lines-unlimited",
        "server/logs.py",
        "            if not _refused_status(record):\n                return True",
        "            return True",
        LOG_TESTS,
    ),
    # -- rooms group: app --
    Mutant(
        "app-skips-table-id-check",
        "server/game_socket_session.py",
        "if valid_table_id(join.table) else None",
        "if True else None",
        APP_TESTS,
    ),
    Mutant(
        "app-no-join-timeout-refusal",
        "server/game_socket_session.py",
        "        await _refuse(websocket, late)\n        return None",
        "        return None",
        SOCKET_LIMIT_TESTS,
    ),
    Mutant(
        "flood-never-cut-off",
        "server/game_socket_session.py",
        "                conn.shut(_FLOODING, ",
        "                conn.push_frame(",
        SOCKET_LIMIT_TESTS,
    ),
    Mutant(
        "frames-after-the-session-still-taken",
        "server/game_socket_session.py",
        "        if take_frames is not None:\n            take_frames(None)",
        "        pass",
        WIRE_TESTS,
    ),
    # -- cluster group: forwarders, the owner's node, the bus --
    Mutant(
        "spectator-request-reaches-the-room",
        "server/cluster/table.py",
        "    if conn.seat == SPECTATOR:\n        answer = presenter.read_watching(",
        "    if False:\n        answer = presenter.read_watching(",
        CLUSTER_TESTS,
    ),
    Mutant(
        "forwarder-leaves-the-read-to-the-owner",
        "server/cluster/forward.py",
        "        request = read_frame(conn, frame, self._max_frame_bytes, self.version)\n"
        "        if request is None:\n            return\n",
        "        frame = frame if isinstance(frame, str) else frame.decode('utf-8', 'replace')\n",
        CLUSTER_TESTS,
    ),
    Mutant(
        "forwarder-ignores-the-fencing-number",
        "server/cluster/forward.py",
        "if message.fence != self._fence or self._here is not None:",
        "if self._here is not None:",
        CLUSTER_TESTS,
    ),
    Mutant(
        "owner-ignores-the-fencing-number",
        "server/cluster/node.py",
        "if room is None or room.lease.fence != message.fence:",
        "if room is None:",
        CLUSTER_TESTS,
    ),
    Mutant(
        "owner-resyncs-only-sockets-ahead",
        "server/cluster/node.py",
        "                    if version != room.version:",
        "                    if version > room.version:",
        CLUSTER_TESTS,
    ),
    Mutant(
        "forwarder-forwards-after-its-yield",
        "server/cluster/forward.py",
        "        if self._fence is None or self._yielding is not None:",
        "        if self._fence is None:",
        HANDOVER_TESTS,
    ),
    Mutant(
        "owner-hands-over-with-a-local-socket",
        "server/cluster/node.py",
        '            if len(procs) != 1 or "" in procs:\n'
        "                continue  # a local socket, or sockets on several processes: stay\n"
        "            proc = procs.pop()\n",
        '            if not procs - {""}:\n'
        "                continue  # a local socket, or sockets on several processes: stay\n"
        '            proc = (procs - {""}).pop()\n',
        HANDOVER_TESTS,
    ),
    # -- provably fair shuffles --
    Mutant(
        "verify-accepts-a-commitment-published-after-the-cards",
        "server/verify.py",
        "deal.first_commitment > deal.first_shown",
        "False",
        VERIFY_TESTS,
    ),
    Mutant(
        "verify-trusts-the-revealed-cards",
        "server/verify.py",
        "    if revealed != left:",
        "    if False:",
        VERIFY_TESTS,
    ),
    Mutant(
        "deal-ignores-the-players-seeds",
        "server/rooms/entropy.py",
        "    if not given:\n        return ()",
        "    if True:\n        return ()",
        ENTROPY_TESTS,
    ),
    Mutant(
        "first-deal-ignores-the-creators-seed",
        "server/rooms/fair_deals.py",
        "return first_dealt(meta, self._round.mixed(meta))",
        "return first_dealt(meta, ())",
        ENTROPY_TESTS,
    ),
    Mutant(
        "a-table-of-a-script-waits-for-seeds-it-never-sends",
        "server/rooms/tables.py",
        "first_deal_waits=request.sends_seeds,",
        "first_deal_waits=True,",
        ENTROPY_TESTS,
    ),
    Mutant(
        "verify-trusts-a-first-deal-commitment-the-seed-did-not-answer",
        "server/verify.py",
        "if index < first_frame and key != (0, 1)",
        "if False and index < first_frame",
        VERIFY_TESTS,
    ),
    # -- rooms group: names, origins, wire values (issue 23, session 10) --
    Mutant(
        "names-no-confusable-skeleton",
        "server/rooms/names.py",
        '    return unicodedata.normalize("NFD", "".join(_prototype(ch) for ch in decomposed))',
        "    return decomposed",
        NAMES_TESTS,
    ),
    Mutant(
        "names-combining-marks-unlimited",
        "server/rooms/names.py",
        "            if marks > MAX_MARKS_IN_A_ROW:",
        "            if False:",
        NAMES_TESTS,
    ),
    Mutant(
        "origins-any-host-answered",
        "server/origins.py",
        "        if host is None or self._any:",
        "        if True:",
        ORIGIN_TESTS,
    ),
    Mutant(
        "origins-https-page-is-the-http-servers-own",
        "server/origins.py",
        "    if parts.scheme != _PAGE_SCHEMES.get(scheme, scheme):\n        return False\n",
        "",
        ORIGIN_TESTS,
    ),
    Mutant(
        "protocol-frame-size-in-characters",
        "server/protocol.py",
        '    return len(text.encode("utf-8", "surrogatepass"))',
        "    return len(text)",
        WIRE_TESTS,
    ),
    Mutant(
        "presenter-unknown-emote-reaches-the-room",
        "server/presenter/inbound.py",
        "    if isinstance(message, EmoteMsg) and message.emote not in EMOTES:",
        "    if False:",
        WIRE_TESTS,
    ),
    # -- rooms group: budgets, table lifetime, the operator --
    Mutant(
        "seat-debt-never-blocks",
        "server/seat_limits.py",
        "if now < seat.blocked_until or not self._local.allow(key):",
        "if not self._local.allow(key):",
        BUDGET_TESTS,
    ),
    Mutant(
        "flood-backoff-never-grows",
        "server/seat_limits.py",
        "tonumber(ARGV[1]) * 2 ^ math.min(n - 1, 30)",
        "tonumber(ARGV[1])",
        BUDGET_TESTS,
    ),
    Mutant(
        "table-lifetime-ignores-play",
        "server/rooms/tables.py",
        "        grown = self.unplayed_seconds + max(0, version) * self.per_action_seconds",
        "        grown = self.unplayed_seconds",
        ROOMS_TESTS,
    ),
    Mutant(
        "admin-token-checked-as-a-prefix",
        "server/operator_access.py",
        "    return hmac.compare_digest(offered.encode(), admin_token.encode())",
        "    return admin_token.startswith(offered)",
        APP_TESTS,
    ),
]


def copy_tree(dest: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in files:
        src = ROOT / name
        if src.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def run(mutant: Mutant, work: Path, timeout: float) -> tuple[str, float]:
    path = work / mutant.path
    original = path.read_text()
    count = original.count(mutant.old)
    if count != 1:
        return f"STALE (text found {count} times)", 0.0
    path.write_text(original.replace(mutant.old, mutant.new))
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *mutant.tests],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        verdict = "survived" if proc.returncode == 0 else "killed"
    except subprocess.TimeoutExpired:
        verdict = "killed (timeout)"
    finally:
        path.write_text(original)
    return verdict, time.monotonic() - start


def group(mutant: Mutant) -> str:
    """``engine``, ``bots`` or ``cluster`` by package; everything else is the ``rooms`` group."""
    for name in ("engine", "bots", "cluster"):
        if mutant.path.startswith(f"server/{name}/"):
            return name
    return "rooms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["engine", "bots", "rooms", "cluster"])
    ap.add_argument("--name", default="", help="run the mutants whose name contains this")
    ap.add_argument("--start", type=int, default=0, help="skip the first N chosen mutants")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--workdir", help="where to copy the tree (default: a temporary directory)")
    args = ap.parse_args()
    chosen = [m for m in MUTANTS if args.only in (None, group(m)) and args.name in m.name][
        args.start :
    ]
    survived = 0
    if args.workdir:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mutants-", dir=args.workdir) as tmp:
        work = Path(tmp)
        copy_tree(work)
        for m in chosen:
            verdict, spent = run(m, work, args.timeout)
            survived += verdict == "survived"
            print(f"{verdict:18} {spent:6.1f}s  {m.path}: {m.name}", flush=True)
    print(f"{len(chosen)} mutants, {survived} survived")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
