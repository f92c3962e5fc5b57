"""docs/evaluate.md's catalogue holds: every finding the engine reports has a row, and every test a
row names exists (a C++ test as Suite.Name in tests/cpu, a pytest function in tests/python)."""

import re

from conftest import ROOT

import kscope

DOC = (ROOT / "docs" / "evaluate.md").read_text()
CATALOGUE = DOC[DOC.index("## The findings"):DOC.index("## What it does not see")]


def test_every_finding_has_a_row_with_its_name():
    names = [name for name, _, _ in kscope._core.findings()]
    assert len(names) == 13
    for name in names:
        assert f"`{name}`" in CATALOGUE, f"docs/evaluate.md has no row for the finding {name}"


def test_every_named_test_exists():
    cpp = "\n".join(p.read_text() for p in (ROOT / "tests" / "cpu").glob("*.cpp"))
    python = "\n".join(p.read_text() for p in (ROOT / "tests" / "python").glob("test_*.py"))
    cpp_named = set(re.findall(r"`(Evaluate\w*\.\w+)`", CATALOGUE))
    python_named = set(re.findall(r"`(test_\w+)`", CATALOGUE))
    assert len(cpp_named) >= 15 and len(python_named) >= 15
    for name in cpp_named:
        suite, test = name.split(".")
        assert re.search(rf"TEST\({suite},\s*{test}\)", cpp), f"no C++ test {name}"
    for name in python_named:
        assert re.search(rf"def {name}\(", python), f"no pytest {name}"


def test_every_finding_says_what_it_means_and_what_it_stops():
    for name, meaning, attack in kscope._core.findings():
        assert meaning and attack, name
