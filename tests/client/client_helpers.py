"""Shared pieces of the browser tests: the Chromium launch, seeded tables over HTTP,
and small waits on the page's read-only ``window.pdk.state()``."""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Debian's Chromium, in two builds of the same version.  The headless shell is the same
# Blink (layout, script, fonts, screenshots) without the browser's own layers, which is
# why Playwright makes it its default for headless runs: measured here, the browser
# tests spend 0.57-0.68x the CPU in it (docs/performance.md, "The test suite").  The whole
# browser is kept for what only it does the way a user's browser does (FULL_BROWSER in
# a module), and stands in for the shell where the shell is not installed.
CHROMIUM = Path("/usr/bin/chromium")
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CLIENT_DIR = Path(__file__).resolve().parents[2] / "client"
LANGUAGES = ("en", "de", "zh-Hans", "it")
# How long a wait for something the page must show may take before the test fails.  It
# only tells a hang from slowness: every wait ends on the event it waits for, and at a
# load of 20 on two cores a first state took more than 20 s to arrive.
WAIT_MS = 60_000


def strings(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((CLIENT_DIR / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


@dataclass
class Seat:
    table: str
    token: str
    seat: int
    invite: str


@dataclass
class Live:
    """A running server plus helpers to open seeded tables on it."""

    url: str
    process: Any

    def post(self, path: str, body: Any = None) -> Any:
        """POST ``body`` as JSON (none if None) to ``path``; the JSON answer (None if empty)."""
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=b"" if body is None else json.dumps(body).encode(),
            headers={} if body is None else {"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=WAIT_MS / 1000) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def create_table(self, **body: Any) -> list[Seat]:
        answer = self.post("/api/tables", body)
        return [
            Seat(table=answer["table"], token=s["token"], seat=s["seat"], invite=s["invite"])
            for s in answer["seats"]
        ]

    def seat_url(self, seat: Seat) -> str:
        return f"{self.url}{seat.invite}"


# --- page helpers ------------------------------------------------------------


def wait_joined(page: Any) -> dict[str, Any]:
    page.wait_for_function("() => window.pdk && window.pdk.state().view !== null")
    state: dict[str, Any] = page.evaluate("pdk.state()")
    return state


def state(page: Any) -> dict[str, Any]:
    value: dict[str, Any] = page.evaluate("pdk.state()")
    return value


def wait_my_turn_or_result(page: Any) -> dict[str, Any]:
    page.wait_for_function(
        "() => { const v = pdk.state().view;"
        " return v && (v.result !== null || v.turn === v.seat); }"
    )
    return state(page)


def wait_version_above(page: Any, version: int) -> None:
    page.wait_for_function(f"() => pdk.state().version > {version}")


# An init script: every frame the page sends on a WebSocket, parsed, in ``window.sentFrames``.
# A frame goes out synchronously from the handler that decides to send it (a click, a state
# received, a timer), so once that handler has run the record says whether it sent anything:
# "nothing was sent" is read from it, never concluded from a quiet pause.
RECORD_SENT_JS = """(() => {
  window.sentFrames = [];
  const original = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    try { window.sentFrames.push(JSON.parse(data)); } catch (e) { window.sentFrames.push(data); }
    return original.call(this, data);
  };
})()"""


# An init script for a context a test makes itself: the first-game tour counts as seen
# (new_page does this unless asked for the tour).
TOUR_SEEN_JS = (
    "try { if (!localStorage.getItem('pdk.settings'))"
    " localStorage.setItem('pdk.settings', JSON.stringify({tourSeen: true}));"
    " } catch (e) { /* about:blank has no storage */ }"
)


def sent_types(page: Any) -> list[str]:
    """The ``type`` of every frame sent since the page loaded, pings left out."""
    types: list[str] = page.evaluate(
        "() => window.sentFrames.map(f => f.type).filter(t => t !== 'ping')"
    )
    return types


# An init script: while ``window.holdFrames`` is true, every frame the server sends the
# page (pongs aside, so the socket is not judged stalled) waits in ``window.heldFrames``,
# in order, until ``releaseFrames()`` hands them on.  It stages, as an event, what a loaded
# machine does by chance: the table moved on, and the page acts before it hears so.
HOLD_FRAMES_JS = """(() => {
  window.holdFrames = false;
  window.heldFrames = [];
  window.releaseFrames = () => {
    window.holdFrames = false;
    for (const [listener, socket, ev] of window.heldFrames.splice(0)) listener.call(socket, ev);
  };
  const original = WebSocket.prototype.addEventListener;
  WebSocket.prototype.addEventListener = function (type, listener, options) {
    if (type !== "message") return original.call(this, type, listener, options);
    const held = function (ev) {
      let kind = null;
      try { kind = JSON.parse(ev.data).type; } catch (e) { /* handed on as it is */ }
      if ((window.holdFrames || window.heldFrames.length) && kind !== "pong") {
        window.heldFrames.push([listener, this, ev]);
      } else {
        listener.call(this, ev);
      }
    };
    return original.call(this, type, held, options);
  };
})()"""


def hold_incoming_frames(page: Any) -> None:
    """Let the page hold back what it receives (``window.holdFrames``) from its next load on."""
    page.context.add_init_script(HOLD_FRAMES_JS)


def hold_frames_from_now(page: Any) -> int:
    """From now on the page holds back what it receives (it loaded with
    ``hold_incoming_frames``); the table version it knows."""
    version: int = page.evaluate("() => { window.holdFrames = true; return pdk.state().version; }")
    return version


# The table versions of the state frames (whole or delta) the page holds back.
HELD_VERSIONS_JS = (
    "window.heldFrames.map(([, , ev]) => JSON.parse(ev.data))"
    ".filter(f => f.type === 'state' || f.type === 'd')"
    ".map(f => (f.type === 'd' ? f.v : f.version))"
)


def wait_held_version_above(page: Any, version: int) -> None:
    """Wait until the page holds back a state of the table newer than ``version``."""
    page.wait_for_function(f"(v) => {HELD_VERSIONS_JS}.some(held => held > v)", arg=version)


def press_across_a_state(
    page: Any, selector: str, version: int, *, landed: str | None = None
) -> None:
    """Press ``selector``, let the held frames (a state past ``version``, or one after
    which the page's ``landed`` holds) in while the button is down, then let go: a tap
    that spans a redraw, as a finger's can."""
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.evaluate("() => window.releaseFrames()")
    if landed is None:
        wait_version_above(page, version)
    else:
        page.wait_for_function(landed)
    page.mouse.up()


def hand_codes(page: Any) -> list[str]:
    codes: list[str] = page.eval_on_selector_all(
        "#hand .card", "cards => cards.map(c => c.dataset.code)"
    )
    return codes


def click_card(page: Any, code: str) -> None:
    """Tap a card where it shows in the fanned hand: its left edge, under the corner."""
    page.click(f'#hand .card[data-code="{code}"]', position={"x": 6, "y": 30})


def take_turn_with_hint_or_pass(page: Any) -> None:
    """Our move as a newcomer would make it: Pass when allowed, otherwise Hint then Play."""
    before = state(page)
    if before["view"]["can_pass"]:
        page.click("#btn-pass")
    else:
        page.click("#btn-hint")
        page.wait_for_selector('#btn-play[aria-disabled="false"]')
        page.click("#btn-play")
    wait_version_above(page, before["version"])


# Phone portrait (two widths), phone landscape and a desktop: every layout check runs at all.
SIZES = {
    "390x844": (390, 844),
    "360x740": (360, 740),
    "844x390": (844, 390),
    "1280x800": (1280, 800),
}
# Each card's rank corner must be on screen and on top: left edge, middle and right edge.
HIDDEN_CARDS_JS = """(side) => {
  const bad = [];
  for (const card of document.querySelectorAll(`#pile-${side} .play .card`)) {
    const box = card.getBoundingClientRect();
    if (box.left < 0 || box.top < 0 || box.right > innerWidth || box.bottom > innerHeight) {
      bad.push(`${card.dataset.code} outside the viewport`);
      continue;
    }
    const rank = card.querySelector('.corner .rank').getBoundingClientRect();
    const y = rank.top + rank.height / 2;
    for (const x of [rank.left + 1, rank.left + rank.width / 2, rank.right - 1]) {
      const hit = document.elementFromPoint(x, y);
      if (!hit || hit.closest('.card') !== card) bad.push(`${card.dataset.code} rank covered`);
    }
  }
  return bad;
}"""

LOCALES = {"en": "en-US", "de": "de-DE", "zh-Hans": "zh-CN", "it": "it-IT"}

# Two frames: the first lays the page out at its new size, the second runs after the
# ResizeObserver callbacks of the first (the hand redraws its fan in one).
TWO_FRAMES_JS = (
    "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))"
)


def resize(page: Any, width: int, height: int) -> None:
    """Give the page another viewport and wait until it has been drawn at it: a page
    turned from one size to another is laid out by the same CSS as one loaded at it, for
    a fraction of a load's CPU."""
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate(TWO_FRAMES_JS)


def sizes_from(first: int) -> list[tuple[str, tuple[int, int]]]:
    """Every size of ``SIZES``, the ``first``-th (modulo their number) first.

    Pages opened one per language, the ``i``-th at ``sizes_from(i)[0]``, then turned
    through the rest, load each language once and each size once (for as many
    languages as sizes), and check every pair."""
    items = list(SIZES.items())
    start = first % len(items)
    return items[start:] + items[:start]


def find_seed(preset: str, test: Any, limit: int = 5000) -> tuple[int, Any]:
    """The first seed whose opening position satisfies ``test(state)`` (truthy answer)."""
    from server import engine

    for seed in range(limit):
        state = engine.new_match(engine.PRESETS[preset], seed, 1)
        answer = test(state)
        if answer:
            return seed, answer
    raise AssertionError(f"no {preset} seed below {limit} has the position asked for")


class RawSeat:
    """One human seat driven over a raw WebSocket from the test (another player)."""

    def __init__(self, live: Live, seat: Seat) -> None:
        from websockets.sync.client import connect

        # No limit on the frames read ahead: a seat on auto or watched through a whole deal
        # gets more than the default 16 before the test reads them, and a full queue stops
        # the reader, so close() would wait out its 10 s for a closing frame it never reads.
        self._connection = connect(
            live.url.replace("http", "ws") + "/ws", open_timeout=WAIT_MS / 1000, max_queue=None
        )
        self.ws = self._connection.__enter__()
        self.ws.send(json.dumps({"type": "join", "table": seat.table, "token": seat.token}))
        self.version = -1
        self.view: dict[str, Any] = {}
        self.wait_version(None)

    def wait_version(self, above: int | None) -> dict[str, Any]:
        """Read frames until a state newer than ``above`` (any state for None) arrives."""
        while True:
            msg = json.loads(self.ws.recv(timeout=WAIT_MS / 1000))
            if msg["type"] == "error":
                raise AssertionError(f"server refused: {msg}")
            if msg["type"] == "state":
                self.version, self.view = msg["version"], msg["view"]
                if above is None or self.version > above:
                    return self.view

    def play(self, cards: list[str]) -> None:
        version = self.version
        self.ws.send(json.dumps({"type": "play", "version": version, "cards": cards}))
        self.wait_version(version)

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


def screenshots_kept() -> bool:
    """Whether this run keeps screenshots: PDK_SCREENSHOT_DIR names where (e.g.
    docs/screenshots).  A run without it takes none: nobody reads a run's tmp dirs, and
    each shot cost the browser about 0.1 s of CPU (75 a run)."""
    return bool(os.environ.get("PDK_SCREENSHOT_DIR"))


def screenshot(page: Any, name: str) -> None:
    """Save the page as ``name`` in PDK_SCREENSHOT_DIR, when the run keeps screenshots."""
    if not screenshots_kept():
        return
    folder = Path(os.environ["PDK_SCREENSHOT_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name))


# A deal has at most 48 plays and a pass between each: far fewer of our own turns.
MAX_OWN_TURNS = 60


def play_to_result(page: Any, *, each_turn: Any = None) -> dict[str, Any]:
    """Take our turns (Hint + Play, or Pass) until the deal is over; its last state.

    ``each_turn(snapshot)`` is called before each of our turns."""
    for _ in range(MAX_OWN_TURNS):
        snapshot = wait_my_turn_or_result(page)
        if snapshot["view"]["result"] is not None:
            return snapshot
        if each_turn is not None:
            each_turn(snapshot)
        take_turn_with_hint_or_pass(page)
    raise AssertionError("the deal did not end")


def play_match_on_auto(page: Any, deals: int) -> dict[str, Any]:
    """Hand our seat to the stand-in and deal on (at most ``deals`` deals) until the match
    is over; its last state."""
    page.click("#btn-auto")
    page.wait_for_function(
        "() => { const s = pdk.state(); return s.table.seats[s.view.seat].on_auto; }"
    )
    for _ in range(deals):
        page.wait_for_function("() => pdk.state().view.result !== null")
        if page.evaluate("pdk.state().view.match_over"):
            break
        deal = page.evaluate("pdk.state().view.deal_no")
        page.wait_for_selector("#result-sheet[open] #btn-next-deal")
        page.click("#btn-next-deal")
        # The stand-in may play the whole next deal before we look: wait for its number.
        page.wait_for_function("(n) => pdk.state().view.deal_no > n", arg=deal)
    page.wait_for_function("() => pdk.state().view.match_over")
    return state(page)


def store_language(page: Any, lang: str) -> None:
    """Save ``lang`` as the chosen language; the next load of the page uses it."""
    page.evaluate(
        "(lang) => { const s = JSON.parse(localStorage.getItem('pdk.settings') || '{}');"
        " s.lang = lang; localStorage.setItem('pdk.settings', JSON.stringify(s)); }",
        lang,
    )


def choose_language(page: Any, lang: str) -> None:
    """Pick ``lang`` in the settings sheet, as a player does, and close the sheet: the
    page relabels itself in place (and remembers the choice), without a load."""
    page.click("#btn-settings")
    page.select_option("#lang-select", lang)
    page.wait_for_function("(lang) => document.documentElement.lang === lang", arg=lang)
    page.keyboard.press("Escape")
    page.wait_for_selector("#settings-sheet:not([open])", state="attached")


def open_seat_page(live: Live, new_page: Any, **table: Any) -> Any:
    """A page joined to the first seat of a new table (``table``: the POST body)."""
    (seat, *_) = live.create_table(**table)
    page = new_page()
    page.goto(live.seat_url(seat))
    wait_joined(page)
    return page
