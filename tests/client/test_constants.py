"""Issue 28, defect 14: the client's copies of server constants (the host seat, the emote set,
the close codes, the name rules, the cards and the table choices) are the server's.

The client's values are read from its own ES modules as the page loads them, not parsed out
of the source, so a test fails as soon as either side changes without the other."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import CLIENT_DIR, Live, strings

from server import bots, engine
from server.protocol import CloseCode
from server.rooms.emotes import EMOTES
from server.rooms.log import MAX_BOT_SPEED_MS
from server.rooms.names import MAX_NAME_CHARS, NameRefused, clean_name
from server.rooms.seating import HOST_SEAT

pytestmark = pytest.mark.browser

# Close codes after which the client reconnects: the socket was slow, the table could not be
# stored for a moment, or the watchers' gallery was full.  Every other code is fatal to the
# seat.  A new server close code fails the test until it is put on one side or the other.
RETRIED = {CloseCode.TOO_SLOW, CloseCode.TABLE_UNAVAILABLE, CloseCode.TOO_MANY_SPECTATORS}

CLIENT_JS = """async (names) => {
  const seats = await import('./js/seats.js');
  const net = await import('./js/net.js');
  const cards = await import('./js/cards.js');
  const settings = await import('./js/settings.js');
  const namesMod = await import('./js/names.js');
  return {
    hostSeat: seats.HOST_SEAT,
    emotes: Object.keys(seats.EMOTES),
    fatalClose: [...net.FATAL_CLOSE],
    ranks: cards.RANKS,
    suits: cards.SUITS,
    presets: settings.PRESETS,
    deals: settings.DEAL_CHOICES,
    levels: settings.LEVELS,
    speeds: settings.SPEEDS.map(([, ms]) => ms),
    maxName: namesMod.MAX_NAME_CHARS,
    names: names.map(n => namesMod.checkName(n).name),
  };
}"""

# Names on both sides of each of the server's rules.
NAMES = [
    "Ann",
    "  Ann  ",
    "",
    "   ",
    "x" * MAX_NAME_CHARS,
    "x" * (MAX_NAME_CHARS + 1),
    "李" * MAX_NAME_CHARS,
    *(f"a{ch}b" for ch in "<>&\"'`"),
    "a\u200bb",
    "a\u0007b",
    "a\u202eb",
    "Ren\u00e9e",
    "Rene\u0301e",
    "🙂 Joy",
    "Mei  Lin",
    "Mei\u3000\u3000Lin",
    # Refused by the server alone: the client sends them and shows the server's reason.
    "Anna",
    "\u0410nna",
    "\u0301x",
    "a\u2800b",
]
# A close code compared by number, ``code === 4401`` or ``4401 === ev.code``.
CLOSE_LITERAL = re.compile(r"\bcode\s*[!=]==?\s*(\d{4})\b|\b(\d{4})\s*[!=]==?\s*[\w.]*\bcode\b")


def server_name(raw: str) -> str | None:
    try:
        return clean_name(raw)
    except NameRefused:
        return None


@pytest.fixture
def client(live: Live, new_page: Callable[..., Any]) -> dict[str, Any]:
    page = new_page()
    page.goto(f"{live.url}/")
    values: dict[str, Any] = page.evaluate(CLIENT_JS, NAMES)
    return values


def test_the_host_seat_and_the_emote_set_are_the_servers(client: dict[str, Any]) -> None:
    assert client["hostSeat"] == HOST_SEAT
    assert client["emotes"] == list(EMOTES)
    english = strings("en")
    assert all(f"emote.{name}" in english for name in EMOTES)


def test_the_close_codes_the_client_gives_up_on_are_the_servers_fatal_ones(
    client: dict[str, Any],
) -> None:
    fatal = {code for code in CloseCode if code not in RETRIED}
    assert sorted(client["fatalClose"]) == sorted(fatal)
    # A close code written out anywhere in the client is one the server sends.
    for path in (CLIENT_DIR / "js").glob("*.js"):
        for pair in CLOSE_LITERAL.findall(path.read_text("utf-8")):
            literal = int("".join(pair))
            assert literal in set(CloseCode), f"{path.name}: {literal} is no close code"


def test_the_name_rules_are_the_servers(client: dict[str, Any]) -> None:
    """A name the client refuses the server refuses too, and one both take is stored as
    the client showed it; the rest (look-alikes, stray marks) only the server knows."""
    assert client["maxName"] == MAX_NAME_CHARS
    for raw, mine in zip(NAMES, client["names"], strict=True):
        theirs = server_name(raw)
        if mine is None:
            assert theirs is None, f"the client refuses {raw!r}, which the server takes"
        elif theirs is not None:
            assert mine == theirs, f"{raw!r}: the client shows {mine!r}, the server {theirs!r}"
    only_server = [raw for raw, mine in zip(NAMES, client["names"], strict=True) if mine]
    assert {"Anna", "\u0301x"} <= {raw for raw in only_server if server_name(raw) is None}


def test_the_cards_and_the_table_choices_are_the_servers(client: dict[str, Any]) -> None:
    assert client["ranks"] == engine.cards.RANKS
    assert client["suits"] == engine.cards.SUITS
    assert client["presets"] == list(engine.PRESETS)
    assert client["deals"] == list(engine.MATCH_LENGTHS)
    assert client["levels"] == list(bots.LEVELS)
    assert all(0 <= ms <= MAX_BOT_SPEED_MS for ms in client["speeds"])
