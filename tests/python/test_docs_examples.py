"""Every Python example of README.md and docs/*.md runs as written, each in a fresh interpreter in
an empty directory. A block marks itself with the line before its fence:

- nothing: it runs here, on the simulated backend where it measures (kscope.testing);
- ``<!-- example: gpu -->``: on a GPU it measures the GPU (the GPU suite, marker gpu); here it runs
  with KSCOPE_SIMULATED=1, every profiled call on the simulated backend;
- ``<!-- example: excerpt -->``: lines of a larger program (the rest left out), only compiled
  (decorators alone with a function under them).

The C++ test program docs/install.md shows is tests/cmake/consumer's, word for word, which ctest
(cmake_package_consumer) builds against the installed package and runs.
"""

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kscope

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A fence at any indentation (inside a list item too); the marker has the fence's indentation.
BLOCK = re.compile(r"^(?P<indent> *)(?:<!-- example: (?P<kind>\w+) -->\n(?P=indent))?```python\n(?P<code>.*?)^ *```$",
                   re.M | re.S)
KINDS = {None, "gpu", "excerpt"}


def examples():
    found = []
    for page in PAGES:
        text = page.read_text()
        for block in BLOCK.finditer(text):
            line = text.count("\n", 0, block.start("code")) + 1
            found.append((f"{page.relative_to(ROOT)}:{line}", block["kind"], textwrap.dedent(block["code"])))
    return found


def params(kind):
    return [pytest.param(code, id=where, marks=[pytest.mark.gpu] if kind == "gpu" else [])
            for where, found_kind, code in examples() if found_kind == kind]


def run(code, directory, simulated=False):
    """Runs the example as a script in its own interpreter (it may set warning filters or change directory),
    importing the kscope these tests import; `simulated`: with KSCOPE_SIMULATED=1."""
    env = dict(os.environ, PYTHONPATH=str(Path(kscope.__file__).parents[1]), PYTHONDONTWRITEBYTECODE="1",
               MPLBACKEND="Agg")
    env.pop("KSCOPE_TOOL", None)
    if simulated:
        env["KSCOPE_SIMULATED"] = "1"
    # As a script of its own, as users run it: Triton's @jit reads its kernel's source from a file.
    script = Path(directory) / "example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=directory, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"the example failed:\n{code}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("code", params(None))
def test_example_runs(code, tmp_path):
    run(code, tmp_path)


@pytest.mark.parametrize("code", params("gpu"))
def test_gpu_example_runs(code, tmp_path):
    run(code, tmp_path)


@pytest.mark.parametrize("code", [pytest.param(code, id=where) for where, kind, code in examples() if kind == "gpu"])
def test_gpu_example_runs_without_a_gpu_under_kscope_simulated(code, tmp_path):
    # A Triton kernel needs Triton, which Debian does not package: such an example runs on the GPU only.
    if re.search(r"^(import|from) .*\btriton\b", code, re.M) and importlib.util.find_spec("triton") is None:
        pytest.skip("the example's Triton kernel needs Triton (pip install triton), not installed here")
    run(code, tmp_path, simulated=True)


@pytest.mark.parametrize("code", params("excerpt"))
def test_excerpt_compiles(code):
    if re.search(r"^@", code, re.M) and not re.search(r"^(def|class) ", code, re.M):
        code += "def decorated(): ...\n"  # decorators alone: what they decorate is left out
    compile(code, "<excerpt>", "exec")


def test_every_example_is_found_and_marked_with_a_known_kind():
    kinds = [kind for _, kind, _ in examples()]
    assert set(kinds) <= KINDS, f"unknown example kinds: {set(kinds) - KINDS}"
    assert kinds.count(None) >= 5 and kinds.count("gpu") >= 3
    fences = sum(page.read_text().count("```python\n") for page in PAGES)
    assert fences == len(kinds), "a ```python block the pattern does not read (a marker of another indentation?)"


def test_the_cpp_test_program_shown_is_the_one_ctest_builds_and_runs():
    program = (ROOT / "tests" / "cmake" / "consumer" / "simulated_sweep_test.cpp").read_text()
    assert f"```cpp\n{program}```" in (ROOT / "docs" / "install.md").read_text()
