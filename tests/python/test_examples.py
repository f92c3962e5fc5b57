"""Every example runs: as a script with KSCOPE_SIMULATED=1 (no GPU: its work is kscope.testing.workloads'
simulated kernels), as a user runs it; its main() in this process on the simulated backend, checking
what it returns; and for real on a GPU (marker gpu)."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import kscope
from conftest import EXAMPLES, need
from kscope.testing import workloads

SCRIPTS = sorted(path.stem for path in EXAMPLES.glob("*.py") if "__main__" in path.read_text())  # not their modules
CPU_EXAMPLES = ["basic_sweep", "derive_tflops", "plot_results", "annotate_usage", "output_csv", "profile_twice",
                "evaluate_kernelbench", "choose_config"]
NEEDS_TORCH = {"evaluate_kernelbench"}  # torch's modules on CPU tensors when simulated


def load(name):
    sys.path.insert(0, str(EXAMPLES))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))
        sys.modules.pop(name, None)


@pytest.fixture
def run_example(sim, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write their files into the working directory
    return lambda name: load(name).main()


def test_every_example_is_run_here():
    assert set(CPU_EXAMPLES) | {"torch_vs_triton"} == set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_example_runs_as_a_script_without_a_gpu(name, tmp_path):
    if name in NEEDS_TORCH:
        need("torch")
    env = dict(os.environ, KSCOPE_SIMULATED="1", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=str(Path(kscope.__file__).parents[1]))
    done = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{name}.py failed under KSCOPE_SIMULATED=1:\n{done.stdout}\n{done.stderr}"


def test_basic_sweep(run_example):
    df, two, one = run_example("basic_sweep")
    assert df["n"].tolist() == [1 << 16, 1 << 20, 1 << 24] and (df["NumRuns"] == 10).all()
    assert two["n"].tolist() == [1 << 12, 1 << 14] and one["n"].tolist() == [1 << 18]


def test_evaluate_kernelbench(run_example):
    need("torch")
    honest, cached = run_example("evaluate_kernelbench")
    assert honest.to_dataframe()["Correct"].all()
    # The simulated backend sees no kernel of CPU tensors: every call is no_work, hence suspect.
    assert set(honest.findings()["Finding"]) == {"no_work"}
    assert set(cached.verdicts()) <= {"incorrect", "suspect"}


def test_choose_config(run_example):
    race = run_example("choose_config")
    assert race.winner == (1,)  # one kernel: no gaps, least work per launch overhead
    outcomes = dict(zip(race.to_dataframe()["pieces"], race.to_dataframe()["Outcome"]))
    assert outcomes[64] == "eliminated"
    assert race.cost["runs"] < race.cost["exhaustive_runs"] / 3


def test_derive_tflops(run_example):
    df = run_example("derive_tflops")
    tflops = df[df["Metric"] == "tflops"]
    assert len(tflops) == 6 and (tflops["Unit"] == "TFLOP/s").all()
    assert tflops["dtype"].tolist()[:2] == list(workloads.DTYPES)  # the very objects
    big = tflops[tflops["n"] == 4096]["AvgValue"].iloc[0]
    assert 400 < big < 500  # 2 n^3 / duration


def test_plot_results(run_example, tmp_path):
    results = run_example("plot_results")
    assert isinstance(results, kscope.ProfileResults)
    png = tmp_path / "plot_results.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_annotate_usage(run_example):
    df = run_example("annotate_usage").set_index(["Annotation", "n"])
    assert df.loc[("blocked", 1 << 16), "NumRuns"] == 5
    assert df.loc[("blocked", (1 << 16) + 1), "NumRuns"] == 0  # every run raised: NaN, not counted
    assert pd.isna(df.loc[("blocked", (1 << 16) + 1), "AvgValue"])
    assert df.loc[("plain", (1 << 16) + 1), "NumRuns"] == 5


def test_output_csv(run_example):
    raw, summary = run_example("output_csv")
    assert len(raw) == 10 and len(summary) == 2


def test_profile_twice(run_example):
    first, other, second = run_example("profile_twice")
    pd.testing.assert_frame_equal(first, second)  # deterministic simulated kernels: identical calls
    assert other["n"].tolist() == [512]


@pytest.mark.gpu
@pytest.mark.parametrize("name", CPU_EXAMPLES)
def test_example_on_gpu(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sys.path.insert(0, str(EXAMPLES))
    try:
        sys.modules.pop(name, None)
        importlib.import_module(name).main()
    finally:
        sys.path.remove(str(EXAMPLES))
