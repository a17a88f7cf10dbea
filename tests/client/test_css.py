"""The stylesheets, read as text: what no page may do whatever state it draws."""

from __future__ import annotations

import re

from client_helpers import CLIENT_DIR

# The spinner beside an action on its way to the server: it lasts as long as the wait,
# which the connection bounds (a stalled socket is given up and the page says so).
ENDLESS_ALLOWED = {".status .pending::after"}


def endless_animations() -> set[str]:
    """The selectors of every rule that runs an animation for ever."""
    found = set()
    for sheet in sorted((CLIENT_DIR / "css").glob("*.css")):
        text = re.sub(r"/\*.*?\*/", "", sheet.read_text(), flags=re.DOTALL)
        for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", text):
            if re.search(r"animation(-iteration-count)?\s*:[^;]*\binfinite\b", body):
                found.add(" ".join(selector.split()))
    return found


def test_nothing_animates_for_ever_but_the_spinner_of_an_action_on_its_way() -> None:
    """A turn, a last card or a lost connection can last minutes: an animation running all
    that time keeps a phone's CPU busy for nothing (the turn glow took a third of a core
    in the headless shell).  They beat a few times and stop."""
    assert endless_animations() == ENDLESS_ALLOWED
