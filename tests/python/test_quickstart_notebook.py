"""examples/notebooks/quickstart.ipynb executed end to end in a real Jupyter kernel (nbclient,
ipykernel): on the simulated backend on CPU, for real on a GPU."""

import json
import os
from pathlib import Path

import pytest

import kscope
from conftest import need

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "notebooks" / "quickstart.ipynb"


def execute(tmp_path, monkeypatch, simulated):
    nbformat = need("nbformat")
    nbclient = need("nbclient")
    need("ipykernel")
    # The kernel is a new process: it finds this kscope through PYTHONPATH.
    package_root = str(Path(kscope.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    if simulated:
        monkeypatch.setenv("KSCOPE_SIMULATED", "1")
    else:
        monkeypatch.delenv("KSCOPE_SIMULATED", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    (tmp_path / "executed.ipynb").write_text(json.dumps(nb, indent=1))  # for a look afterwards
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def outputs_of(cell, kind):
    """The texts of a cell's outputs of a MIME type, or of its stderr stream ("stderr")."""
    if kind == "stderr":
        return [o["text"] for o in cell.outputs if o["output_type"] == "stream" and o["name"] == "stderr"]
    return [o["data"][kind] for o in cell.outputs if kind in o.get("data", {})]


def check_outputs(cells):
    sweep_cell = next(c for c in cells if "results = sweep(configs=configs)" in c.source)
    [table] = outputs_of(sweep_cell, "text/html")
    assert "kscope-results" in table and "<th>Flags</th>" in table and "cache_control all" in table
    progress = "".join(outputs_of(sweep_cell, "stderr"))
    assert "config 8/8 (n=4096, dtype=float32)" in progress, progress
    [png] = outputs_of(sweep_cell, "image/png")  # the figure, inline
    assert png
    second = next(c for c in cells if "sweep(configs=[(8192" in c.source)
    [table] = outputs_of(second, "text/html")
    assert "<td>8192</td>" in table
    assert outputs_of(second, "image/png")
    return sweep_cell


def test_quickstart_notebook_runs_in_a_kernel_on_the_simulated_backend(tmp_path, monkeypatch):
    cells = execute(tmp_path, monkeypatch, simulated=True)
    check_outputs(cells)
    assert (tmp_path / "quickstart_sweep_log.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.gpu
def test_quickstart_notebook_runs_on_the_gpu(tmp_path, monkeypatch):
    cells = execute(tmp_path, monkeypatch, simulated=False)
    sweep_cell = check_outputs(cells)
    assert "simulated" not in outputs_of(sweep_cell, "text/html")[0]
    speed_of_light = next(c for c in cells if "speed_of_light()" in c.source)
    assert any("Bottleneck" in html for html in outputs_of(speed_of_light, "text/html"))
