"""Every public name of the Python package is documented where help() and the API reference read
it: each name of kscope.__all__ (and of its public submodules), and each public method and property
of those classes, has a docstring of its own (a compiled function more than its signature); every
option of kscope.analyze.kernel is described in its docstring, and every column of the summary
table in the docs."""

import inspect
import re
from pathlib import Path

import kscope
import kscope.analyze
import kscope.helion
import kscope.testing
import kscope.torch
import kscope.triton
from kscope import _core

ROOT = Path(__file__).resolve().parents[2]
MODULES = {"kscope": kscope, "kscope.analyze": kscope.analyze, "kscope.testing": kscope.testing,
           "kscope.triton": kscope.triton, "kscope.torch": kscope.torch, "kscope.helion": kscope.helion}


def description(obj):
    """The docstring's text, less the signature lines pybind11 puts first."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    lines = (doc or "").strip().splitlines()
    if inspect.isbuiltin(obj) or type(obj).__name__ == "instancemethod" or "pybind11" in type(obj).__name__:
        lines = [line for line in lines if not re.match(rf"^(\d+\. )?{re.escape(obj.__name__)}\(", line)]
    return "\n".join(lines).strip()


def public_names():
    for module_name, module in MODULES.items():
        for name in module.__all__:
            obj = getattr(module, name)
            yield f"{module_name}.{name}", obj
            if inspect.isclass(obj):
                for member_name, member in vars(obj).items():
                    if member_name.startswith("_") or not (callable(member) or isinstance(member, property)):
                        continue
                    # A property's own docstring (pybind11 sets it there; Python's is its getter's).
                    target = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                    yield f"{module_name}.{name}.{member_name}", target


def test_every_public_name_has_a_docstring():
    undocumented = [name for name, obj in public_names()
                    if not (inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__doc__)
                    and not description(obj) and not isinstance(obj, (str, int, float))]
    assert undocumented == [], f"public names without a docstring: {undocumented}"


def test_every_option_of_kernel_is_described_in_its_docstring():
    doc = kscope.analyze.kernel.__doc__
    options = [p for p in inspect.signature(kscope.analyze.kernel).parameters if not p.startswith("_")]
    missing = [p for p in options if not re.search(rf"\b{p}\b", doc)]
    assert missing == [], f"kscope.analyze.kernel's docstring does not describe {missing}"


def test_every_summary_column_is_described_in_the_docs():
    docs = "".join(page.read_text() for page in (ROOT / "docs").glob("*.md"))
    columns = [name for name, _ in _core.summary_columns()]
    missing = [c for c in columns if f"`{c}`" not in docs and not any(
        f"`{c.rsplit('_CI95', 1)[0]}`" in docs and c.endswith(suffix) for suffix in ("_CI95_Lower", "_CI95_Upper"))]
    assert missing == [], f"summary columns no docs page describes: {missing}"
