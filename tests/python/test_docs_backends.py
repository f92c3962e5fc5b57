"""The docs' lists of backends hold exactly the engine's registry's backend= choices: a backend added
to the registry and left out of the docs fails here, as does a name the registry no longer has."""

import re
from pathlib import Path

from kscope import _core
from registered_backends import duration_backends, python_backends

DOCS = Path(__file__).resolve().parents[2] / "docs"


def backend_table():
    """{backend= choice: its row} of the table in docs/from-nsight-python.md, in its order."""
    lines = (DOCS / "from-nsight-python.md").read_text().splitlines()
    start = lines.index("| `backend=` | measures | metric names |")
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        first = line.split("|")[1].strip()
        if first != "`None` (default)":
            rows[re.fullmatch(r"`'([^']+)'`", first)[1]] = line
    return rows


def test_the_backend_table_lists_every_choice():
    assert list(backend_table()) == python_backends()


def test_the_backend_table_names_each_duration_backends_metric():
    metrics = {d.python_name: d.default_metrics[0] for d in _core.backends() if d.python_name}
    rows = backend_table()
    missing = [name for name in duration_backends() if f"`{metrics[name]}`" not in rows[name]]
    assert missing == [], f"docs/from-nsight-python.md's backend= rows name no metric of their own for {missing}"


def test_the_python_surface_lists_every_choice():
    page = (DOCS / "python.md").read_text()
    listed = re.search(r"^\| `backend` \| `None` \| \*kscope\*: ((?:`'[^']+'`(?:, )?)+);", page, re.M)
    assert listed, "docs/python.md's options table no longer lists backend='s choices in its row"
    assert re.findall(r"`'([^']+)'`", listed[1]) == python_backends()
