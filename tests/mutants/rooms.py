"""Hand-made mutants of the rooms, the protocol, the presenter and the socket side.

Each mutant is one realistic bug written as a text replacement.  The script
copies the checkout to a temporary directory, applies one mutant at a time
there (the checkout itself is never touched), runs only the tests that concern
it, and reports which mutants the suite killed and which survived.  Survivors
kept on purpose are listed, with why, in docs/architecture.md ("Mutation
survivors").  Not collected by pytest; run it by hand:

    python tests/mutants/rooms.py            # all mutants
    python tests/mutants/rooms.py stale-minus-one hint-no-cycle   # some
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ROOMS = ("tests/rooms",)
WIRE = (
    "tests/server/test_presenter.py",
    "tests/server/test_protocol.py",
    "tests/server/test_socket_connection.py",
)
APP = ("tests/server/test_app.py",)


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTANTS = [
    # --- room actor -------------------------------------------------------------
    Mutant(
        "stale-minus-one",
        "server/rooms/room.py",
        "        if command.version != self._version:\n            self._refuse(",
        "        if command.version not in (self._version, self._version - 1):\n"
        "            self._refuse(",
        ROOMS,
    ),
    Mutant(
        "stale-future-accepted",
        "server/rooms/room.py",
        "        if command.version != self._version:\n            self._refuse(",
        "        if command.version < self._version:\n            self._refuse(",
        ROOMS,
    ),
    Mutant(
        "bot-move-version-unchecked",
        "server/rooms/room.py",
        "        if command.version != self._version:\n            return  # decided",
        "        if False:\n            return  # decided",
        ROOMS,
    ),
    Mutant(
        "new-match-while-running",
        "server/rooms/room.py",
        "isinstance(request, NewMatch) and self._state.winners is None",
        "isinstance(request, NewMatch) and self._state.winners is not None",
        ROOMS,
    ),
    Mutant(
        "hint-no-cycle",
        "server/rooms/room.py",
        "self._hint_next[listener.seat] = index + 1",
        "self._hint_next[listener.seat] = index",
        ROOMS,
    ),
    Mutant(
        "hint-cycle-survives-commit",
        "server/rooms/room.py",
        "        self._hint_next.clear()\n",
        "",
        ROOMS,
    ),
    Mutant(
        "views-survive-commit",
        "server/rooms/room.py",
        "        self._views.clear()\n",
        "",
        ROOMS,
    ),
    Mutant(
        "hints-survive-commit",
        "server/rooms/room.py",
        "        self._all_hints.clear()\n",
        "",
        ROOMS,
    ),
    Mutant(
        "refused-action-stored",
        "server/rooms/room.py",
        '                    log.error("table %s: bot action refused: %r", self.id, exc)\n'
        "                return False",
        '                    log.error("table %s: bot action refused: %r", self.id, exc)',
        ROOMS,
    ),
    Mutant(
        "announce-before-store",
        "server/rooms/room.py",
        "        # The write comes first: a seat never hears of an action Redis does not hold.\n",
        "        self._broadcast(events)\n",
        ROOMS,
    ),
    Mutant(
        "join-not-announced",
        "server/rooms/room.py",
        "        return changed or self._connected() != before",
        "        return changed",
        ROOMS,
    ),
    Mutant(
        "leave-not-announced",
        "server/rooms/room.py",
        "            self._schedule_standin()\n        if self._connected() != before:",
        "            self._schedule_standin()\n        if False:",
        ROOMS,
    ),
    Mutant(
        "idle-closes-a-watched-room",
        "server/rooms/room.py",
        "                    if not self._any_connection():",
        "                    if True:",
        ROOMS,
    ),
    Mutant(
        "close-leaves-sockets-open",
        "server/rooms/room.py",
        "            for listener in listeners:\n                listener.end(why)",
        "            for listener in listeners:\n                pass",
        ROOMS,
    ),
    Mutant(
        "close-forgets-queued-submits",
        "server/rooms/room.py",
        "            elif isinstance(command, Submit):\n                command.listener.end(why)",
        "            elif isinstance(command, Submit):\n                pass",
        ROOMS,
    ),
    Mutant(
        "submit-to-closed-room-ignored",
        "server/rooms/room.py",
        "            listener.end(Closing.TABLE_UNAVAILABLE)\n        else:",
        "            pass\n        else:",
        ROOMS,
    ),
    Mutant(
        "refusal-to-everyone",
        "server/rooms/room.py",
        "        listener.push(Refused(version=self._version, error=error))",
        "        for others in self._humans.values():\n"
        "            for other in others:\n"
        "                other.push(Refused(version=self._version, error=error))",
        ROOMS,
    ),
    Mutant(
        "bot-fallback-dropped",
        "server/rooms/room.py",
        "            await self._commit(fallback, None, standin=standin)",
        "            pass",
        ROOMS,
    ),
    Mutant(
        "bot-seat-unchecked",
        "server/rooms/room.py",
        "        if action.seat != command.seat:",
        "        if False:",
        ROOMS,
    ),
    Mutant(
        "bot-plays-after-deal-end",
        "server/rooms/room.py",
        "        if deal.result is not None or bot is None:",
        "        if bot is None:",
        ROOMS,
    ),
    Mutant(
        "bot-speed-not-applied",
        "server/rooms/room.py",
        "            self._bot_speed_ms = ms\n",
        "            pass\n",
        ROOMS,
    ),
    Mutant(
        "new-match-same-deals",
        "server/rooms/room.py",
        "match_seed(self.meta.seed, self._match_no + 1, self.meta.secret)",
        "match_seed(self.meta.seed, self._match_no, self.meta.secret)",
        ROOMS,
    ),
    Mutant(
        "new-match-number-kept",
        "server/rooms/room.py",
        "            self._match_no += 1\n",
        "",
        ROOMS,
    ),
    Mutant(
        "bot-seed-ignores-version",
        "server/rooms/room.py",
        "seed = bot_seed(self.meta.seed, bot.seat, version, self.meta.secret)",
        "seed = bot_seed(self.meta.seed, bot.seat, 0, self.meta.secret)",
        ROOMS,
    ),
    # --- log, store, tables, tokens ---------------------------------------------
    Mutant(
        "rebuild-ignores-bot-speed",
        "server/rooms/log.py",
        "            speed = entry.ms\n",
        "            pass\n",
        ROOMS,
    ),
    Mutant(
        "rebuild-keeps-old-match-actions",
        "server/rooms/log.py",
        "            match_no += 1\n            actions = []",
        "            match_no += 1",
        ROOMS,
    ),
    Mutant(
        "first-match-derived-seed",
        "server/rooms/log.py",
        'return table_seed if match_no == 0 else _derive("match", table_seed, match_no)',
        'return _derive("match", table_seed, match_no)',
        ROOMS,
    ),
    Mutant(
        "store-append-unchecked",
        "server/rooms/store.py",
        "if n ~= tonumber(ARGV[2]) then",
        "if false then",
        ROOMS,
    ),
    Mutant(
        "store-append-keeps-expiry",
        "server/rooms/store.py",
        "for i = 1, 3 do\n  redis.call('EXPIRE', KEYS[i], ARGV[4])\nend\nreturn n",
        "return n",
        ROOMS,
    ),
    Mutant(
        "store-load-keeps-expiry",
        "server/rooms/store.py",
        "for i = 1, 3 do\n  redis.call('EXPIRE', KEYS[i], ARGV[1])\nend\nreturn {meta",
        "return {meta",
        ROOMS,
    ),
    Mutant(
        "store-fence-unchecked",
        "server/rooms/store.py",
        "if redis.call('GET', KEYS[1]) ~= ARGV[1] then",
        "if false then",
        ROOMS,
    ),
    Mutant(
        "store-create-overwrites",
        "server/rooms/store.py",
        "ex=self._ttl, nx=True",
        "ex=self._ttl",
        ROOMS,
    ),
    Mutant(
        "tables-any-preset",
        "server/rooms/tables.py",
        '        _one_of("rules", self.rules, engine.PRESETS)\n',
        "",
        ROOMS,
    ),
    Mutant(
        "tables-any-bot-level",
        "server/rooms/tables.py",
        '            _one_of("a bot level", level, bots.LEVELS)\n',
        "            pass\n",
        ROOMS,
    ),
    Mutant(
        "tables-custom-never",
        "server/rooms/tables.py",
        'return rules if rules == base else msgspec.structs.replace(rules, preset="custom")',
        "return rules",
        ROOMS + APP,
    ),
    Mutant(
        "token-first-seat-wins-wrongly",
        "server/rooms/tokens.py",
        "and hmac.compare_digest(digest, stored) and found is None:",
        "and found is None:",
        ROOMS,
    ),
    Mutant(
        "table-id-any-length",
        "server/rooms/tokens.py",
        r'_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")',
        r'_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")',
        ROOMS + APP,
    ),
    # --- presenter, protocol, connection ----------------------------------------
    Mutant(
        "play-for-seat-zero",
        "server/presenter.py",
        "return Play(seat=seat, cards=list(message.cards))",
        "return Play(seat=0, cards=list(message.cards))",
        WIRE,
    ),
    Mutant(
        "bot-speed-seat-and-ms-swapped",
        "server/presenter.py",
        "return BotSpeed(ms=message.ms, seat=seat)",
        "return BotSpeed(ms=seat, seat=message.ms)",
        WIRE,
    ),
    Mutant(
        "bots-shown-disconnected",
        "server/presenter.py",
        'connected=s.kind == "bot" or table.connected[s.seat],',
        "connected=table.connected[s.seat],",
        WIRE,
    ),
    Mutant(
        "error-frame-without-version",
        "server/presenter.py",
        "message=error.message, version=version))",
        "message=error.message, version=None))",
        WIRE,
    ),
    Mutant(
        "second-join-goes-to-room",
        "server/presenter.py",
        "    if isinstance(message, JoinMsg):\n        refusal",
        "    if isinstance(message, JoinMsg) and False:\n        refusal",
        WIRE,
    ),
    Mutant(
        "unavailable-closes-as-going-away",
        "server/presenter.py",
        "Closing.TABLE_UNAVAILABLE: (CloseCode.TABLE_UNAVAILABLE,",
        "Closing.TABLE_UNAVAILABLE: (1001,",
        WIRE,
    ),
    Mutant(
        "frame-cap-off-by-one",
        "server/protocol.py",
        "    if size > max_bytes:",
        "    if size > max_bytes + 1:",
        WIRE,
    ),
    Mutant(
        "utf8-shortcut-assumes-three-bytes",
        "server/protocol.py",
        "len(text) * 4 <= max_bytes",
        "len(text) * 3 <= max_bytes",
        WIRE,
    ),
    Mutant(
        "unknown-type-called-invalid",
        "server/protocol.py",
        "    if envelope.type not in _CLIENT_TYPES:",
        "    if False:",
        WIRE,
    ),
    Mutant(
        "slow-client-kept",
        "server/connection.py",
        "        except asyncio.QueueFull:\n            self.shut(",
        "        except asyncio.QueueFull:\n            return False\n            self.shut(",
        WIRE,
    ),
    Mutant(
        "shut-overwrites-reason",
        "server/connection.py",
        "        if self.close_code is not None:\n            return\n        self.close_code",
        "        self.close_code",
        WIRE,
    ),
    Mutant(
        "push-after-shut",
        "server/connection.py",
        "        if not self.open:\n            return False\n        try:",
        "        try:",
        WIRE,
    ),
    # --- app --------------------------------------------------------------------
    Mutant(
        "app-skips-table-id-check",
        "server/app.py",
        "if valid_table_id(join.table) else None",
        "if True else None",
        APP,
    ),
    Mutant(
        "app-no-join-timeout-refusal",
        "server/app.py",
        "        await _refuse(websocket, late)\n        return None",
        "        return None",
        APP,
    ),
]


def copy_checkout(into: Path) -> None:
    """The checkout's tracked and new (not ignored) files, copied under ``into``."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def run(mutant: Mutant, work: Path) -> bool:
    """Whether the mutant's tests fail (kill it)."""
    path = work / mutant.path
    original = path.read_text("utf-8")
    if original.count(mutant.old) != 1:
        raise SystemExit(f"{mutant.name}: the text to mutate is not found exactly once")
    path.write_text(original.replace(mutant.old, mutant.new), "utf-8")
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *mutant.tests],
            cwd=work,
            capture_output=True,
            timeout=900,
        )
    finally:
        path.write_text(original, "utf-8")
    return result.returncode != 0


def main(names: list[str]) -> int:
    chosen = [m for m in MUTANTS if not names or m.name in names]
    if names and len(chosen) != len(set(names)):
        raise SystemExit(f"unknown mutant(s): {set(names) - {m.name for m in MUTANTS}}")
    survivors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        work = Path(tmp)
        copy_checkout(work)
        for mutant in chosen:
            killed = run(mutant, work)
            print(f"{'killed  ' if killed else 'SURVIVED'} {mutant.name}", flush=True)
            if not killed:
                survivors.append(mutant.name)
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} killed; survivors: {survivors}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
