"""The catalogue of bad inputs (issue 15): each gets a clear error naming the problem and the
Python fix, never a C++ spelling, a pybind11 TypeError or a silent wrong number."""

import json
import math
import re
import threading

import pytest

import kscope
from kscope import AnnotationError, BackendError, ConfigError, SweepError

QUIET = dict(verbosity=0)
CPP_TERMS = re.compile(r"Settings::|Backend::|std::|SweepError::|SweepInterrupted::|partial_results\(\)|ReplayMode::|"
                       r"ThermalMode::|\bAt:\n")


def profiled(sim, configs=((1,), (2,)), **options):
    def decorate(body):
        @kscope.analyze.kernel(configs=list(configs), runs=2, **QUIET, **options)
        def f(n):
            with kscope.annotate("k"):
                sim.launch("kern", 100.0 * n)
            body(n)

        return f

    return decorate


def sweep_failure(f):
    with pytest.raises(SweepError) as info:
        f()
    assert not CPP_TERMS.search(str(info.value)), str(info.value)
    return info.value


def test_derive_metric_named_like_a_measured_metric_is_refused(sim):
    def test__kernel_duration(duration, n):  # the default name of a derived value is the function's
        return duration * 2

    e = sweep_failure(profiled(sim, derive_metric=test__kernel_duration)(lambda n: None))
    assert isinstance(e.__cause__, ConfigError)
    assert ("derive_metric returned a value named 'test__kernel_duration', the name of a measured metric: its values "
            "would be averaged into that metric's row. Name the function differently, or return a dict with another "
            "key") in str(e)
    assert len(e.partial_results.raw_dataframe()) == 0  # the run it failed in is not half kept
    e = sweep_failure(profiled(sim, derive_metric=lambda d, n: {"test__kernel_duration": (d, "ns")})(lambda n: None))
    assert "the name of a measured metric" in str(e.__cause__)


def test_derive_metric_returning_none_is_refused_unless_the_run_failed(sim):
    e = sweep_failure(profiled(sim, derive_metric=lambda d, n: None)(lambda n: None))
    assert isinstance(e.__cause__, ConfigError)
    assert "derive_metric <lambda>() returned None (measured values [100.0])" in str(e)
    assert "float('nan') for a value that does not exist. Is a return statement missing?" in str(e)

    # A failed run (ignore_failures) has NaN values: None is then accepted, as NaN.
    calls = []

    @kscope.analyze.kernel(configs=[(1,)], runs=3, derive_metric=lambda d, n: None if math.isnan(d) else (d, "ns"),
                           **QUIET)
    def flaky(n):
        calls.append(n)
        with kscope.annotate("k", ignore_failures=True):
            if len(calls) == 3:
                raise RuntimeError("transient")
            sim.launch("kern", 5.0)

    derived = flaky().raw_dataframe().query("Metric == '<lambda>'")["Value"]
    assert derived.isna().tolist() == [False, True, False]


@pytest.mark.parametrize("returned, says", [
    ("1.5", "returned '1.5', text rather than a number"),
    ((1.5,), "returned (1.5,), a 1-element tuple"),
    ((), "returned (), a 0-element tuple"),
    ({"bw": "fast"}, "returned 'fast' for 'bw', text rather than a number"),
    (object, "returned <class 'object'>, of type type, not a number"),
])
def test_derive_metric_returning_something_else_than_numbers_names_it(sim, returned, says):
    def bandwidth(duration, n):
        return returned

    e = sweep_failure(profiled(sim, derive_metric=bandwidth)(lambda n: None))
    assert isinstance(e.__cause__, ConfigError)
    assert f"derive_metric bandwidth() {says}: return a number, a (value, unit) tuple, or a dict of them" in str(e)


def test_combine_kernel_metrics_returning_text_names_it(sim):
    @kscope.analyze.kernel(configs=[(1,)], combine_kernel_metrics=lambda a, b: "sum", **QUIET)
    def two(n):
        with kscope.annotate("k"):
            sim.launch("a", 1.0)
            sim.launch("b", 2.0)

    e = sweep_failure(two)
    assert "combine_kernel_metrics returned 'sum' for the kernel values 1.0 and 2.0: it must return one number" in str(e)


def test_a_body_error_reads_as_python_without_pybind_traceback(sim):
    def fail(n):
        if n == 2:
            raise ValueError("bad size")

    e = sweep_failure(profiled(sim)(fail))
    assert "config 2/2 (n=2) failed in warm-up run 1: ValueError: bad size\n" in str(e)
    assert "At:" not in str(e)
    assert isinstance(e.__cause__, ValueError) and e.__cause__.__traceback__ is not None
    assert len(e.partial_results.to_dataframe()) == 1


@pytest.mark.parametrize("options, says", [
    (dict(runs=2**64), "runs must be an integer from 1 to 1000000000, not 18446744073709551616"),
    (dict(runs=2.5), "runs must be an integer from 1 to 1000000000, not 2.5"),
    (dict(runs="10"), "runs must be an integer from 1 to 1000000000, not '10'"),
    (dict(warmup_runs=2**70), "warmup_runs must be an integer from 0 to 1000000000"),
    (dict(adaptive={"min_runs": 2.5}), r"adaptive\['min_runs'\] must be an integer from 0 to 1000000000, not 2.5"),
    (dict(adaptive={"max_runs": 2**64}), r"adaptive\['max_runs'\] must be an integer from 0 to 1000000000"),
    (dict(adaptive={"target_pct": "1"}), r"adaptive\['target_pct'\] must be a number, not '1'"),
    (dict(adaptive={"target_pct": 0}), r"adaptive sampling needs adaptive\['target_pct'\] > 0"),
    (dict(adaptive={"min_runs": 5, "max_runs": 3}), r"adaptive\['max_runs'\] must be >= adaptive\['min_runs'\]"),
    (dict(thermal_wait=float("nan")), "thermal_wait must be a number, not nan"),
    (dict(thermal_device=2**40), "thermal_device must be an integer from 0 to 2147483647"),
])
def test_huge_or_non_integer_option_values_are_config_errors_naming_the_option(options, says):
    with pytest.raises(ConfigError, match=says) as info:
        kscope.analyze.kernel(**options)
    assert not CPP_TERMS.search(str(info.value))


def test_an_annotation_entered_and_never_exited_is_an_annotation_error(sim):
    left_open = []

    @kscope.analyze.kernel(configs=[(1,)], **QUIET)
    def f(n):
        region = kscope.annotate("open")
        region.__enter__()
        left_open.append(region)  # outlives the body: never closed
        sim.launch("kern", 1.0)

    e = sweep_failure(f)
    assert isinstance(e.__cause__, AnnotationError)
    assert "annotation 'open' was still open when the body returned" in str(e)

    # Closing it later, inside another sweep, leaves that sweep's regions alone.
    @kscope.analyze.kernel(configs=[(1,)], runs=2, **QUIET)
    def g(n):
        with kscope.annotate("k"):
            if left_open:
                left_open.pop().__exit__(None, None, None)
            sim.launch("kern", 7.0)

    assert g().to_dataframe()["AvgValue"].tolist() == [7.0]


def test_a_second_threads_profiled_call_is_refused_while_one_runs(sim):
    inside, release = threading.Event(), threading.Event()
    outcome = {}

    @kscope.analyze.kernel(configs=[(1,)], runs=1, **QUIET)
    def slow(n):
        with kscope.annotate("k"):
            sim.launch("kern", 1.0)
        inside.set()
        release.wait(30)

    def first():
        outcome["first"] = len(slow().to_dataframe())

    thread = threading.Thread(target=first)
    thread.start()
    assert inside.wait(30)

    @kscope.analyze.kernel(configs=[(1,)], **QUIET)
    def other(n):
        with kscope.annotate("k"):
            sim.launch("kern", 1.0)

    try:
        with pytest.raises(ConfigError, match="a profiled function was called while another profiled call is running "
                                              r"\(from the body or another thread\)") as info:
            other()
        assert "profile()" not in str(info.value)
    finally:
        release.set()
        thread.join(30)
    assert outcome["first"] == 1
    assert len(other().to_dataframe()) == 1  # once the first is done, the second thread's turn comes


def test_engine_messages_never_name_cpp(sim):
    messages = []

    def collect(call, error=Exception):
        with pytest.raises(error) as info:
            call()
        messages.append(str(info.value))

    collect(lambda: kscope.analyze.kernel(ncu_sections=["SpeedOfLight"]))
    collect(lambda: kscope.analyze.kernel(metrics=["dram__bytes_read.sum"])(lambda: None)())
    collect(lambda: kscope.analyze.kernel(backend="ncu", resume=True, output_prefix="x_"))
    collect(lambda: kscope.analyze.kernel(thermal_wait=20, thermal_cont=15))
    messages.append(json.dumps(kscope.doctor(verbose=False)))
    for message in messages:
        assert not CPP_TERMS.search(message), message
    assert any("backend='counters'" in m for m in messages)


def test_without_a_driver_the_error_says_so_and_points_to_the_doctor():
    @kscope.analyze.kernel(configs=[(1,)], **QUIET)
    def f(n):
        pass

    try:
        f()
    except BackendError as e:
        message = str(e)
    except SweepError:  # a GPU ran the body, which launches nothing: "No kernels were profiled"
        pytest.skip("a GPU is usable here")
    else:
        pytest.skip("a GPU is usable here")
    if "built without CUDA" in message:
        pytest.skip("kscope was built without CUDA")
    assert "no usable NVIDIA driver" in message or "no NVIDIA GPU is visible" in message, message
    assert "Run kscope.doctor() to see what is missing here" in message
    assert not CPP_TERMS.search(message)
