"""The names Nsight Python code imports, on kscope: kscope.exceptions (catching what the engine
raises), row_panel/col_panel in plots, kscope.utils, and `import kscope as nsight`."""

import importlib
import itertools

import pytest

import kscope
import kscope as nsight
from kscope import errors, exceptions
from kscope.exceptions import ProfilerException

QUIET = dict(verbosity=0)


def test_exceptions_has_every_kscope_error_and_warning_class():
    kscope_classes = {name: value for name, value in vars(errors).items()
                      if isinstance(value, type) and issubclass(value, (errors.ProfilerException, errors.SweepInterrupted,
                                                                        errors.ProfilerWarning))}
    assert set(kscope_classes) == set(errors.__all__)
    for name, cls in kscope_classes.items():
        assert getattr(exceptions, name) is cls
        assert name in exceptions.__all__
    assert exceptions.ProfilerException is kscope.ProfilerException


def test_nsight_names_alias_the_kscope_class_raised_for_the_same_failure():
    assert exceptions.NCUNotAvailableError is errors.BackendError
    assert exceptions.ThermalControlError is errors.ThermalError
    assert exceptions.CoolingTimeoutError is errors.ThermalError
    assert {"NCUNotAvailableError", "ThermalControlError", "CoolingTimeoutError"} <= set(exceptions.__all__)


def test_profiler_exception_catches_a_bad_option():
    try:
        kscope.analyze.kernel(runs=0)
    except exceptions.ProfilerException as e:
        assert isinstance(e, kscope.ConfigError) and "runs must be an integer from 1 to" in str(e)
    else:
        pytest.fail("runs=0 was accepted")


def test_profiler_exception_catches_what_the_engine_raises(sim):
    @kscope.analyze.kernel(configs=[(1,)], **QUIET)
    def two_kernels(n):
        with kscope.annotate("k"):
            sim.launch("main", 10.0)
            sim.launch("helper", 1.0)

    with pytest.raises(ProfilerException) as info:
        two_kernels()
    assert isinstance(info.value, exceptions.SweepError)
    assert isinstance(info.value.__cause__, exceptions.AnnotationError)


def test_profiler_exception_catches_the_engines_checks_at_decoration():
    # The engine refuses a duration metric mixed with counter names (the backend follows the metrics).
    with pytest.raises(exceptions.ProfilerException, match=r"'cupti__kernel_duration' is the cupti backend's "
                                                           r"duration, which is measured alone"):
        kscope.analyze.kernel(metrics=["cupti__kernel_duration", "dram__bytes_read.sum"])
    with pytest.raises(exceptions.ProfilerException, match="Duplicate info collector name 'v'"):
        kscope.analyze.kernel(info_collectors=[("v", lambda: 1, "once"), ("v", lambda: 2, "once")])


def test_profiler_exception_catches_a_failing_collector(sim):
    @kscope.analyze.kernel(configs=[(1,)], info_collectors=[("v", lambda n: 1 / 0, "run")], info_collector_errors="raise",
                           **QUIET)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 1.0)

    with pytest.raises(exceptions.ProfilerException) as info:
        f()
    assert isinstance(info.value, exceptions.SweepError) and isinstance(info.value.__cause__, ZeroDivisionError)


def test_backend_errors_are_caught_under_nsights_name(sim):
    sim.deny_clock_lock("changing clocks needs root: run as root or use clock_control='none'")

    @kscope.analyze.kernel(configs=[(1,)], clock_control="base", **QUIET)
    def locked(n):
        with kscope.annotate("k"):
            sim.launch("kern", 1.0)

    with pytest.raises(exceptions.NCUNotAvailableError, match="needs root"):
        locked()


def test_row_and_col_panel_are_name_lists():
    assert kscope.row_panel("dtype", "transpose") == ["dtype", "transpose"]
    assert repr(kscope.col_panel("n")) == "kscope.col_panel('n')"
    assert kscope.row_panel() == [] and isinstance(kscope.row_panel(), kscope.utils.row_panel)
    with pytest.raises(kscope.ConfigError, match=r"row_panel takes config parameter names as arguments, e.g. "
                                                 r"row_panel\('dtype', 'transpose'\), not \['dtype'\]"):
        kscope.row_panel(["dtype"])


def test_row_and_col_panel_lay_out_a_plot(sim, tmp_path):
    seen = []

    @kscope.analyze.plot(str(tmp_path / "panels.png"), row_panels=kscope.row_panel("dtype"),
                         col_panels=kscope.col_panel("transpose"), plot_callback=seen.append)
    @kscope.analyze.kernel(configs=list(itertools.product([1, 2], ["f16", "f32"], [False, True])), **QUIET)
    def matmul(n, dtype, transpose):
        with kscope.annotate("matmul"):
            sim.launch("gemm", 100.0 * n)

    matmul()
    assert (tmp_path / "panels.png").exists()
    titles = [ax.get_title() for ax in seen[0].get_axes()]
    assert titles == ["dtype=f16, transpose=False", "dtype=f16, transpose=True",
                      "dtype=f32, transpose=False", "dtype=f32, transpose=True"]


def test_utils_holds_nsights_public_utils():
    assert kscope.utils.VerbosityLevel is kscope.VerbosityLevel
    assert kscope.utils.row_panel is kscope.row_panel and kscope.utils.col_panel is kscope.col_panel
    assert kscope.utils.CUDA_CORE_AVAILABLE is True  # ignore_failures needs no cuda-core here


def test_nsight_names_resolve_after_changing_the_import():
    names = ["analyze.kernel", "analyze.plot", "analyze.ignore_failures", "annotate", "VerbosityLevel",
             "VerbosityLevel.SILENT", "VerbosityLevel.INFO", "VerbosityLevel.DEBUG", "exceptions.ProfilerException",
             "row_panel", "col_panel", "utils.VerbosityLevel", "utils.CUDA_CORE_AVAILABLE", "Tool.NCU", "Tool.CUPTI",
             "activate", "deactivate", "get_active_tool", "experimental.collect", "CollectionScope.ONCE",
             "CollectionScope.ANNOTATION", "InfoCollector", "info_collector.CollectionScope",
             "info_collector.InfoCollector"]
    for dotted in names:
        obj = nsight
        for part in dotted.split("."):
            assert hasattr(obj, part), f"nsight.{dotted} is missing"
            obj = getattr(obj, part)
    for module in ("exceptions", "utils", "tools", "experimental", "info_collector"):
        assert importlib.import_module(f"kscope.{module}") is getattr(nsight, module)
        assert module in nsight.__all__
    for name in ("Tool", "activate", "deactivate", "get_active_tool", "row_panel", "col_panel", "CollectionScope",
                 "InfoCollector"):
        assert name in nsight.__all__


def test_nsight_style_program_runs(sim):
    """Example 00 of Nsight Python, written with nsight.* names, on the simulated backend."""

    @nsight.analyze.kernel(verbosity=nsight.VerbosityLevel.SILENT)
    def benchmark_matmul(n):
        with nsight.analyze.ignore_failures():
            raise RuntimeError("warm-up outside any annotation fails; the block swallows it")
        with nsight.annotate("matmul"):
            sim.launch("gemm", float(n))

    df = benchmark_matmul(1024).to_dataframe()
    assert df[["Annotation", "n", "AvgValue", "NumRuns"]].values.tolist() == [["matmul", 1024, 1024.0, 1]]
