"""The shipped CJK web font (tools/make_cjk_font.py) holds every character of every zh-Hans
string and every Chinese character the client shows, and the browser loads it."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import CLIENT_DIR, Live, wait_joined

sys.path.insert(0, str(CLIENT_DIR.parent / "tools"))
import make_cjk_font

FONT = CLIENT_DIR / "fonts" / "pdk-cjk.woff2"


def font_characters() -> set[int]:
    from fontTools.ttLib import TTFont

    codepoints: set[int] = set(TTFont(FONT).getBestCmap())
    return codepoints


def test_every_character_of_every_zh_hans_string_is_in_the_font() -> None:
    have = font_characters()
    wanted = {ch for ch in make_cjk_font.zh_hans_text() if ord(ch) > 0x7E}
    missing = sorted(ch for ch in wanted if ord(ch) not in have)
    assert not missing, f"run tools/make_cjk_font.py: the font lacks {''.join(missing)}"
    assert len(wanted) > 300


def test_every_chinese_character_anywhere_in_the_client_is_in_the_font() -> None:
    have = font_characters()
    missing = sorted(ch for ch in make_cjk_font.wanted_characters() if ord(ch) not in have)
    assert not missing, f"run tools/make_cjk_font.py: the font lacks {''.join(missing)}"


def test_the_css_unicode_range_is_the_fonts_characters() -> None:
    css = (CLIENT_DIR / "css" / "fonts.css").read_text("utf-8")
    found: set[int] = set()
    for first, last in re.findall(r"U\+([0-9A-F]+)(?:-([0-9A-F]+))?", css):
        found.update(range(int(first, 16), int(last or first, 16) + 1))
    assert found == font_characters() - {0}  # the font may map U+0000 to .notdef


def test_the_font_is_small_and_carries_its_licence() -> None:
    assert FONT.stat().st_size < 250_000
    licence = (CLIENT_DIR / "fonts" / "OFL.txt").read_text("utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence


@pytest.mark.browser
def test_the_browser_loads_the_font_for_the_chinese_title(
    live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=1, bot_speed_ms=0)
    page = new_page(locale="zh-CN")
    page.goto(live.seat_url(seat))
    wait_joined(page)
    loaded = page.evaluate(
        "async () => (await document.fonts.load('16px \"PDK CJK\"', '跑得快报单困难'))"
        ".map(f => [f.family, f.status])"
    )
    assert loaded == [['"PDK CJK"', "loaded"]] or loaded == [["PDK CJK", "loaded"]]
