"""Player names: set in the settings, checked, and seen by the other seats."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from client_helpers import (
    LANGUAGES,
    LOCALES,
    Live,
    find_seed,
    screenshot,
    sent_types,
    state,
    strings,
    take_turn_with_hint_or_pass,
    wait_joined,
)

pytestmark = pytest.mark.browser


def set_name(page: Any, name: str) -> None:
    if not page.evaluate("() => document.querySelector('#settings-sheet').open"):
        page.click("#btn-settings")
    page.fill("#name-input", name)
    page.press("#name-input", "Enter")


def test_a_name_set_in_the_settings_is_what_the_other_seat_sees(
    live: Live, new_page: Callable[..., Any]
) -> None:
    host_seat, guest_seat = live.create_table(seed=3, humans=2, bots=["normal"])
    host = new_page(record_sent=True)
    host.goto(live.seat_url(host_seat))
    wait_joined(host)
    guest = new_page()
    guest.goto(live.seat_url(guest_seat))
    wait_joined(guest)
    assert guest.inner_text("#seat-left-name") == strings("en")["seat.player"].format(n=1)

    set_name(host, "  王小明 ")
    host.keyboard.press("Escape")
    # The host sits on the guest's left; the name arrives with the next state.
    guest.wait_for_selector("#seat-left-name:text-is('王小明')")
    assert host.inner_text("#me-label") == strings("en")["seat.you"]
    # Kept across a reload, and not sent again when the table already has it.  The
    # bot leads this deal: wait for its move first, so the version then stands still
    # until a human acts (reading it before the bot's pause ended was a race).
    host.wait_for_function("() => pdk.state().version >= 1")
    version = state(host)["version"]
    host.reload()
    wait_joined(host)
    # The name is compared while the first state is drawn: a rename sent again would be
    # in the record by the time the page shows that state.
    assert sent_types(host) == ["join"]
    assert state(host)["version"] == version
    host.click("#btn-settings")
    assert host.input_value("#name-input") == "王小明"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_name_with_markup_is_explained_and_never_sent(
    lang: str, live: Live, new_page: Callable[..., Any]
) -> None:
    (seat,) = live.create_table(seed=3, bot_speed_ms=0)
    page = new_page(locale=LOCALES[lang], record_sent=True)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    table = strings(lang)
    set_name(page, "<b>Mei</b>")
    assert page.inner_text("#name-why") == table["name.markup"]
    assert page.get_attribute("#name-input", "aria-invalid") == "true"
    # The field stops typing at 24; a longer value put there by a script is refused.
    page.evaluate(
        "() => { const i = document.querySelector('#name-input');"
        " i.value = 'y'.repeat(25); i.dispatchEvent(new Event('change')); }"
    )
    assert page.inner_text("#name-why") == table["name.long"]
    # Both were refused by the handlers that just ran: nothing went to the server.
    assert sent_types(page) == ["join"]
    assert state(page)["table"]["seats"][0]["name"] == "You"
    assert page.locator("#toast").is_hidden()
    box = page.locator("#name-why").bounding_box()
    assert box is not None
    assert box["x"] + box["width"] <= page.viewport_size["width"]
    if lang == "en":
        screenshot(page, "name-setting.png")


def host_leads(state: Any) -> bool:
    return bool(state.deal.turn == 0)


def test_renaming_twice_during_your_own_lead_shows_the_second_name(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """Issue 28, defect 5: while we lead nobody moves, so the version stands still; the
    second new name must be sent (and shown) all the same."""
    seed, _ = find_seed("classic", host_leads)
    host_seat, guest_seat = live.create_table(seed=seed, humans=2, bots=["normal"])
    host = new_page(record_sent=True)
    host.goto(live.seat_url(host_seat))
    first = wait_joined(host)
    assert first["view"]["turn"] == 0
    guest = new_page()
    guest.goto(live.seat_url(guest_seat))
    wait_joined(guest)
    set_name(host, "Mei")
    guest.wait_for_selector("#seat-left-name:text-is('Mei')")
    set_name(host, "Lin")
    guest.wait_for_selector("#seat-left-name:text-is('Lin')")
    assert state(host)["version"] == first["version"], "nobody moved in between"


def test_a_name_only_the_server_refuses_shows_its_reason_and_is_not_sent_again(
    live: Live, new_page: Callable[..., Any]
) -> None:
    """The client does not restate the server's rules (look-alikes of the bots' names by
    confusable skeleton, marks without a letter): it sends the name and shows the refusal."""
    (seat,) = live.create_table(seed=3, bot_speed_ms=0)
    page = new_page(record_sent=True)
    page.goto(live.seat_url(seat))
    wait_joined(page)
    set_name(page, "\u0410nna")  # a Cyrillic A: looks like the bot Anna
    page.wait_for_function(
        "() => document.querySelector('#name-why').textContent.includes('looks like')"
    )
    why = page.inner_text("#name-why")
    assert why.startswith(strings("en")["name.refused"].split("{")[0])
    assert page.get_attribute("#name-input", "aria-invalid") == "true"
    page.keyboard.press("Escape")
    # The next states (our move, the bots' answers) do not send it again.
    version = state(page)["version"]
    take_turn_with_hint_or_pass(page)
    page.wait_for_function(f"() => pdk.state().version > {version}")
    assert sent_types(page).count("rename") == 1
