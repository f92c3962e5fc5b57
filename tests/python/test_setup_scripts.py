"""The set-up of a fresh machine: one package list (scripts/debian-packages.txt) that the scripts
install from, and a test whose tool is missing skipped naming the package that provides it."""

import re
import subprocess
from pathlib import Path

from conftest import PACKAGES, package_for

ROOT = Path(__file__).resolve().parents[2]


def listed():
    return [line.split() for line in PACKAGES.read_text().splitlines() if line.strip() and not line.startswith("#")]


def test_every_module_a_test_needs_has_its_package_in_the_list():
    needed = set()
    for test in (ROOT / "tests" / "python").glob("*.py"):
        needed |= {name.split(".")[0] for name in re.findall(r"""\bneed\(["']([\w.]+)["']\)""", test.read_text())}
        needed |= set(re.findall(r"""missing_reason\(["']import:(\w+)["']\)""", test.read_text()))
    assert {"hypothesis", "torch", "nbclient", "scipy", "mypy"} <= needed
    for module in needed:
        assert package_for(f"import:{module}")  # raises LookupError naming the module


def test_the_list_is_one_package_a_line_in_its_groups():
    rows = listed()
    assert all(len(row) >= 2 and row[1] in ("build", "test") for row in rows), rows
    packages = [row[0] for row in rows]
    assert len(packages) == len(set(packages)), "a package listed twice"
    assert all(re.fullmatch(r"(import|program):[\w.+-]+|GTest", what) for row in rows for what in row[2:])


def test_the_docs_site_is_skipped_naming_the_packages_it_lacks():
    # A Python that can import nothing stands for a machine without Sphinx and its extensions.
    done = subprocess.run(["bash", str(ROOT / "scripts" / "docs.sh"), "/nonexistent"], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "KSCOPE_DOCS_PYTHON": "/bin/false",
                                           "KSCOPE_MISSING_TOOL_EXIT": "77"})
    assert done.returncode == 77, done.stdout + done.stderr
    assert done.stdout.startswith("SKIPPED: the documentation site needs python3-sphinx python3-myst-parser furo "
                                  "python3-breathe"), done.stdout
    assert "apt-get install python3-sphinx" in done.stdout
    alone = subprocess.run(["bash", str(ROOT / "scripts" / "docs.sh"), "/nonexistent"], capture_output=True,
                           text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "KSCOPE_DOCS_PYTHON": "/bin/false"})
    assert alone.returncode == 1 and alone.stdout.startswith("the documentation site needs python3-sphinx"), alone.stdout


def test_scripts_install_from_the_list_and_ci_through_the_readmes_command():
    for script in ("test.sh", "run_example.sh"):
        text = (ROOT / "scripts" / script).read_text()
        assert "source scripts/install_packages.sh" in text and "kscope_install_packages" in text, script
        assert "apt-get install" not in text, f"{script} installs from scripts/debian-packages.txt only"
