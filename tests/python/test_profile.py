"""Profiling through the engine on the simulated backend: the DataFrames, derive_metric,
normalize_against, kernel rules, annotations, failures, options and files."""

import contextlib
import io
import math
import os
import re

import numpy as np
import pandas as pd
import pytest

import kscope
from conftest import need_metric_database
from kscope import AnnotationError, BackendError, ConfigError, SweepError
from registered_backends import python_backends

QUIET = dict(verbosity=0)

SUMMARY_HEAD = ["Annotation", "n", "Metric", "Unit", "AvgValue", "StdDev", "MinValue", "MaxValue", "Median",
                "NumRuns", "CI95_Lower", "CI95_Upper", "RelativeStdDevPct", "StableMeasurement", "Normalized",
                "NormalizationValue", "Geomean", "Kernel", "GPU", "Host", "Backend"]


def durations(sim, values):
    """A body launching one kernel per run with the given durations, in turn."""
    it = iter(values)

    def body(n):
        with kscope.annotate("k"):
            sim.launch("kern", next(it))

    return body


def test_summary_columns_and_dtypes(sim):
    f = kscope.analyze.kernel(configs=[(1,), (2,)], runs=3, **QUIET)(durations(sim, [9, 10, 20, 30, 9, 40, 50, 60]))
    r = f()
    df = r.to_dataframe()
    assert [c for c in df.columns if c in SUMMARY_HEAD] == SUMMARY_HEAD  # the engine may add columns
    assert list(df.columns) == list(r._core.summary()[0])  # exactly the C++ summary table's columns
    assert df["AvgValue"].tolist() == [20.0, 50.0]
    assert df["StdDev"].tolist() == [10.0, 10.0]
    assert df["NumRuns"].dtype == np.int64 and df["NumRuns"].tolist() == [3, 3]
    assert df["StableMeasurement"].dtype == "boolean" and not df["StableMeasurement"].any()
    assert df["Normalized"].tolist() == [False, False]
    assert df["NormalizationValue"].isna().all() and df["NormalizationValue"].dtype == np.float64
    assert df["Backend"].unique().tolist() == ["test (simulated)"]
    assert df["Metric"].unique().tolist() == ["test__kernel_duration"] and df["Unit"].iloc[0] == "ns"
    assert math.isclose(df["Geomean"].iloc[0], math.sqrt(20 * 50))
    for column in ("Annotation", "Metric", "Kernel", "GPU"):
        assert pd.api.types.is_string_dtype(df[column]) or df[column].dtype == object


def test_raw_samples_exclude_warmups(sim):
    f = kscope.analyze.kernel(configs=[(1,)], runs=3, warmup_runs=2, **QUIET)(durations(sim, [1, 2, 10, 20, 30]))
    raw = f().raw_dataframe()
    assert raw["Value"].tolist() == [10.0, 20.0, 30.0]
    assert raw["Run"].tolist() == [0, 1, 2] and raw["Run"].dtype == np.int64
    assert list(raw.columns[:4]) == ["Annotation", "n", "Run", "Metric"]


def test_one_run_leaves_variability_undefined(sim):
    df = kscope.analyze.kernel(configs=[(1,)], **QUIET)(durations(sim, [5, 7]))().to_dataframe()
    assert df["NumRuns"].iloc[0] == 1 and df["AvgValue"].iloc[0] == 7.0
    assert math.isnan(df["StdDev"].iloc[0]) and df["StableMeasurement"].isna().all()


def test_derive_metric_shapes_and_units(sim):
    def speed(t, n):
        return {"items_per_ns": (n / t, "1/ns"), "bare": n}

    f = kscope.analyze.kernel(configs=[(100,)], runs=2, derive_metric=speed, **QUIET)(durations(sim, [50] * 3))
    with pytest.warns(UserWarning, match="Derived metric 'bare' does not have a unit specified"):
        df = f().to_dataframe()
    assert df["Metric"].tolist() == ["test__kernel_duration", "items_per_ns", "bare"]
    assert df["AvgValue"].tolist() == [50.0, 2.0, 100.0]
    assert df["Unit"].tolist()[:2] == ["ns", "1/ns"]


def test_derive_metric_tuple_and_scalar_are_named_after_the_function(sim):
    def doubled(t, n):
        return 2 * t, "ns"

    df = kscope.analyze.kernel(configs=[(1,)], derive_metric=doubled, **QUIET)(durations(sim, [3, 4]))().to_dataframe()
    assert df.set_index("Metric").loc["doubled", "AvgValue"] == 8.0
    with pytest.warns(UserWarning, match="'<lambda>' does not have a unit"):
        df = kscope.analyze.kernel(configs=[(1,)], derive_metric=lambda t, n: t + n, **QUIET)(
            durations(sim, [3, 4]))().to_dataframe()
    assert df.set_index("Metric").loc["<lambda>", "AvgValue"] == 5.0


def test_derive_metric_gets_the_python_config_objects(sim):
    token = object()
    seen = []

    def derive(t, obj):
        seen.append(obj)
        return 1.0, "x"

    kscope.analyze.kernel(configs=[(token,)], derive_metric=derive, **QUIET)(durations(sim, [1, 1]))()
    assert seen and all(o is token for o in seen)


def test_derive_metric_arity_error_names_the_fix(sim):
    f = kscope.analyze.kernel(configs=[(1,)], derive_metric=lambda t: t, **QUIET)(durations(sim, [1, 1]))
    with pytest.raises(ConfigError, match=r"derive_metric expects 2 parameters \(1 metric values \+ 1 configs\), but has "
                                          r"1 parameters: .* give it 2 parameters"):
        f()
    with pytest.raises(TypeError, match="derive_metric must be a callable"):
        kscope.analyze.kernel(derive_metric=3)


def two_implementations(sim, base=100.0, fast=25.0):
    def body(n):
        with kscope.annotate("torch"):
            sim.launch("gemm", base * n)
        with kscope.annotate("triton"):
            sim.launch("matmul_kernel", fast * n)

    return body


def test_normalize_against(sim):
    f = kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, normalize_against="torch", **QUIET)(two_implementations(sim))
    df = f().to_dataframe().set_index(["Annotation", "n"])
    assert (df.loc["torch", "AvgValue"] == 1.0).all()
    assert df.loc[("triton", 2), "AvgValue"] == 0.25
    assert df.loc[("triton", 2), "NormalizationValue"] == 200.0
    assert df.loc[("triton", 2), "MinValue"] == 50.0  # statistics stay in the raw scale
    assert (df["Normalized"] == "torch").all()


def test_normalize_against_missing_annotation_keeps_partial_results(sim):
    f = kscope.analyze.kernel(configs=[(1,)], normalize_against="cublas", **QUIET)(two_implementations(sim))
    with pytest.raises(SweepError, match=r"normalize_against names annotation 'cublas'") as info:
        f()
    partial = info.value.partial_results
    assert isinstance(partial, kscope.ProfileResults)
    assert sorted(partial.to_dataframe()["Annotation"]) == ["torch", "triton"]
    assert isinstance(info.value.__cause__, ConfigError)


def test_several_kernels_need_a_rule(sim):
    def body(n):
        with kscope.annotate("k"):
            sim.launch("main", 10.0)
            sim.launch("helper", 1.0)

    with pytest.raises(SweepError) as info:
        kscope.analyze.kernel(configs=[(1,)], **QUIET)(body)()
    assert isinstance(info.value.__cause__, AnnotationError)
    assert "More than one (total=2) kernel" in str(info.value.__cause__) and "combine_kernel_metrics" in str(info.value)

    df = kscope.analyze.kernel(configs=[(1,)], combine_kernel_metrics=lambda a, b: a + b, **QUIET)(body)().to_dataframe()
    assert df["AvgValue"].tolist() == [11.0] and df["Kernel"].tolist() == ["main|helper"]
    df = kscope.analyze.kernel(configs=[(1,)], ignore_kernel_list=["helper"], **QUIET)(body)().to_dataframe()
    assert df["AvgValue"].tolist() == [10.0] and df["Kernel"].tolist() == ["main"]


def test_combine_must_be_binary():
    with pytest.raises(ConfigError, match="combine_kernel_metrics must be a binary function"):
        kscope.analyze.kernel(combine_kernel_metrics=lambda a: a)


def test_body_exception_stops_the_sweep_with_partial_results(sim):
    def body(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0 * n)
        if n == 3:
            raise MemoryError("out of memory at n=3")

    f = kscope.analyze.kernel(configs=[(1,), (2,), (3,)], runs=2, **QUIET)(body)
    with pytest.raises(SweepError, match=r"config 3/3 \(n=3\) failed in warm-up run 1") as info:
        f()
    error = info.value
    assert isinstance(error, kscope.ProfilerException)
    assert isinstance(error.__cause__, MemoryError) and "out of memory" in str(error.__cause__)
    assert error.failed_config == "n=3"
    assert error.partial_results.to_dataframe()["n"].tolist() == [1, 2]


def test_keyboard_interrupt_is_not_wrapped(sim):
    def body(n):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        kscope.analyze.kernel(configs=[(1,)], **QUIET)(body)()


def test_annotate_as_decorator_and_ignore_failures(sim):
    calls = []

    @kscope.annotate("flaky", ignore_failures=True)
    def flaky(n, run):
        sim.launch("kern", 10.0)
        if run % 2:
            raise ValueError("odd run")

    def body(n):
        calls.append(n)
        flaky(n, len(calls))

    df = kscope.analyze.kernel(configs=[(1,)], runs=4, **QUIET)(body)().to_dataframe()
    assert df["NumRuns"].tolist() == [2] and df["AvgValue"].tolist() == [10.0]  # 2 of 4 runs failed
    # Outside profiling the region does nothing, and (as in C++ and Nsight Python) an
    # ignore_failures region still swallows its exception.
    assert flaky(1, 1) is None


def test_annotation_rules(sim):
    def nested(n):
        with kscope.annotate("outer"):
            with kscope.annotate("inner"):
                sim.launch("kern", 1.0)

    with pytest.raises(SweepError) as info:
        kscope.analyze.kernel(configs=[(1,)], **QUIET)(nested)()
    assert isinstance(info.value.__cause__, AnnotationError)
    assert "Nested annotations are not supported" in str(info.value.__cause__)

    def repeated(n):
        for _ in range(2):
            with kscope.annotate("k"):
                sim.launch("kern", 1.0)

    with pytest.raises(SweepError, match="has already been used in this profiling run"):
        kscope.analyze.kernel(configs=[(1,)], **QUIET)(repeated)()

    def empty(n):
        with kscope.annotate("k"):
            pass

    with pytest.raises(SweepError, match="No kernels were profiled in annotation 'k'"):
        kscope.analyze.kernel(configs=[(1,)], **QUIET)(empty)()


def test_annotate_outside_profiling_is_a_no_op():
    with kscope.annotate("k"):
        with kscope.annotate("k"):  # neither nesting nor repetition is checked outside profiling
            pass
    with pytest.raises(TypeError, match="non-empty name"):
        kscope.annotate("")


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(cache_control="some"), r"cache_control must be 'all' or 'none', not 'some'"),
        (dict(clock_control="max"), r"clock_control must be 'none' or 'base', not 'max'"),
        (dict(replay_mode="app"), r"replay_mode must be 'kernel' or 'range', not 'app'"),
        (dict(thermal_mode="hot"), r"thermal_mode must be 'auto' or 'manual' or 'off'"),
        (dict(thermal_wait=20, thermal_cont=15), r"thermal_cont \(15°C\) must be greater than thermal_wait \(20°C\)"),
        (dict(thermal_timeout=0), r"thermal_timeout must be a positive number"),
        (dict(runs=0), r"runs must be an integer from 1 to 1000000000, not 0"),
        (dict(warmup_runs=-1), r"warmup_runs must be an integer from 0 to"),
        (dict(verbosity=2), r"verbosity must be kscope.VerbosityLevel.SILENT \(0\), INFO \(3\) or DEBUG \(4\)"),
        (dict(verbosity="loud"), r"verbosity must be 'silent', 'info' or 'debug'"),
        (dict(backend="ncu-cli"), "backend must be " + re.escape(" or ".join(map(repr, python_backends()))) +
                                  r", or None \(the default: chosen from the metrics\), not 'ncu-cli'"),
        (dict(backend="test"), r"profile inside `with kscope.testing.simulated_backend\(\) as sim:`"),
        (dict(ignore_kernel_list="helper"), r"ignore_kernel_list must be a list of names, e.g. \['helper'\]"),
        (dict(normalize_against=3), r"normalize_against must be an annotation name"),
    ],
)
def test_option_errors_at_decoration_time(options, message):
    with pytest.raises(ValueError, match=message):
        kscope.analyze.kernel(**options)


def test_accepted_option_values(sim):
    body = durations(sim, [1.0] * 100)
    for options in (dict(replay_mode="range"), dict(verbosity=kscope.VerbosityLevel.DEBUG), dict(verbosity="info"),
                    dict(thermal_mode="off"), dict(thermal_mode="manual", thermal_wait=5, thermal_cont=30,
                                                   thermal_timeout=10), dict(backend="events")):
        df = kscope.analyze.kernel(configs=[(1,)], **options)(body)().to_dataframe()
        assert df["Backend"].iloc[0] == "test (simulated)"  # the testing block decides the backend


def test_cache_control_flushes_before_every_region(sim):
    kscope.analyze.kernel(configs=[(1,)], runs=3, **QUIET)(two_implementations(sim))()
    assert sim.flush_count == 2 * 4  # 2 regions x (1 warm-up + 3 runs)
    df = kscope.analyze.kernel(configs=[(1,)], runs=3, cache_control="none", **QUIET)(two_implementations(sim))().to_dataframe()
    assert sim.flush_count == 8 and df["CacheControl"].iloc[0] == "none"


def test_clock_control_base_locks_and_reports(sim):
    df = kscope.analyze.kernel(configs=[(1,)], clock_control="base", **QUIET)(durations(sim, [1, 1]))().to_dataframe()
    assert df["ClockControl"].iloc[0] == "base" and df["LockedSMClockMHz"].iloc[0] > 0
    assert not sim.clocks_locked  # restored after the session


def test_clock_control_base_refused_is_an_error_at_the_call(sim):
    sim.deny_clock_lock("changing clocks needs root: run as root or use clock_control='none'")
    f = kscope.analyze.kernel(configs=[(1,)], clock_control="base", **QUIET)(durations(sim, [1, 1]))
    with pytest.raises(BackendError, match="needs root"):
        f()


def test_thermal_device_is_accepted_with_a_warning():
    with pytest.warns(UserWarning, match="thermal_device is accepted but not applied"):
        kscope.analyze.kernel(thermal_device=0)


def test_metrics_other_than_the_backends_are_refused(sim):
    body = durations(sim, [1.0] * 10)
    df = kscope.analyze.kernel(configs=[(1,)], metrics=["test__kernel_duration"], **QUIET)(body)().to_dataframe()
    assert df["Metric"].tolist() == ["test__kernel_duration"]
    f = kscope.analyze.kernel(configs=[(1,)], metrics=["gpu__time_duration.sum"], **QUIET)(body)
    with pytest.raises(ConfigError, match=r"Invalid value \['gpu__time_duration.sum'\] for 'metrics'.*not the same "
                                          r"quantity.*use backend='counters'"):
        f()


def test_real_backend_outside_the_testing_block_fails_at_the_first_call():
    if _has_gpu():
        pytest.skip("this machine has a GPU: the real backend would measure")

    @kscope.analyze.kernel(configs=[(1,)], **QUIET)
    def f(n):
        with kscope.annotate("k"):
            pass

    with pytest.raises(BackendError):
        f()


def test_nsight_compute_names_choose_the_counters_backend_without_backend():
    if _has_gpu():
        pytest.skip("this machine has a GPU: tests/python/test_gpu.py measures this there")

    @kscope.analyze.kernel(configs=[(1,)], metrics=["dram__throughput.avg.pct_of_peak_sustained_elapsed"], **QUIET)
    def f(n):
        with kscope.annotate("k"):
            pass

    # Not refused as a metric the cupti backend lacks: the counters backend is chosen, and it says
    # why it cannot measure here.
    with pytest.raises(BackendError) as info:
        f()
    assert "cupti backend measures only" not in str(info.value)
    with pytest.raises(ConfigError, match=r"the cupti backend measures only 'cupti__kernel_duration'.*use "
                                          r"backend='counters' or backend=None \(the default, which chooses from "
                                          r"the metrics\)"):
        kscope.analyze.kernel(configs=[(1,)], metrics=["dram__bytes_read.sum"], backend="cupti", **QUIET)(f)()


def _has_gpu():
    try:
        import torch
    except ImportError:
        return os.path.exists("/dev/nvidia0")
    return torch.cuda.is_available()


def test_silent_prints_nothing(sim, capfd):
    kscope.analyze.kernel(configs=[(1,)], **QUIET)(durations(sim, [1, 1]))()
    assert capfd.readouterr() == ("", "")


def test_debug_says_where_each_configs_time_went(sim):
    # kscope's own cost, per config: its runs and batches, and a split of its wall time that adds up.
    log = io.StringIO()
    with contextlib.redirect_stderr(log):
        kscope.analyze.kernel(configs=[(1,), (2,)], runs=50, verbosity="debug")(durations(sim, [5.0] * 200))()
    lines = re.findall(r"config (\d)/2: (\d+) runs in (\d+) batches, ([\d.]+) ms: bodies ([\d.]+) ms .*"
                       r"collecting ([\d.]+) ms .*recording ([\d.]+) ms", log.getvalue())
    assert [line[:2] for line in lines] == [("1", "51"), ("2", "51")]
    for _, _, batches, wall, *parts in lines:
        assert int(batches) >= 1
        assert 0 < sum(map(float, parts)) <= float(wall)


def test_output_csv_files(sim, tmp_path):
    prefix = str(tmp_path / "sub" / "run_")
    f = kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, output_prefix=prefix, output_csv=True, **QUIET)(
        durations(sim, [5.0] * 100))
    r0, r1 = f(), f()
    for call, r in enumerate((r0, r1)):
        raw = pd.read_csv(f"{prefix}profiled_data-body-{call}.csv")
        summary = pd.read_csv(f"{prefix}processed_data-body-{call}.csv")
        assert list(summary.columns) == list(r.to_dataframe().columns)
        assert len(raw) == 4 and len(summary) == 2 and summary["n"].tolist() == [1, 2]


def test_output_csv_without_prefix_uses_a_temporary_directory(sim, capfd):
    f = kscope.analyze.kernel(configs=[(1,)], output_csv=True)(durations(sim, [5.0] * 10))
    f()
    err = capfd.readouterr().err
    paths = [line.split(" written to ")[1] for line in err.splitlines() if " written to " in line]
    assert len(paths) == 2 and all(os.path.exists(p) and "kscope_" in p for p in paths)


def test_several_functions_and_calls_in_one_process(sim):
    a = kscope.analyze.kernel(configs=[(1,)], runs=2, **QUIET)(durations(sim, [1, 2, 3] * 3))
    b = kscope.analyze.kernel(configs=[(1,)], runs=2, **QUIET)(two_implementations(sim))
    first, other, second = a(), b(), a()
    assert first.to_dataframe()["AvgValue"].tolist() == [2.5]
    assert second.to_dataframe()["AvgValue"].tolist() == [2.5]  # 1 warm-up (3), then 1, 2 ... fresh each call
    assert len(other.to_dataframe()) == 2 and sim.session_count == 3


def test_nested_profiling_is_refused(sim):
    inner = kscope.analyze.kernel(configs=[(1,)], **QUIET)(durations(sim, [1.0] * 10))

    def outer(n):
        inner()

    with pytest.raises(SweepError) as info:
        kscope.analyze.kernel(configs=[(1,)], **QUIET)(outer)()
    assert isinstance(info.value.__cause__, ConfigError)
    assert "cannot be nested" in str(info.value.__cause__)


def test_simulated_backend_is_only_reachable_in_its_block():
    assert kscope.testing.active() is None
    with kscope.testing.simulated_backend() as outer:
        with kscope.testing.simulated_backend() as inner:
            assert kscope.testing.active() is inner
        assert kscope.testing.active() is outer
    assert kscope.testing.active() is None


def test_worker_thread_kernels_belong_to_the_region(sim):
    import threading

    def body(n):
        with kscope.annotate("k"):
            t = threading.Thread(target=sim.launch, args=("worker_kernel", 42.0))
            t.start()
            t.join()

    df = kscope.analyze.kernel(configs=[(1,)], **QUIET)(body)().to_dataframe()
    assert df["Kernel"].tolist() == ["worker_kernel"] and df["AvgValue"].tolist() == [42.0]


def test_repr_shows_the_engine_table(sim):
    r = kscope.analyze.kernel(configs=[(1,)], **QUIET)(durations(sim, [1.0] * 2))()
    assert "test (simulated)" in repr(r) and len(r) == 1


def test_adaptive_sampling_converges_and_says_so(sim):
    rng = np.random.default_rng(5)
    values = iter(rng.normal(5000, 150, 10000))  # a 5 us kernel with 3% spread

    def body(n):
        with kscope.annotate("k"):
            sim.launch("kern", next(values))

    df = kscope.analyze.kernel(configs=[(1,)], adaptive={"target_pct": 1.0}, **QUIET)(body)().to_dataframe()
    assert df["Converged"].tolist() == [True]
    assert 20 < df["NumRuns"].iloc[0] < 80  # t * 3% / sqrt(n) < 1% needs about 36


def test_adaptive_options_are_checked(sim):
    with pytest.raises(ConfigError, match="adaptive has unknown keys \\['target'\\]"):
        kscope.analyze.kernel(adaptive={"target": 1})
    with pytest.raises(ConfigError, match="adaptive\\['criterion'\\] must be 'ci_halfwidth' or 'rsd'"):
        kscope.analyze.kernel(adaptive={"criterion": "noise"})
    with pytest.raises(ConfigError, match="throttled_runs must be 'keep' or 'exclude'"):
        kscope.analyze.kernel(throttled_runs="drop")


def test_counter_metric_database_offline():
    need_metric_database()
    metrics = kscope.list_metrics("GH100")
    names = [m["name"] for m in metrics]
    assert "dram__bytes_read" in names and "sm__throughput" in names and len(names) > 1000
    d = kscope.describe_metric("dram__bytes_read.sum", "GH100")
    assert d["unit"] == "byte"
    assert kscope.count_passes(["gpu__time_duration.sum"], "GH100") == 1
    assert kscope.count_passes(["sm__throughput.avg.pct_of_peak_sustained_elapsed"], "GH100") == 8
    with pytest.raises(ConfigError, match="dram__bytes_read.sum"):
        kscope.describe_metric("dram__byte_read.sum", "GH100")
    assert "60%" in kscope.bottleneck_rule()


def test_counter_backend_options():
    with pytest.raises(ConfigError, match="backend='auto' may fall back"):
        kscope.analyze.kernel(backend="auto", derive_metric=lambda t, n: t)
    with pytest.raises(ConfigError, match="backend must be"):
        kscope.analyze.kernel(backend="ncu-cli")


def test_ncu_sections_need_the_ncu_backend():
    with pytest.raises(ConfigError, match="ncu_sections is set but the backend is cupti: .* use backend='ncu'"):
        kscope.analyze.kernel(configs=[1], ncu_sections=["SpeedOfLight"], verbosity=0)
    with pytest.raises(ConfigError, match="ncu_sections must hold non-empty strings"):
        kscope.analyze.kernel(backend="ncu", ncu_sections=[""])


def test_doctor_reports_a_verdict_and_every_backend(capsys):
    report = kscope.doctor()
    available = [b["available"] for b in report["backends"]]
    # 0: every backend works; 2: nothing can measure (then no backend does); 1: some do not.
    nothing = report["verdict"].startswith("nothing can measure")
    assert report["exit_code"] == (0 if all(available) else 2 if nothing else 1), report
    assert not (nothing and any(available)), report
    # Every backend a Python user can choose, by its engine name, from the registry.
    assert {b["backend"] for b in report["backends"]} == {d.name for d in kscope._core.backends() if d.python_name}
    assert "kscope doctor" in capsys.readouterr().out
