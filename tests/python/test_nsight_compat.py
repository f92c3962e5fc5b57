"""Nsight Python code, written as its users write it (``import kscope as nsight``, their decorators
and ``except`` clauses), behaves on kscope as on Nsight Python (issue 30): the default tool from the
environment, Nsight's exception types and sentences, configs checked at the call, range replay on
every backend, info-collector failures recorded and warned, NaN units and Nsight's row order, and
the engine's warnings and progress through Python's warnings and sys.stderr.

The CPU tests run on the simulated backend (or watch the Python layer hand the engine its settings);
those marked gpu measure real kernels with torch (scripts/nsight_compat_check.sh runs them on the H200).
"""

import contextlib
import io
import math
import warnings

import pandas as pd
import pytest

import kscope as nsight
from conftest import need_metric_database
from kscope import _core

QUIET = dict(verbosity=nsight.VerbosityLevel.SILENT)


@pytest.fixture(autouse=True)
def no_activated_tool():
    nsight.deactivate()
    yield
    nsight.deactivate()


def two_kernel_region(sim):
    @nsight.analyze.kernel(configs=[(1,), (2,)], runs=2, **QUIET)
    def f(n):
        with nsight.annotate("k"):
            sim.launch("scale", 10.0 * n)
            sim.launch("shift", 5.0, 3.0)  # starts 3 ns after scale ends

    return f


# --- 1. Nsight's default measurement from the environment, and Nsight Compute's units ----------


COUNTERS_NOT_PERMITTED = ("ERR_NVGPUCTRPERM: the user does not have permission to access the GPU's performance "
                          "counters; run as root or set NVreg_RestrictProfilingToAdminUsers=0")


@pytest.fixture
def engine_settings(monkeypatch):
    """The Settings each profiled call hands the engine, which fails it as a machine without
    counter permission would (ERR_NVGPUCTRPERM: the CPU machine has no GPU to ask)."""
    seen = []

    def profile(names, rows, settings, *rest):
        seen.append(settings)
        raise nsight.BackendError(COUNTERS_NOT_PERMITTED)

    monkeypatch.setattr(_core, "profile", profile)
    return seen


def unchanged_nsight_program():
    @nsight.analyze.kernel(configs=[(1,)], **QUIET)  # no backend=, no metrics=: Nsight's default
    def f(n):
        with nsight.annotate("k"):
            pass

    return f


def test_kscope_tool_ncu_measures_nsights_default_metric_with_the_counters_backend(monkeypatch, engine_settings):
    monkeypatch.setenv("KSCOPE_TOOL", "ncu")
    assert nsight.get_active_tool() is nsight.Tool.NCU
    with pytest.raises(nsight.exceptions.NCUNotAvailableError) as e:
        unchanged_nsight_program()()
    settings = engine_settings[-1]
    assert settings.backend == _core.Backend.counters and list(settings.metrics) == ["gpu__time_duration.sum"]
    # Where counters are not permitted, the engine's error is kept whole and the switch back follows it.
    engine_message, switch_back = str(e.value).split("\n")
    assert engine_message == COUNTERS_NOT_PERMITTED
    assert switch_back == ("KSCOPE_TOOL=ncu chose the counters backend (Nsight Compute's metrics, measured in this "
                           "process). To measure CUPTI's kernel durations instead (cupti__kernel_duration, a different "
                           "quantity), set KSCOPE_TOOL=cupti (or unset it), or pass backend='cupti' to the function")


def test_kscope_tool_cupti_and_activate_wins(monkeypatch, engine_settings):
    monkeypatch.setenv("KSCOPE_TOOL", "cupti")
    with pytest.raises(RuntimeError) as e:
        unchanged_nsight_program()()
    assert engine_settings[-1].backend == _core.Backend.cupti and "KSCOPE_TOOL" not in str(e.value)
    nsight.activate(nsight.Tool.NCU)  # activate() wins over the environment
    with pytest.raises(RuntimeError, match=r"kscope.activate\(kscope.Tool.NCU\) chose the counters backend"):
        unchanged_nsight_program()()
    assert engine_settings[-1].backend == _core.Backend.counters
    nsight.deactivate()  # the environment's tool again
    assert nsight.get_active_tool() is nsight.Tool.CUPTI


def test_an_explicit_backend_is_kept_and_a_bad_tool_is_named(monkeypatch, engine_settings):
    monkeypatch.setenv("KSCOPE_TOOL", "ncu")

    @nsight.analyze.kernel(configs=[(1,)], backend="cupti", **QUIET)
    def f(n):
        pass

    with pytest.raises(RuntimeError):
        f()
    assert engine_settings[-1].backend == _core.Backend.cupti
    monkeypatch.setenv("KSCOPE_TOOL", "nvprof")
    with pytest.raises(ValueError, match=r"KSCOPE_TOOL='nvprof' names no tool: set it to 'ncu' .* or 'cupti'"):
        unchanged_nsight_program()()


def test_counters_units_are_nsight_computes():
    need_metric_database()
    # Nsight Python's own tests expect these units from ncu.
    assert nsight.describe_metric("gpu__time_duration.sum", "GH100")["unit"] == "ns"
    assert nsight.describe_metric("sm__warps_launched.sum", "GH100")["unit"] == "warp"
    assert nsight.describe_metric("sm__throughput.avg.pct_of_peak_sustained_elapsed", "GH100")["unit"] == "%"
    assert nsight.describe_metric("dram__bytes_read.sum", "GH100")["unit"] == "byte"


# --- 2. Nsight's exception types and sentences -------------------------------------------------


def catching_nested_and_repeated_annotates(launch, caught):
    """Nsight-style code that catches annotate's ValueErrors (nesting, a repeated name) and goes on."""

    @nsight.analyze.kernel(configs=[(1,), (2,)], runs=2, **QUIET)
    def f(n):
        with nsight.annotate("outer"):
            try:
                with nsight.annotate("inner"):
                    pass
            except ValueError as e:
                caught.append(str(e))
            launch(n)
        try:
            with nsight.annotate("outer"):
                pass
        except ValueError as e:
            caught.append(str(e))

    return f


def test_a_nested_or_repeated_annotate_caught_by_the_body_lets_the_sweep_go_on(sim):
    caught = []
    df = catching_nested_and_repeated_annotates(lambda n: sim.launch("k", 10.0 * n), caught)().to_dataframe()
    assert df["AvgValue"].tolist() == [10.0, 20.0]
    assert caught[0].startswith("Nested annotations are not supported. Cannot enter annotation 'inner' while "
                                "another annotation is active")
    assert caught[1].startswith("Annotation name 'outer' has already been used in this profiling run. Each "
                                "annotation must have a unique name")
    assert len(caught) == 2 * 2 * 3  # every body call: 2 configs x (1 warm-up + 2 runs)


def test_several_kernels_without_a_combine_rule_are_a_runtime_error(sim):
    try:
        two_kernel_region(sim)()
    except RuntimeError as e:
        assert isinstance(e, nsight.exceptions.SweepError) and isinstance(e.__cause__, nsight.KernelCountError)
        assert str(e.__cause__).startswith("More than one (total=2) kernel is launched within the k annotation")
        assert "replay_mode='range'" in str(e.__cause__)
        assert e.partial_results is not None
    else:
        pytest.fail("two kernels in one region were accepted")


def test_the_bodys_own_exception_is_caught_by_its_type(sim):
    @nsight.analyze.kernel(configs=[(1,), (2,)], **QUIET)
    def f(n):
        with nsight.annotate("k"):
            sim.launch("k", 1.0)
        if n == 2:
            raise KeyError("no such size")

    with pytest.raises(KeyError) as e:  # Nsight Python lets it through
        f()
    assert isinstance(e.value, nsight.exceptions.SweepError) and isinstance(e.value.__cause__, KeyError)
    assert len(e.value.partial_results.to_dataframe()) == 1  # config n=1, measured before


def test_config_and_option_errors_are_nsights_types_with_nsights_sentences(sim):
    @nsight.analyze.kernel(**QUIET)
    def needs_n(n):
        pass

    with pytest.raises(nsight.exceptions.ProfilerException,
                       match=r"^You have provided no configs\. Provide configs at decoration time or at runtime"):
        needs_n()
    with pytest.raises(AssertionError):  # Nsight asserts: args together with configs
        needs_n(1, configs=[(2,)])
    with pytest.raises(nsight.exceptions.ProfilerException,
                       match=r"^You have provided configs at decoration time and at runtime\. Provide configs at "
                             r"decoration time or at runtime"):
        nsight.analyze.kernel(configs=[(1,)], **QUIET)(lambda n: None)(configs=[(2,)])
    with pytest.raises(AssertionError, match=r"^Profiler error: combine_kernel_metrics must be a binary function"):
        nsight.analyze.kernel(combine_kernel_metrics=lambda x: x)
    with pytest.raises(ValueError, match=r"^clock_control must be 'none' or 'base'"):
        nsight.analyze.kernel(clock_control="boost")
    with pytest.raises(ValueError, match=r"^derive_metric expects 3 parameters \(1 metric values \+ 2 configs\), "
                                         r"but has 1 parameters"):
        nsight.analyze.kernel(configs=[(1, 2)], derive_metric=lambda t: t, **QUIET)(lambda n, m: None)()
    need_metric_database()  # the rest needs the metric database
    with pytest.raises(nsight.exceptions.ProfilerException,
                       match=r"^Invalid value \['dram__byte_read\.sum'\] for kscope\.describe_metric\(\): unknown metric"):
        nsight.describe_metric("dram__byte_read.sum", "GH100")


# --- 3. Configs are checked when the function is called ----------------------------------------


def test_decoration_never_raises_for_configs_and_the_call_does(sim):
    @nsight.analyze.kernel(configs=[(1, 2, 3)], **QUIET)  # at import: a config too long for f
    def f(n, m=1):
        with nsight.annotate("k"):
            sim.launch("k", 1.0)

    @nsight.analyze.kernel(configs=5, **QUIET)  # not even a list
    def g(n):
        pass

    with pytest.raises(nsight.exceptions.ProfilerException,
                       match=r"^Configs have 3 arguments, but function expects between 1 and 2"):
        f()
    with pytest.raises(AssertionError, match="configs must be a list of configurations, not int"):
        g()
    generator = nsight.analyze.kernel(configs=((n,) for n in (1, 2)), **QUIET)(lambda n: None)
    del generator  # a generator is read at the first call, not at decoration
    with pytest.raises(ValueError, match="thermal_mode must be"):  # fixed choices still fail at decoration
        nsight.analyze.kernel(thermal_mode="hot")


# --- 4. replay_mode="range" -------------------------------------------------------------------


def test_range_replay_measures_the_region_as_one_result(sim):
    @nsight.analyze.kernel(configs=[(1,), (2,)], runs=2, replay_mode="range", **QUIET)
    def f(n):
        with nsight.annotate("k"):
            sim.launch("scale", 10.0 * n)
            sim.launch("shift", 5.0, 3.0)

    df = f().to_dataframe()
    assert df["Kernel"].tolist() == ["range", "range"]
    assert df["AvgValue"].tolist() == [18.0, 28.0]  # first start to last end: the gap counts


# --- 5. Info-collector failures ----------------------------------------------------------------


def test_a_failing_collector_is_recorded_as_missing_and_warned_once(sim):
    calls = iter(range(100))

    @nsight.experimental.collect(scope=nsight.CollectionScope.RUN)
    def temp(n):
        if next(calls) % 2:
            raise ZeroDivisionError("sensor busy")
        return 40.0

    @nsight.analyze.kernel(configs=[(1,)], runs=4, info_collectors=[temp], **QUIET)
    def f(n):
        with nsight.annotate("k"):
            sim.launch("k", 1.0)

    with pytest.warns(RuntimeWarning, match=r"Info collector 'temp' \(run scope\) raised ZeroDivisionError: "
                                            r"sensor busy") as record:
        results = f()
    assert len([w for w in record if "Info collector" in str(w.message)]) == 1
    values = results.raw_dataframe()["temp"].tolist()
    assert values[0] == 40.0 and math.isnan(values[1])  # Nsight Python: None in its column
    assert results.to_dataframe()["temp_Avg"].tolist() == [40.0]

    failing = nsight.analyze.kernel(configs=[(1,)], runs=2, info_collectors=[temp], info_collector_errors="raise",
                                    **QUIET)(f.__wrapped__)
    with pytest.raises(nsight.exceptions.SweepError, match=r"in info collector 'temp' \(run scope\)"):
        failing()


# --- 6. DataFrame details ----------------------------------------------------------------------


def test_unitless_derived_metrics_have_nan_units_and_rows_come_in_nsights_order(sim):
    def per_n(time, n):
        return time / n  # no unit

    @nsight.analyze.kernel(configs=[(1,), (2,)], derive_metric=per_n, **QUIET)
    def f(n):
        with nsight.annotate("a"):
            sim.launch("ka", 10.0)
        with nsight.annotate("b"):
            sim.launch("kb", 20.0)

    with pytest.warns(UserWarning, match="Derived metric 'per_n' does not have a unit specified"):
        df = f().to_dataframe()
    assert list(zip(df["Annotation"], df["n"], df["Metric"])) == [
        ("a", 1, "test__kernel_duration"), ("a", 2, "test__kernel_duration"),
        ("b", 1, "test__kernel_duration"), ("b", 2, "test__kernel_duration"),
        ("a", 1, "per_n"), ("a", 2, "per_n"), ("b", 1, "per_n"), ("b", 2, "per_n")]
    assert (df["Unit"][:4] == "ns").all() and df["Unit"][4:].isna().all()


# --- 7. Warnings and progress through Python -------------------------------------------------


def flaky_function(sim):
    @nsight.analyze.kernel(configs=[(1,)], runs=2, verbosity=nsight.VerbosityLevel.INFO)
    def flaky(n):
        with nsight.annotate("k", ignore_failures=True):
            raise RuntimeError("transient")

    return flaky


def test_engine_warnings_are_python_warnings(sim):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flaky_function(sim)()
    engine = [w for w in caught if "recorded as NaN" in str(w.message)]
    assert len(engine) == 1 and issubclass(engine[0].category, nsight.SweepWarning)
    assert issubclass(nsight.SweepWarning, RuntimeWarning) and issubclass(nsight.ProfilerWarning, UserWarning)
    assert engine[0].filename == __file__  # attributed to the user's call
    with warnings.catch_warnings():
        warnings.simplefilter("error", nsight.SweepWarning)  # as -W error
        with pytest.raises(nsight.exceptions.SweepError) as e:
            flaky_function(sim)()
    assert isinstance(e.value.__cause__, nsight.SweepWarning)


def test_progress_and_information_go_through_sys_stderr(sim):
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flaky_function(sim)()
    assert "[kscope] config 1/1 (n=1): 3 runs in" in stderr.getvalue()
    assert "[kscope] profiled 1 config in" in stderr.getvalue()


# --- On the GPU (torch) ------------------------------------------------------------------------


def cuda_vector(n=1 << 20):
    import torch

    return torch.ones(n, device="cuda")


@pytest.mark.gpu
def test_gpu_kscope_tool_ncu_measures_gpu_time_duration_in_ns(monkeypatch):
    x = cuda_vector()
    monkeypatch.setenv("KSCOPE_TOOL", "ncu")

    @nsight.analyze.kernel(configs=[(1,)], runs=3, **QUIET)
    def scale(n):
        with nsight.annotate("scale"):
            x.mul_(2.0)

    df = scale().to_dataframe()
    assert df["Metric"].tolist() == ["gpu__time_duration.sum"] and df["Unit"].tolist() == ["ns"]
    assert df["Backend"].tolist() == ["counters"] and df["AvgValue"].iloc[0] > 0
    monkeypatch.setenv("KSCOPE_TOOL", "cupti")
    df = scale().to_dataframe()
    assert df["Metric"].tolist() == ["cupti__kernel_duration"] and df["Backend"].tolist() == ["cupti"]


@pytest.mark.gpu
def test_gpu_nsights_units_for_the_metrics_its_tests_check():
    x = cuda_vector()

    @nsight.analyze.kernel(configs=[(1,)], runs=2, metrics=["sm__warps_launched.sum", "gpu__time_duration.sum",
                                                            "dram__bytes_read.sum"], **QUIET)
    def scale(n):
        with nsight.annotate("scale"):
            x.mul_(2.0)

    units = dict(zip(*[scale().to_dataframe()[c] for c in ("Metric", "Unit")]))
    assert units == {"sm__warps_launched.sum": "warp", "gpu__time_duration.sum": "ns", "dram__bytes_read.sum": "byte"}


@pytest.mark.gpu
@pytest.mark.parametrize("backend", [None, "cupti", "counters"])
def test_gpu_range_replay_and_the_kernel_count_error(backend):
    x = cuda_vector(1 << 24)

    def profiled(**options):
        @nsight.analyze.kernel(configs=[(1,)], runs=5, backend=backend, **options, **QUIET)
        def two_kernels(n):
            with nsight.annotate("pair"):
                x.mul_(2.0)
                x.add_(1.0)

        return two_kernels

    try:
        profiled()()
    except RuntimeError as e:  # Nsight Python's type for several kernels without a combine rule
        assert isinstance(e.__cause__, nsight.KernelCountError)
    else:
        pytest.fail("two kernels in one region were accepted")
    metrics = dict(metrics=["gpu__time_duration.sum"]) if backend == "counters" else {}
    span = profiled(replay_mode="range", **metrics)().to_dataframe()
    kernels = profiled(combine_kernel_metrics=lambda a, b: a + b, **metrics)().to_dataframe()
    assert span["Kernel"].tolist() == ["range"]
    # The range covers both kernels and the gap between them: at least their sum, up to the run-to-run
    # variation of a DRAM-bound kernel (5%).
    assert span["Median"].iloc[0] >= 0.95 * kernels["Median"].iloc[0]


@pytest.mark.gpu
def test_gpu_a_caught_nested_annotate_lets_the_sweep_go_on():
    x, caught = cuda_vector(), []
    df = catching_nested_and_repeated_annotates(lambda n: x.mul_(2.0), caught)().to_dataframe()
    assert len(df) == 2 and df["Annotation"].tolist() == ["outer", "outer"] and len(caught) == 12
