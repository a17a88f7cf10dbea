"""Every hand-made mutant in tests/mutants.py still finds the one line it breaks.

A refactor that moves a mutant's target text leaves the mutant STALE: the mutation
run reports it, but nothing in the suite did, so a merge could quietly retire a
mutant and with it the proof that some test catches that bug.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_mutants() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "paodekuai_mutants", ROOT / "tests" / "mutants.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_mutant_text_stands_exactly_once_in_its_file() -> None:
    mutants = load_mutants().MUTANTS
    stale = {
        m.name: count
        for m in mutants
        if (count := (ROOT / m.path).read_text("utf-8").count(m.old)) != 1
    }
    assert stale == {}


def test_every_mutant_has_its_own_name_and_changes_something() -> None:
    mutants = load_mutants().MUTANTS
    names = [m.name for m in mutants]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    assert [m.name for m in mutants if m.old == m.new or not m.tests] == []
