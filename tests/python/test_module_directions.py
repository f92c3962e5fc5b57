"""The kscope package's modules import one way: no module reaches itself again through imports,
those made only for type checkers (under TYPE_CHECKING) and those inside functions included, so
that each module can be read, and changed, knowing only the modules below it
(docs/architecture.md, "Rooms")."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "kscope"


def module_names():
    return {path.stem if path.stem != "__init__" else "" for path in PACKAGE.glob("*.py")} | {"_core"}


def imports_of(path, modules):
    """The package's modules that the file at `path` imports, wherever the import stands."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1 or base == "kscope" or base.startswith("kscope."):
                module = base.removeprefix("kscope").lstrip(".") if node.level == 0 else base
                top = module.split(".")[0]
                if top:
                    found.add(top)
                else:  # from . import a, b: the names that are modules
                    found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names
                         if alias.name.startswith("kscope.") and alias.name.split(".")[1] in modules)
    return found & modules


def graph():
    modules = module_names()
    return {path.stem: imports_of(path, modules) - {path.stem}
            for path in PACKAGE.glob("*.py") if path.stem != "__init__"}


def cycle(edges):
    """A list of modules each importing the next and the last the first, or None."""
    state = {}  # module -> "open" while on the path, "done" after

    def visit(module, path):
        state[module] = "open"
        for imported in sorted(edges.get(module, ())):
            if state.get(imported) == "open":  # on the path that led here
                stack = path + [module]
                return stack[stack.index(imported):]
            if imported not in state and (found := visit(imported, path + [module])):
                return found
        state[module] = "done"
        return None

    for module in sorted(edges):
        if module not in state and (found := visit(module, [])):
            return found
    return None


def test_the_checker_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) in (["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"])
    assert cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_imports_are_read_in_every_form():
    edges = graph()
    assert {"_results", "_roofline"} <= edges["analyze"]  # from ._results import ..., from . import _roofline
    assert "_measured" in edges["errors"]  # under TYPE_CHECKING
    assert "_plot_style" in edges["_roofline"]  # under TYPE_CHECKING


def test_no_module_imports_itself_back():
    found = cycle(graph())
    assert found is None, " -> ".join(found + found[:1]) + ": give these modules one direction"
