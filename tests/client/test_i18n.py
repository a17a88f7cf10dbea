"""Every language carries every string: labels, reason codes, preset summaries, rules page."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from client_helpers import CLIENT_DIR, LANGUAGES, strings

from server.engine.rules import PRESETS
from server.presenter import WIRE_REASONS

PLACEHOLDER = re.compile(r"\{(\w+)\}")
KINDS = ("single", "pair", "pair_run", "straight", "trio_two", "airplane", "bomb")


def keys_used_by_client() -> set[str]:
    """Literal keys in the JS (t("a.b")) and in index.html (data-i18n*)."""
    used: set[str] = set()
    for path in [*(CLIENT_DIR / "js").glob("*.js"), CLIENT_DIR / "index.html"]:
        text = path.read_text("utf-8")
        used.update(re.findall(r"""\bt\(\s*["']([\w.-]+)["']""", text))
        used.update(re.findall(r'data-i18n(?:-aria|-title)?="([\w.-]+)"', text))
    return used


@pytest.mark.parametrize("lang", LANGUAGES)
def test_language_has_exactly_the_english_keys(lang: str) -> None:
    assert set(strings(lang)) == set(strings("en"))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_string_is_blank_and_placeholders_match_english(lang: str) -> None:
    english = strings("en")
    for key, text in strings(lang).items():
        assert text.strip() or key == "match.and", f"{lang}: {key} is blank"
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(english[key])), (
            f"{lang}: {key} placeholders differ from English"
        )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_reason_code_the_server_can_send_is_worded(lang: str) -> None:
    table = strings(lang)
    codes = [reason.value for enum in WIRE_REASONS for reason in enum]
    missing = [code for code in codes if f"reason.{code}" not in table]
    assert not missing


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_preset_and_combination_kind_is_named(lang: str) -> None:
    table = strings(lang)
    for preset in [*PRESETS, "custom"]:
        assert f"preset.{preset}.name" in table
        assert f"preset.{preset}.summary" in table
    for kind in KINDS:
        assert f"kind.{kind}" in table


def test_every_literal_key_in_the_client_exists_in_english() -> None:
    english = strings("en")
    missing = sorted(k for k in keys_used_by_client() if k not in english)
    assert not missing


class _RulesOutline(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headings = 0
        self.card_rows: list[str] = []
        self.faq = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h3":
            self.headings += 1
        if tag == "details":
            self.faq += 1
        for name, value in attrs:
            if name == "data-cards" and value is not None:
                self.card_rows.append(value)


def outline(lang: str) -> _RulesOutline:
    parser = _RulesOutline()
    parser.feed((CLIENT_DIR / "rules" / f"{lang}.html").read_text("utf-8"))
    return parser


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_page_has_the_same_sections_and_card_examples_as_english(lang: str) -> None:
    page, english = outline(lang), outline("en")
    assert page.headings == english.headings
    assert page.faq == english.faq >= 4
    assert page.card_rows == english.card_rows


def test_rules_page_examples_are_real_cards_of_the_deck() -> None:
    card = re.compile(r"^[3-9TJQKA2][SHDC]$")
    for row in outline("en").card_rows:
        codes = row.split()
        assert codes, row
        assert all(card.match(c) for c in codes), row
        assert len(set(codes)) == len(codes), row
        assert not {"2H", "2D", "2C"} & set(codes), row


def test_seed_wording_chinese_strong_level_and_german_must_beat() -> None:
    assert strings("zh-Hans")["level.strong"] == "困难"
    german = strings("de")
    assert german["passWhy.must_beat"] == "Stichzwang"
    rules_de = (CLIENT_DIR / "rules" / "de.html").read_text("utf-8")
    assert "Stichzwang" in rules_de
    for text in [*german.values(), rules_de]:
        assert "Stechpflicht" not in text


class _Marked(HTMLParser):
    """The ``data-tip`` strategy tips and the ``id``-ed FAQ entries of a rules page."""

    def __init__(self) -> None:
        super().__init__()
        self.tips: list[str] = []
        self.faq_ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "li" and found.get("data-tip"):
            self.tips.append(str(found["data-tip"]))
        if tag == "details" and found.get("id"):
            self.faq_ids.append(str(found["id"]))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_page_has_the_strategy_tips_and_why_48_cards(lang: str) -> None:
    page = _Marked()
    page.feed((CLIENT_DIR / "rules" / f"{lang}.html").read_text("utf-8"))
    assert page.tips == ["must-beat", "bomb", "track", "endgame"]
    assert "why-48" in page.faq_ids


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_key_is_written_twice_in_a_language_file(lang: str) -> None:
    # json.loads keeps the last of two equal keys silently: a merge that words a key
    # twice would show whichever came later, and the other would rot unseen.
    pairs: list[tuple[str, object]] = []

    def keep(items: list[tuple[str, object]]) -> dict[str, object]:
        pairs.extend(items)
        return dict(items)

    json.loads((CLIENT_DIR / "i18n" / f"{lang}.json").read_text("utf-8"), object_pairs_hook=keep)
    keys = [key for key, _ in pairs]
    assert sorted({k for k in keys if keys.count(k) > 1}) == []
