"""README is the front page: at most 250 lines, its two commands the ones that exist and that CI
runs (and all it runs), the packages they install, the command that builds the documentation site,
and a link to every page of docs/; run_example.sh says at once when no GPU can run it."""

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_the_readme_is_a_front_page():
    lines = README.count("\n")
    assert lines <= 250, f"README has {lines} lines: move the detail into a docs/ page"


def test_the_two_commands_are_the_scripts_ci_runs():
    section = README[README.index("## The two commands"):README.index("## Python quick start")]
    block = re.search(r"```sh\n(.*?)```", section, re.S)[1]
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert commands == ["bash scripts/run_example.sh", "bash scripts/test.sh"]
    assert all((ROOT / command.split()[1]).is_file() for command in commands)
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == "bash scripts/test.sh", "CI runs the README's test command last"
    # CI installs nothing itself: the README's command must set up a fresh machine, and CI proves it.
    assert not [line for line in ci if re.search(r"\b(apt|apt-get|pip|pip3)\b", line)], "CI installs through test.sh only"


def test_the_readme_lists_the_packages_the_commands_install():
    listed = {}
    for line in (ROOT / "scripts" / "debian-packages.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            package, group = line.split()[:2]
            listed.setdefault(group, []).append(package)
    assert set(listed) == {"build", "test"}
    said = {group: " ".join(re.search(rf"^- the {title}[^:]*: ([^\n]*(?:\n  [^\n]*)*)", README, re.M)[1].split())
            for group, title in (("build", "build"), ("test", "tests"))}
    assert said == {group: " ".join(packages) for group, packages in listed.items()}


def test_the_readme_names_the_docs_build_and_links_every_page():
    assert "`bash scripts/docs.sh`" in README and (ROOT / "scripts" / "docs.sh").is_file()
    pages = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")
                   if p.name != "index.md" and "_build" not in p.parts)
    unlinked = [page for page in pages if f"]({page})" not in README]
    assert unlinked == [], f"README's map of the docs does not link {unlinked}"


def test_run_example_says_at_once_that_a_machine_without_a_gpu_cannot_run_it():
    if shutil.which("nvidia-smi") or any(Path("/dev").glob("nvidia[0-9]*")):
        pytest.skip("a GPU machine: the example builds and runs there (scripts/gpu_check.sh)")
    start = time.monotonic()
    done = subprocess.run(["bash", str(ROOT / "scripts" / "run_example.sh")], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "KSCOPE_SKIP_APT": "1"})
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - start < 10, "it must say so before building"
    assert "has none that can run it" in done.stderr and "--simulated" in done.stderr, done.stderr
