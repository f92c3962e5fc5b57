"""The bad-input catalogue (docs/bad-inputs.md) names, for every input, the test that checks it: each
name given there must be a test that exists (a renamed or removed test would leave the row
unchecked), and neither README nor a docs page holds a placeholder for a number still to be filled
in."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = (ROOT / "docs" / "bad-inputs.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TESTS = ROOT / "tests"


def catalogue_test_names():
    rows = [line for line in CATALOGUE.splitlines() if line.startswith("| ") and not line.startswith("| input")]
    return [name for row in rows for name in re.findall(r"`([^`]+)`", row.rsplit(" | ", 1)[-1])]


def python_tests():
    return {path.name: set(re.findall(r"^def (test_\w+)", path.read_text(), re.M))
            for path in (TESTS / "python").glob("test_*.py")}


def cpp_tests():
    """'Suite.Name' of every GoogleTest test under tests/."""
    found = set()
    for path in list((TESTS / "cpu").glob("*.cpp")) + list((TESTS / "gpu").glob("*.cu")):
        found.update(f"{s}.{n}" for s, n in re.findall(r"^TEST(?:_F)?\((\w+), (\w+)\)", path.read_text(), re.M))
    return found


def ctest_names():
    return set(re.findall(r"add_test\(NAME (\w+)", "".join(p.read_text() for p in ROOT.rglob("CMakeLists.txt")
                                                             if "build" not in p.parts)))


def test_every_test_the_catalogue_names_exists():
    python, cpp, ctests = python_tests(), cpp_tests(), ctest_names()
    every_python = set().union(*python.values())
    missing = []
    for name in catalogue_test_names():
        if m := re.fullmatch(r"(test_\w+\.py)::(test_\w+)", name):
            ok = m[2] in python.get(m[1], set())
        elif re.fullmatch(r"test_\w+", name):
            ok = name in every_python
        elif re.fullmatch(r"[\w/]+\.(py|cpp|cu|sh)", name):
            ok = (TESTS / name).exists() or (ROOT / name).exists() or any(TESTS.rglob(name))
        elif name in ctests:
            ok = True
        elif name == "CPP_TERMS":  # the pattern test_catalogue.py checks every message against
            ok = "CPP_TERMS = " in (TESTS / "python" / "test_catalogue.py").read_text()
        elif re.fullmatch(r"[A-Z]\w*(\.[A-Z]\w*)?\*?|[A-Z]\w*\.\*", name):
            pattern = re.escape(name).replace(r"\*", r"\w*")
            ok = any(re.fullmatch(pattern if "." in name else rf"\w+\.{pattern}", t) for t in cpp)
        else:
            ok = False
        if not ok:
            missing.append(name)
    assert missing == [], f"docs/bad-inputs.md names tests that do not exist: {missing}"
    assert len(catalogue_test_names()) > 50


def test_the_docs_hold_no_placeholder():
    # As the threshold table's cell read: "_placeholder — the lead fills in ... measured by ..._".
    for page in PAGES:
        found = re.search(r"(?<!\w)_placeholder|fills in the|\bTODO\b|\bTBD\b", page.read_text())
        assert found is None, f"{page.relative_to(ROOT)} still holds a placeholder: {found}"
