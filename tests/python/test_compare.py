"""ProfileResults.save / kscope.load, kscope.compare (DataFrame, warnings, refusals, plot) and
ProfileResults.to_gbench_json, on the simulated backend."""

import json
import os
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import kscope
from conftest import need
from kscope.testing.workloads import SimulatedDtype

DTYPES = (SimulatedDtype("float16", 2), SimulatedDtype("bfloat16", 2))  # objects, not numbers or strings


def profile(sim, scale=1.0, configs=((1024, 0.5, "f32", True, DTYPES[0]), (2048, 2.0, "f16", False, DTYPES[1])),
            **options):
    """A "copy" kernel of 1000 ns per 1024 elements times scale, with a run-to-run spread of 0.4%."""
    calls = []

    @kscope.analyze.kernel(configs=list(configs), runs=10, verbosity=0, **options)
    def copy(n, alpha, name, fused, dtype):
        calls.append(n)
        with kscope.annotate("copy"):
            sim.launch("copy_kernel", scale * n * (1000 / 1024) * (1 + 0.001 * (len(calls) % 5)))

    return copy()


def test_save_and_load_give_back_every_table(sim, tmp_path):
    results = profile(sim)
    results.save(tmp_path / "r.json")
    loaded = kscope.load(tmp_path / "r.json")
    assert loaded.parameters == ["n", "alpha", "name", "fused", "dtype"]
    original, back = results.to_dataframe(), loaded.to_dataframe()
    engine_columns = [c for c in original.columns if c != "dtype"]
    pd.testing.assert_frame_equal(original[engine_columns], back[engine_columns])
    pd.testing.assert_frame_equal(results.raw_dataframe().drop(columns="dtype"),
                                  loaded.raw_dataframe().drop(columns="dtype"))
    assert back["n"].dtype == np.int64 and back["alpha"].dtype == np.float64 and back["fused"].dtype == bool
    # The user's objects were saved as the engine's labels of them.
    assert original["dtype"].tolist() == [DTYPES[0], DTYPES[1]]
    assert back["dtype"].tolist() == ["simulated.float16", "simulated.bfloat16"]
    assert str(loaded).startswith("kscope: simulated GPU (no measurement) | backend test (simulated)")


def test_load_names_the_problem(tmp_path):
    # Issue 25: a path that is no file is the OSError open() raises (it was a RuntimeError of a C++ stream).
    with pytest.raises(FileNotFoundError, match=r"^\[Errno 2\] cannot read '.*missing.json': no such file; give a "
                                                r"file written by ProfileResults.save$"):
        kscope.load(tmp_path / "missing.json")
    with pytest.raises(IsADirectoryError, match="cannot read '.*': it is a directory; give a file written by "
                                                "ProfileResults.save"):
        kscope.load(tmp_path)
    (tmp_path / "v2.json").write_text('{"format": "kscope-results", "version": 2, "kscope_version": "9.0"}')
    with pytest.raises(kscope.ConfigError, match=r"format version 2 \(written by kscope 9.0\); this kscope "
                                                 r"\(.*\) reads version 1: update kscope to load it"):
        kscope.load(tmp_path / "v2.json")
    (tmp_path / "other.json").write_text("[]")
    with pytest.raises(kscope.ConfigError, match="is not a kscope results file .*written by ProfileResults.save"):
        kscope.load(tmp_path / "other.json")


def test_compare_gives_verdicts_with_the_users_config_objects(sim, tmp_path):
    baseline = profile(sim)
    slower = profile(sim, scale=1.1)
    frame = kscope.compare(baseline, slower)
    assert list(frame.columns) == [
        "Annotation", "n", "alpha", "name", "fused", "dtype", "Metric", "Unit", "Direction", "BaselineMedian",
        "CandidateMedian", "BaselineMean", "CandidateMean", "BaselineRuns", "CandidateRuns", "BaselineRSDPct",
        "CandidateRSDPct", "Ratio", "CI_Lower", "CI_Upper", "CI_Method", "U", "PValue", "UTestMethod", "CyclesRatio",
        "CyclesCI_Lower", "CyclesCI_Upper", "CyclesPValue", "Verdict", "Reason", "Flags"]
    assert frame["Verdict"].tolist() == ["slower", "slower"]
    assert frame["dtype"].tolist() == [DTYPES[0], DTYPES[1]]  # the objects themselves
    assert frame["n"].dtype == np.int64 and frame["BaselineRuns"].dtype == np.int64
    assert frame["Ratio"].to_numpy() == pytest.approx([1.1, 1.1])
    assert (frame["CI_Lower"] > 1.02).all() and (frame["PValue"] < 0.05).all()
    assert frame["Direction"].tolist() == ["lower is better"] * 2

    # Paths work as well, and the same numbers come out.
    baseline.save(tmp_path / "b.json")
    slower.save(tmp_path / "s.json")
    from_files = kscope.compare(str(tmp_path / "b.json"), tmp_path / "s.json")
    assert from_files["Verdict"].tolist() == ["slower", "slower"]
    assert from_files["PValue"].tolist() == frame["PValue"].tolist()
    assert from_files["dtype"].tolist() == ["simulated.float16", "simulated.bfloat16"]

    same = kscope.compare(baseline, profile(sim))
    assert same["Verdict"].tolist() == ["same", "same"]
    assert kscope.compare(baseline, slower, threshold_pct=15)["Verdict"].tolist() == ["same", "same"]
    assert kscope.compare(baseline, slower, directions={"test__kernel_duration": "higher"})["Verdict"].tolist() == [
        "faster", "faster"]


def test_rows_on_one_side_are_listed_and_warned_about(sim):
    baseline = profile(sim)
    candidate = profile(sim, configs=[(1024, 0.5, "f32", True, DTYPES[0]), (4096, 0.5, "f32", True, DTYPES[0])])
    with pytest.warns(kscope.CompareWarning, match="1 rows measured only in the baseline and 1 only in the candidate"):
        frame = kscope.compare(baseline, candidate)
    assert frame["Verdict"].tolist() == ["same", "only_in_baseline", "only_in_candidate"]
    assert frame["n"].tolist() == [1024, 2048, 4096]
    assert np.isnan(frame["Ratio"][1]) and frame["CandidateRuns"][1] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", kscope.CompareWarning)  # a CI gate that treats them as failures
        with pytest.raises(kscope.CompareWarning):
            kscope.compare(baseline, candidate)


def test_compare_refuses_and_names_options_in_python_terms(sim):
    cold = profile(sim)
    warm = profile(sim, cache_control="none")
    with pytest.raises(kscope.ConfigError, match=r"compare\(\) refuses to compare results taken with different "
                                                 r"cache_control \('all' vs 'none'\)"):
        kscope.compare(cold, warm)
    with pytest.raises(kscope.ConfigError, match=r"^threshold_pct must be a percentage from 0 up to \(not including\) "
                                                 r"100, got 150 \(the default is 2\)$"):
        kscope.compare(cold, cold, threshold_pct=150)
    with pytest.raises(kscope.ConfigError, match=r"^min_samples is 0"):
        kscope.compare(cold, cold, min_samples=0)
    with pytest.raises(kscope.ConfigError, match="min_samples must be a non-negative integer, not 2.5"):
        kscope.compare(cold, cold, min_samples=2.5)
    with pytest.raises(kscope.ConfigError, match=r"directions\['x'\] must be 'lower', 'higher' or 'undefined'"):
        kscope.compare(cold, cold, directions={"x": "up"})
    with pytest.raises(kscope.ConfigError, match=r"^directions names metric 'x', which neither result holds"):
        kscope.compare(cold, cold, directions={"x": "lower"})
    with pytest.raises(kscope.ConfigError, match="baseline must be a ProfileResults, an EvaluationResults or the path of a file"):
        kscope.compare(42, cold)


def test_compare_plot_is_written(sim, tmp_path):
    baseline = profile(sim)
    target = tmp_path / "comparison.png"
    kscope.compare(baseline, profile(sim, scale=1.1), plot=target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert target.stat().st_size > 10_000


def test_compare_writes_its_formats_files_under_output_prefix(sim, tmp_path):
    # The files are the rows of the comparison's format table: its table as CSV and as JSON, with the
    # DataFrame's columns (the config axes as the engine keeps them).
    baseline = profile(sim)
    frame = kscope.compare(baseline, profile(sim, scale=1.1), output_prefix=tmp_path / "cmp_")
    written = pd.read_csv(tmp_path / "cmp_comparison.csv")
    assert list(written.columns) == list(frame.columns)
    assert written["Verdict"].tolist() == frame["Verdict"].tolist()
    saved = json.loads((tmp_path / "cmp_comparison.json").read_text())
    assert saved["gate"] == frame.attrs["gate"] == "slower"
    assert [list(row) for row in saved["rows"]] == [list(frame.columns)] * len(frame)
    (tmp_path / "out").mkdir()
    kscope.compare(baseline, baseline, output_prefix=tmp_path / "out")  # a directory: the files inside it
    assert sorted(os.listdir(tmp_path / "out")) == ["comparison.csv", "comparison.json"]
    with pytest.raises(kscope.ConfigError, match=r"output_prefix must be a non-empty path prefix"):
        kscope.compare(baseline, baseline, output_prefix=3)


def test_gbench_json_has_google_benchmarks_schema(sim, tmp_path):
    results = profile(sim)
    results.to_gbench_json(tmp_path / "g.json")
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["context"]["json_schema_version"] == 1
    iterations = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    assert [b["name"] for b in iterations[:1]] == ["copy/n:1024/alpha:0.5/name:f32/fused:true/dtype:simulated.float16"]
    assert len(iterations) == 20 and {b["time_unit"] for b in iterations} == {"ns"}
    aggregates = [b["aggregate_name"] for b in doc["benchmarks"] if b["run_type"] == "aggregate"]
    assert aggregates == ["mean", "median", "stddev", "cv"] * 2


@pytest.mark.skipif("KSCOPE_GBENCH_TOOLS" not in os.environ,
                    reason="KSCOPE_GBENCH_TOOLS (Google Benchmark's tools/ directory, with compare.py) is not set")
def test_google_benchmarks_compare_reads_the_gbench_json(sim, tmp_path):
    """Google Benchmark's own compare.py logic (tools/gbench/report.py) on two files kscope wrote: it
    sees the 10% change, and its U test's p-value is kscope's."""
    sys.path.insert(0, os.environ["KSCOPE_GBENCH_TOOLS"])
    from gbench import report, util

    baseline, slower = profile(sim), profile(sim, scale=1.1)
    baseline.to_gbench_json(tmp_path / "b.json")
    slower.to_gbench_json(tmp_path / "s.json")
    difference = report.get_difference_report(util.load_benchmark_results(str(tmp_path / "b.json"), None),
                                              util.load_benchmark_results(str(tmp_path / "s.json"), None), utest=True)
    runs = [d for d in difference if d["run_type"] == "iteration"]
    assert len(runs) == 2
    ours = kscope.compare(baseline, slower)
    for d, p in zip(runs, ours["PValue"]):
        assert all(m["time"] == pytest.approx(0.1) for m in d["measurements"])
        assert d["utest"]["time_pvalue"] == pytest.approx(p, rel=1e-9)


@pytest.mark.parametrize("runs, tied, same", [
    (5, False, True),     # a side of at most 8 runs, no ties: both exact
    (10, True, True),     # ties: both the tie-corrected normal approximation
    (60, False, True),    # both sides over 8 runs and over 2500 pairs: both the normal approximation
    (10, False, False),   # over 8 runs a side, no ties, at most 2500 pairs: kscope exact, scipy approximate
])
def test_google_benchmarks_u_test_p_value_is_kscopes_only_where_scipy_computes_it_the_same_way(sim, runs, tied, same):
    """docs/compare.md, "Google Benchmark JSON": compare.py's U test is scipy.stats.mannwhitneyu(a, b,
    alternative='two-sided') with scipy's default method; which of kscope's p-values it gives back."""
    stats = need("scipy.stats")

    def measured(offset):
        calls = []

        @kscope.analyze.kernel(configs=[(1,)], runs=runs, warmup_runs=0, verbosity=0)
        def spin(n):
            calls.append(n)
            with kscope.annotate("spin"):
                sim.launch("spin", 1000.0 + offset + (len(calls) % 3 if tied else len(calls) * 1.7))

        return spin()

    baseline, candidate = measured(0.0), measured(3.0)
    ours = kscope.compare(baseline, candidate).iloc[0]
    theirs = stats.mannwhitneyu(baseline.raw_dataframe()["Value"], candidate.raw_dataframe()["Value"],
                                alternative="two-sided").pvalue
    assert (ours["PValue"] == pytest.approx(theirs, rel=1e-9)) == same, (ours["UTestMethod"], ours["PValue"], theirs)
    assert ours["UTestMethod"].startswith("exact") == (not tied and runs * runs <= 2500)
