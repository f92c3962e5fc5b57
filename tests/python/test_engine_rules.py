"""What the engine decides for Python callers: errors raised while a region closes, quiet means
quiet, messages in Python terms, the column schema, the error classes, output_prefix."""

import os

import pytest

import kscope
from kscope import ConfigError, SweepError


def one_kernel(sim, name="k"):
    def body(n):
        with kscope.annotate(name):
            sim.launch("kern", 100.0 * n)

    return body


def test_an_error_while_a_region_closes_is_a_sweep_error_naming_the_region(sim):
    calls = []

    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, verbosity=0)
    def f(n):
        calls.append(n)
        with kscope.annotate("closing"):
            sim.launch("kern", 1.0)
            if len(calls) == 5:  # config 1 took 3 calls; then config 2's warm-up and its run 1
                sim.fail_next_region_end("device lost while recording the end event")

    with pytest.raises(SweepError) as info:
        f()
    message = str(info.value)
    assert "config 2/2 (n=2) failed in run 1" in message
    assert "annotation 'closing' could not be closed: device lost while recording the end event" in message
    assert len(info.value.partial_results.to_dataframe()) == 1  # config 1 is kept
    # The interpreter survived (no std::terminate) and the next call works.
    calls.clear()
    assert len(kscope.analyze.kernel(configs=[(1,)], verbosity=0)(one_kernel(sim))().to_dataframe()) == 1


def flaky(sim, verbosity):
    """Profiles one config whose second call fails inside an ignore_failures annotation."""
    calls = []

    @kscope.analyze.kernel(configs=[(1,)], runs=3, verbosity=verbosity)
    def f(n):
        calls.append(n)
        with kscope.annotate("flaky", ignore_failures=True):
            if len(calls) == 2:
                raise RuntimeError("transient")
            sim.launch("kern", 1.0)

    return f()


def test_silent_prints_nothing(sim, capfd):
    with pytest.warns(kscope.SweepWarning):
        flaky(sim, kscope.VerbosityLevel.SILENT)
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize("verbosity", [kscope.VerbosityLevel.SILENT, kscope.VerbosityLevel.INFO])
def test_an_ignored_failure_is_a_python_warning_whatever_the_verbosity(sim, verbosity):
    # As in Nsight Python: verbosity silences progress, Python's filters decide about warnings.
    with pytest.warns(RuntimeWarning, match=r"annotation 'flaky' failed in config \(n=1\) and was recorded as NaN"):
        flaky(sim, verbosity)


def test_engine_messages_name_python_options_and_fixes(sim):
    @kscope.analyze.kernel(configs=[(1,)], verbosity=0)
    def pair(n):
        with kscope.annotate("pair"):
            sim.launch("a", 1.0)
            sim.launch("b", 2.0)

    with pytest.raises(SweepError) as info:
        pair()
    cause = str(info.value.__cause__)
    assert "combine_kernel_metrics=lambda a, b: a + b" in cause and "ignore_kernel_list" in cause
    assert "Settings::" not in str(info.value) and "std::" not in str(info.value)
    assert "the error's partial_results" in str(info.value)
    with pytest.raises(ConfigError, match=r"thermal_cont \(15°C\) must be greater than thermal_wait \(20°C\)") as bad:
        kscope.analyze.kernel(thermal_wait=20, thermal_cont=15)
    assert "Settings::" not in str(bad.value)


def test_the_dataframe_columns_follow_the_engine_schema(sim):
    df = kscope.analyze.kernel(configs=[(1,)], runs=2, verbosity=0)(one_kernel(sim))().to_dataframe()
    schema = [name for name, _ in kscope._core.summary_columns()]
    assert list(df.columns) == ["Annotation", "n", *schema]
    for name, kind in kscope._core.summary_columns():
        if kind == "real":
            assert df[name].dtype == "float64", name
        elif kind == "integer":
            assert df[name].dtype == "int64", name
        elif kind == "optional_boolean":
            assert df[name].dtype == "boolean", name


def test_every_engine_error_has_a_python_class():
    for name in ("ConfigError", "AnnotationError", "BackendError", "CudaError", "ThermalError", "InternalError",
                 "SweepError"):
        assert issubclass(getattr(kscope, name), kscope.ProfilerException), name


def test_output_prefix_reaches_the_engine(sim, tmp_path):
    prefix = str(tmp_path / "out" / "run_")
    f = kscope.analyze.kernel(configs=[(1,)], runs=2, output_prefix=prefix, verbosity=0)(one_kernel(sim))
    f()
    f()
    for call in (0, 1):
        for name in ("summary.csv", "samples.csv", "results.json"):
            assert os.path.isfile(f"{prefix}body-{call}-{name}"), (call, name)


def test_an_unusable_output_prefix_fails_before_anything_runs(sim, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    ran = []

    @kscope.analyze.kernel(configs=[(1,)], output_prefix=str(blocker / "sub" / "x_"), verbosity=0)
    def f(n):
        ran.append(n)

    with pytest.raises(ConfigError, match="cannot create its directory"):
        f()
    assert ran == []
