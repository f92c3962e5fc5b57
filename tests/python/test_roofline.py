"""Why is it slow, without counters (issue 27): work= and kscope.Work, the roofline columns and the
Bound verdict, the device's roofs, the roofline plot, and their errors in Python's words, on the
simulated backend posing as an H200 (its default) or another device."""

import math
import re
import sys

import pytest

import kscope
from kscope import ConfigError, SweepError
from kscope import _notebook

QUIET = dict(verbosity=0)
PNG = b"\x89PNG\r\n\x1a\n"
CPP_TERMS = re.compile(r"Settings::|Backend::|std::|Work::|FlopKind|Precision::|DeclaredWork|nullopt")
H200_DRAM = 2 * 3201e6 * 6144 / 8  # bytes/s at the rated memory clock
H200_FP16_TENSOR = 132 * 1980e6 * 4096  # FLOP/s at the rated SM clock


def copy_and_gemm(sim, **options):
    """A copy of n floats (4 us) and an n x n x n fp16 GEMM (1 ms) per config."""

    @kscope.analyze.kernel(configs=[(1 << 20,), (1 << 22,)], runs=3, **QUIET, **options)
    def f(n):
        with kscope.annotate("copy"):
            sim.launch("copy_kernel", 4000.0 * n / (1 << 20))
        with kscope.annotate("gemm"):
            sim.launch("gemm_kernel", 1e6)

    return f


def per_annotation():
    return {"copy": lambda n: kscope.Work(bytes=8 * n),
            "gemm": lambda n: kscope.Work(bytes=6 * 4096**2, flops=2 * 4096**3, kind="fp16", tensor_cores=True)}


def test_the_roofline_columns_from_durations_and_declared_work(sim):
    df = copy_and_gemm(sim, work=per_annotation())().to_dataframe()
    copy = df[df["Annotation"] == "copy"].iloc[0]
    # 8 MiB in 4 us: 2.1 TB/s, 42.6% of the H200's 4.92 TB/s; no FLOPs: 0% of compute.
    assert copy["AchievedGBps"] == pytest.approx(8 * (1 << 20) / 4e-6 / 1e9)
    assert copy["DRAMRoofGBps"] == pytest.approx(H200_DRAM / 1e9)
    assert copy["DRAMRoofPct"] == pytest.approx(100 * 8 * (1 << 20) / 4e-6 / H200_DRAM)
    assert copy["ComputeRoofPct"] == 0 and copy["ArithmeticIntensity"] == 0
    assert copy["Bound"] == "latency" and copy["WorkKind"] == "fp32"
    gemm = df[df["Annotation"] == "gemm"].iloc[0]
    assert gemm["WorkKind"] == "fp16 tensor"
    assert gemm["AchievedTFLOPs"] == pytest.approx(2 * 4096**3 / 1e-3 / 1e12)
    assert gemm["ComputeRoofTFLOPs"] == pytest.approx(H200_FP16_TENSOR / 1e12)
    assert gemm["ComputeRoofPct"] == pytest.approx(100 * 2 * 4096**3 / 1e-3 / H200_FP16_TENSOR)
    assert gemm["ArithmeticIntensity"] == pytest.approx(2 * 4096**3 / (6 * 4096**2))
    assert gemm["Bound"] == "latency"  # 12.8% of the fp16 tensor roof
    # Three identical runs: the interval is the mean itself.
    assert gemm["ComputeRoofPct_CI95_Lower"] == pytest.approx(gemm["ComputeRoofPct"])
    big = df[(df["Annotation"] == "copy") & (df["n"] == 1 << 22)].iloc[0]
    assert big["WorkBytes"] == 8 * (1 << 22)


def test_the_percentages_follow_each_runs_observed_clocks(sim):
    # Readings around the runs: the SM clock falls from 1980 to 990 MHz; the compute roof with it.
    sim.set_clock_readings([(990.0, 3201.0)])

    @kscope.analyze.kernel(runs=2, warmup_runs=0, **QUIET,
                           work=lambda: kscope.Work(flops=1e12, kind="fp16", tensor_cores=True))
    def f():
        with kscope.annotate("gemm"):
            sim.launch("gemm", 2e6)

    row = f().to_dataframe().iloc[0]
    assert row["ComputeRoofTFLOPs"] == pytest.approx(132 * 990e6 * 4096 / 1e12)
    assert row["ComputeRoofPct"] == pytest.approx(100 * 0.5e15 / (132 * 990e6 * 4096))
    assert row["Bound"] == "compute"  # 93.5% of the roof at 990 MHz, 46.7% at 1980


def test_bound_thresholds_are_an_option(sim):
    work = per_annotation()
    work["copy"] = lambda n: kscope.Work(bytes=8 * n * 2)  # 85% of DRAM
    default = copy_and_gemm(sim, work=work)().to_dataframe()
    strict = copy_and_gemm(sim, work=work, bound_thresholds={"memory_pct": 90})().to_dataframe()
    assert default[default["Annotation"] == "copy"]["Bound"].tolist() == ["memory", "memory"]
    assert strict[strict["Annotation"] == "copy"]["Bound"].tolist() == ["latency", "latency"]


def test_rows_without_declared_work_or_duration_stay_empty(sim):
    results = copy_and_gemm(sim, work={"gemm": per_annotation()["gemm"]},
                            derive_metric=lambda t, n: (8 * n / t, "GB/s"))()
    df = results.to_dataframe()
    assert df[df["Annotation"] == "copy"]["WorkKind"].isna().all()
    assert df[df["Annotation"] == "copy"]["Bound"].isna().all()
    derived = df[(df["Annotation"] == "gemm") & (df["Metric"] == "<lambda>")]
    assert derived["WorkKind"].tolist() == ["fp16 tensor"] * 2  # the work is on every row of the annotation
    assert derived["Bound"].isna().all()  # the roofline only on the duration's
    assert "DRAM%" in str(results) and "Bound" in str(results)
    html = results._repr_html_()
    assert "Compute%" in html and "latency" in html
    # Without work= nothing changes in the readable views.
    plain = copy_and_gemm(sim)()
    assert "DRAM%" not in str(plain) and "Compute%" not in plain._repr_html_()


def test_a_work_function_may_return_none_and_is_called_once_per_annotation_and_config(sim):
    calls = []

    def work(n):
        calls.append(n)
        return None if n == 1 << 20 else kscope.Work(bytes=8 * n)

    df = copy_and_gemm(sim, work={"copy": work})().to_dataframe()
    assert calls == [1 << 20, 1 << 22]
    assert df[df["Annotation"] == "copy"]["WorkBytes"].isna().tolist() == [True, False]


@pytest.mark.parametrize("declared, message", [
    (dict(bytes=-1), "kscope.Work bytes=-1: give the bytes the region must move between DRAM and the SMs"),
    (dict(flops=math.nan), "kscope.Work flops=nan: give the floating-point operations"),
    (dict(bytes="8"), "kscope.Work bytes='8'"),
    (dict(bytes=1, kind="fp4"), "kscope.Work kind='fp4': give one of 'fp64', 'fp32', 'fp16', 'bf16', 'fp8'"),
    (dict(bytes=1, kind="tf32"), "TF32 is fp32 on tensor cores: kind='fp32', tensor_cores=True"),
    (dict(flops=1, kind="fp8"), "fp8 FLOPs run on tensor cores only: add tensor_cores=True"),
    (dict(), "kscope.Work has neither bytes nor FLOPs: declare at least one, or return None"),
    (dict(bytes=1, tensor_cores=1), "kscope.Work tensor_cores=1: give True or False"),
])
def test_bad_work_is_a_config_error_in_python_terms(declared, message):
    with pytest.raises(ConfigError) as info:
        kscope.Work(**declared)
    assert message in str(info.value)
    assert not CPP_TERMS.search(str(info.value)), str(info.value)


def test_a_bad_work_option_is_refused_at_decoration(sim):
    def body(n):
        pass

    for work, message in [
        (42, "work must be a function of the config's values returning a kscope.Work"),
        ({"copy": "8n"}, "work['copy'] must be a function"),
        (lambda: kscope.Work(bytes=1), "work is called with the 1 config values, as the profiled function is, but "
                                       "<lambda>() does not accept them"),
        ({"": lambda n: None}, "'' is not an annotation name"),
        (dict(bound_thresholds={"memory": 60}), "bound_thresholds has unknown keys ['memory']"),
        (dict(bound_thresholds={"memory_pct": 0}), "bound_thresholds['memory_pct'] is 0: give a percentage"),
        (dict(bound_thresholds=60), "bound_thresholds must be a dict of memory_pct and compute_pct"),
    ]:
        options = work if isinstance(work, dict) and "bound_thresholds" in work else dict(work=work)
        with pytest.raises(ConfigError) as info:
            kscope.analyze.kernel(configs=[(1,)], **options)(body)
        assert message in str(info.value), str(info.value)
        assert not CPP_TERMS.search(str(info.value)), str(info.value)


def test_a_work_function_returning_something_else_fails_its_config_naming_it(sim):
    f = copy_and_gemm(sim, work={"copy": lambda n: (8 * n, 0)})
    with pytest.raises(SweepError) as info:
        f()
    text = str(info.value)
    assert "config 1/2 (n=1048576) failed in run 1" in text
    assert "work function <lambda>() returned (8388608, 0) for annotation 'copy': return a kscope.Work(" in text
    assert not CPP_TERMS.search(text), text
    assert isinstance(info.value.__cause__, ConfigError)


def test_a_work_function_raising_keeps_the_configs_measured_before(sim):
    def work(n):
        if n > 1 << 20:
            raise ValueError("no model for this size")
        return kscope.Work(bytes=8 * n)

    with pytest.raises(SweepError) as info:
        copy_and_gemm(sim, work={"copy": work})()
    assert isinstance(info.value.__cause__, ValueError)
    partial = info.value.partial_results.to_dataframe()
    assert set(partial["n"]) == {1 << 20} and partial["WorkBytes"].notna().any()


def test_an_annotation_named_in_work_that_never_ran_is_reported(sim):
    @kscope.analyze.kernel(runs=1, work={"gemmm": lambda: kscope.Work(bytes=1)}, **QUIET)
    def f():
        with kscope.annotate("gemm"):
            sim.launch("gemm", 10)

    with pytest.warns(kscope.ProfilerWarning) as caught:
        f()
    messages = [str(w.message) for w in caught]
    assert "work names 'gemmm', which no run recorded; recorded annotations: 'gemm'" in messages, messages
    assert not any(CPP_TERMS.search(m) for m in messages), messages


def test_the_roofs_at_rated_and_observed_clocks(sim):
    sim.set_clock_readings([(1755.0, 3201.0)])
    roofs = copy_and_gemm(sim, work=per_annotation())().roofs()
    dram = roofs.iloc[0]
    assert (dram["Roof"], dram["Unit"]) == ("DRAM", "GB/s")
    assert dram["AtRatedClocks"] == pytest.approx(H200_DRAM / 1e9)
    fp16 = roofs[roofs["Roof"] == "fp16 tensor"].iloc[0]
    assert fp16["AtRatedClocks"] == pytest.approx(H200_FP16_TENSOR / 1e12)
    assert fp16["AtObservedClocks"] == pytest.approx(132 * 1755e6 * 4096 / 1e12)
    assert fp16["ObservedClockMHz"] == pytest.approx(1755)
    assert roofs["Roof"].tolist() == ["DRAM", "fp64", "fp64 tensor", "fp32", "fp32 tensor", "fp16", "fp16 tensor",
                                      "bf16", "bf16 tensor", "fp8 tensor"]


def test_another_device_has_its_own_roofs(sim):
    sim.set_device(name="simulated A100", sm_count=108, compute_capability=80, memory_bus_width_bits=5120,
                   rated_sm_clock_mhz=1410, rated_memory_clock_mhz=1215)
    results = copy_and_gemm(sim, work=per_annotation())()
    roofs = results.roofs()
    assert "fp8 tensor" not in roofs["Roof"].tolist()  # Ampere has none
    assert roofs[roofs["Roof"] == "fp16 tensor"]["AtRatedClocks"].iloc[0] == pytest.approx(312, rel=0.01)
    assert roofs.iloc[0]["AtRatedClocks"] == pytest.approx(1555, rel=0.01)
    df = results.to_dataframe()
    assert df["GPU"].iloc[0] == "simulated A100"
    assert df[df["Annotation"] == "gemm"]["ComputeRoofTFLOPs"].iloc[0] == pytest.approx(312, rel=0.01)


def test_the_roofline_plot_from_the_decorator(sim, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(_notebook, "in_notebook", lambda: True)
    monkeypatch.setattr(_notebook, "show_figure", shown.append)
    path = tmp_path / "roofline.png"
    seen = []
    f = kscope.analyze.plot(str(path), plot_type="roofline", title="roofline", annotate_points=True,
                            plot_callback=seen.append)(copy_and_gemm(sim, work=per_annotation()))
    results = f()
    assert path.read_bytes()[:8] == PNG
    fig = seen[0]
    assert shown == [fig] and results.figure is fig
    ax = fig.get_axes()[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "arithmetic intensity" in ax.get_xlabel() and "TFLOP/s" in ax.get_ylabel()
    assert "mean of 3 runs" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    # Both roofs of the one FLOP kind, at both clocks; the copy has no FLOPs, so only gemm is a point.
    assert labels[0].startswith("fp16 tensor roof at rated clocks (1071 TFLOP/s, 4917 GB/s)")
    assert labels[1].startswith("fp16 tensor roof at observed clocks")
    assert labels[2:] == ["gemm"]
    texts = [t.get_text() for t in ax.texts]
    assert "n=1048576: latency" in texts and "n=4194304: latency" in texts
    assert "test (simulated)" in fig._suptitle.get_text() and "roofline" in fig._suptitle.get_text()


def test_the_roofline_plot_as_a_results_method(sim, tmp_path):
    results = copy_and_gemm(sim, work=per_annotation())()
    fig = results.plot_roofline()  # no file
    assert results.figure is fig and len(fig.get_axes()) == 1
    assert fig._suptitle.get_text().split("\n") == ["kscope roofline", results._core.headline(with_machine=True)]
    path = tmp_path / "r.svg"
    results.plot_roofline(path)
    assert path.read_text().lstrip().startswith("<?xml")


def test_the_roofline_plot_refuses_what_it_cannot_draw(sim, tmp_path):
    with pytest.raises(ConfigError) as info:
        copy_and_gemm(sim)().plot_roofline()
    assert "nothing to draw on a roofline: no row has declared FLOPs" in str(info.value)
    with pytest.raises(ConfigError) as info:
        kscope.analyze.plot(str(tmp_path / "x.png"), plot_type="roofline", row_panels=["n"])
    assert "plot_type='roofline' does not take row_panels= (it draws one panel)" in str(info.value)
    with pytest.raises(ConfigError) as info:
        kscope.analyze.plot(str(tmp_path / "x.png"), plot_type="pie")
    assert "plot_type must be 'line', 'bar' or 'roofline'" in str(info.value)


def test_saved_and_loaded_results_keep_the_work_and_the_roofline(sim, tmp_path):
    results = copy_and_gemm(sim, work=per_annotation(), bound_thresholds={"compute_pct": 50})()
    path = tmp_path / "r.json"
    results.save(path)
    loaded = kscope.load(path)
    columns = ["WorkBytes", "WorkFLOPs", "WorkKind", "DRAMRoofPct", "ComputeRoofPct", "Bound"]
    assert loaded.to_dataframe()[columns].equals(results.to_dataframe()[columns])
    assert loaded.roofs().equals(results.roofs())


def load_bench():
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("roofline_vs_counters", ROOT / "bench" / "roofline_vs_counters.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass resolves its annotations through it
    spec.loader.exec_module(module)
    return module


def test_the_h200_check_reads_both_sides_and_tabulates_them(sim):
    """bench/roofline_vs_counters.py runs once, unattended, on the GPU machine: its reading of both
    tables, its comparison and its report are checked here on simulated results."""
    import pandas as pd

    bench = load_bench()
    gemm = bench.Kernel("gemm_fp16", lambda: sim.launch("sm90_gemm", 1.4e6),
                        kscope.Work(bytes=3 * 8192**2 * 2, flops=2 * 8192**3, kind="fp16", tensor_cores=True),
                        bench.TENSOR_PIPE)
    ours = bench.roofline_row(bench.profile(gemm, 3, backend="cupti", work=lambda: gemm.work))
    assert ours["ComputeRoofPct"] == pytest.approx(100 * 2 * 8192**3 / 1.4e-3 / H200_FP16_TENSOR)
    assert ours["Bound"] == "compute"
    counted = {bench.DRAM: 9.0, bench.TENSOR_PIPE: 80.0, bench.FMA_PIPE: 0.5, "gpu__time_duration.sum": 1.41e6,
               "dram__bytes_read.sum": 9e8, "dram__bytes_write.sum": 1.4e8,
               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 0.0, "sm__ops_path_tensor_src_fp16.sum": 1.1e12,
               bench.SM_CLOCK: 1.5e9}
    summary = pd.DataFrame({"Metric": list(counted), "Median": list(counted.values()),
                            "ObservedSMClockMHz": [1755.0] * len(counted)})
    sol = pd.DataFrame({"ComputeThroughputPct": [81.0], "MemoryThroughputPct": [40.0], "Bottleneck": ["compute-bound"]})
    theirs = bench.counters_row(summary, sol)
    row = bench.compare("gemm_fp16", gemm.pipe, ours, theirs)
    assert row["within"] is (abs(ours["ComputeRoofPct"] - 80) <= 10) and row["agree"]
    text = bench.table([row])
    assert "gemm_fp16" in text and "compute" in text and ("yes" in text or "NO" in text)
    notes = bench.details(gemm, ours, theirs)
    assert "declared bytes 4.027e+08, DRAM bytes counted 1.04e+09 (x2.58)" in notes
    assert "speed of light: compute 81.0%, memory 40.0% -> compute-bound" in notes
    at_counted_clock = ours["ComputeRoofPct"] * ours["ObservedSMClockMHz"] / 1500
    assert f"counted in the kernel 1500 MHz: compute% at that clock {at_counted_clock:.1f}" in notes
    copy = bench.compare("copy", bench.DRAM, dict(ours, DRAMRoofPct=88.0, Bound="memory"),
                         dict(theirs, **{bench.DRAM: 91.0, "Bottleneck": "memory-bound"}))
    assert copy["within"] and copy["agree"] and math.isnan(copy["compute_delta"])
    assert "n/a" in bench.table([copy])
