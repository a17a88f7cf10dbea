"""Shared pieces of the browser tests: the Chromium launch, seeded tables over HTTP,
and small waits on the page's read-only ``window.pdk.state()``."""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
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
# Long enough for two slow cores running the server, its bots and a browser.
WAIT_MS = 20_000


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

    def create_table(self, **body: Any) -> list[Seat]:
        request = urllib.request.Request(
            f"{self.url}/api/tables",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.loads(response.read())
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
