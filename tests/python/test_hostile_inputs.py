"""Issue 39, from Python: hostile files and shared directories, odd options and values. Every case
ends in an error naming the problem and the fix in Python's terms (or a warning), never a crash, a
hang, pybind11's words or a file written outside the ones named."""

import math
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

import kscope
from kscope import AnnotationError, ConfigError, SweepError, SweepWarning

from test_catalogue import CPP_TERMS

QUIET = dict(verbosity=0)
PACKAGE_PARENT = str(Path(kscope.__file__).resolve().parents[1])


def measured(sim, configs=((1,), (2,), (3,)), **options):
    @kscope.analyze.kernel(configs=list(configs), runs=2, **QUIET, **options)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0 * n)

    return f


def saved(sim, tmp_path):
    path = tmp_path / "good.json"
    measured(sim)().save(path)
    return path


def without_blocking(call, fifo):
    """call()'s exception within 10 s; a call blocked on `fifo` is freed by a writer and fails the test."""
    outcome = []

    def run():
        try:
            call()
            outcome.append(None)
        except BaseException as e:  # noqa: BLE001: handed to the test
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join()
        pytest.fail(f"blocked on the FIFO {fifo}")
    return outcome[0]


# ---- Results files ------------------------------------------------------------------------------

def test_a_deeply_nested_file_is_refused_naming_it(tmp_path):
    """Bad case 1: 100,000 nested '[' killed Python with a segmentation fault."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ConfigError, match=r"^'.*deep\.json' is not JSON that kscope reads \(it nests deeper than 64 "
                                          r"levels, at line 1, column 65\); give a file written by ProfileResults\.save$"):
        kscope.load(path)


def test_a_number_beyond_a_double_is_refused_naming_the_file(sim, tmp_path):
    """Bad case 2: a bare RuntimeError with nlohmann's text and no file name."""
    path = saved(sim, tmp_path)
    path.write_text(path.read_text().replace('"AvgValue": ', '"AvgValue": 1e999, "was": ', 1))
    with pytest.raises(ConfigError) as info:
        kscope.load(path)
    assert str(info.value).startswith(f"'{path}' is not JSON that kscope reads (number overflow parsing '1e999'")


@pytest.mark.parametrize("content", [b"\xff\xfe{\x00\"\x00", b"\xef\xbb\xbf[\x80]", bytes(range(256))])
def test_binary_utf16_or_bom_text_is_refused_naming_the_file(tmp_path, content):
    """A UnicodeDecodeError without the file's name."""
    path = tmp_path / "odd.json"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=rf"^'{path}' is not JSON that kscope reads \("):
        kscope.load(path)


def test_a_repeated_summary_row_is_refused(sim, tmp_path):
    """It loaded silently and showed up in compare as a phantom row."""
    path = saved(sim, tmp_path)
    text = path.read_text()
    start = text.index('\n "summary": [') + len('\n "summary": [')
    end = text.index("\n  }", start) + 4
    path.write_text(text[:end] + "," + text[start:end] + text[end:])
    with pytest.raises(ConfigError, match=r"summary row 1 repeats row 0 \(annotation 'k', config 0, metric "
                                          r"'test__kernel_duration'\)"):
        kscope.load(path)


def test_load_reads_a_pipe_once_and_never_waits_for_a_writer(sim, tmp_path):
    """It blocked forever on a FIFO; then it refused process substitution (<(cat a.json)), a pipe that
    reading once would do."""
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    error = without_blocking(lambda: kscope.load(fifo), fifo)
    assert isinstance(error, ConfigError) and str(error).startswith(f"'{fifo}' is not JSON that kscope reads ("), error

    text = saved(sim, tmp_path).read_bytes()
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, text), os.close(write_end)))
    writer.start()
    try:
        assert len(kscope.load(f"/dev/fd/{read_end}")) == len(kscope.load(saved(sim, tmp_path)))
    finally:
        writer.join()
        os.close(read_end)


# ---- A sweep's files ----------------------------------------------------------------------------

def test_resume_with_a_fifo_for_samples_is_refused_without_waiting(sim, tmp_path):
    prefix = str(tmp_path / "out_")
    measured(sim, output_prefix=prefix)()
    os.remove(f"{prefix}f-0-samples.csv")
    os.mkfifo(f"{prefix}f-0-samples.csv")
    error = without_blocking(lambda: measured(sim, output_prefix=prefix, resume=True)(), f"{prefix}f-0-samples.csv")
    assert isinstance(error, OSError) and "it is a FIFO (named pipe), not a file kscope wrote there" in str(error), error


def test_a_progress_file_that_is_a_directory_is_an_is_a_directory_error(sim, tmp_path):
    """A bare ProfilerException."""
    prefix = str(tmp_path / "out_")
    measured(sim, output_prefix=prefix)()
    os.remove(f"{prefix}f-0-progress.jsonl")
    os.mkdir(f"{prefix}f-0-progress.jsonl")
    with pytest.raises(IsADirectoryError, match="progress.jsonl"):
        measured(sim, output_prefix=prefix, resume=True)()


def test_garbage_in_progress_is_blamed_on_progress(sim, tmp_path):
    """It was blamed on samples.csv."""
    prefix = str(tmp_path / "out_")
    measured(sim, output_prefix=prefix)()
    progress = Path(f"{prefix}f-0-progress.jsonl")
    progress.write_text(progress.read_text().replace("\n", "\nnot json\n", 1))
    with pytest.warns(kscope.ProfilerWarning, match=r"line 2 of '.*f-0-progress\.jsonl' is not a progress line kscope "
                                                    r"writes \(edited, or written by something else\)"):
        measured(sim, output_prefix=prefix, resume=True)()


def test_a_sweep_that_failed_as_it_started_leaves_nothing_that_holds_the_prefix(sim, tmp_path):
    """A full disk at the start left an empty progress.jsonl that refused a re-run and resume=True."""
    prefix = str(tmp_path / "out_")
    Path(f"{prefix}f-0-progress.jsonl").write_text("")
    assert len(measured(sim, output_prefix=prefix)().to_dataframe()) == 3
    Path(f"{prefix}g-0-progress.jsonl").write_text("")

    @kscope.analyze.kernel(configs=[(1,)], runs=2, output_prefix=prefix, resume=True, **QUIET)
    def g(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0)

    assert len(g().to_dataframe()) == 1


def test_a_finished_sweep_in_a_read_only_directory_points_to_kscope_load(unprivileged):
    """It was refused without pointing to kscope.load. Run as another user where the tests run as
    root (who may write anywhere)."""
    scratch, run = unprivileged
    directory = scratch / "ro"
    directory.mkdir()
    directory.chmod(0o777)
    code = ("import kscope, kscope.testing as t, sys\n"
            "with t.simulated_backend() as sim:\n"
            "    @kscope.analyze.kernel(configs=[(1,)], runs=2, verbosity=0, output_prefix=sys.argv[1],"
            " resume=sys.argv[2] == 'resume')\n"
            "    def f(n):\n"
            "        with kscope.annotate('k'):\n"
            "            sim.launch('kern', 10.0)\n"
            "    try:\n"
            "        f()\n"
            "    except kscope.ConfigError as e:\n"
            "        print(e)\n")
    first = run(code, f"{directory}/", "measure")
    assert first.returncode == 0 and first.stdout == "", first
    directory.chmod(0o555)
    try:
        refused = run(code, f"{directory}/", "resume")
    finally:
        directory.chmod(0o755)
    assert (f"The results of the sweep there need no writing: read them with kscope.load('{directory}/f-0-results.json')"
            in refused.stdout), refused


@pytest.mark.parametrize("prefix, in_the_way", [("/dev/null/out_", "'/dev/null' is a character device"),
                                                ("/dev/full/", "'/dev/full' is a character device"),
                                                ("{tmp}/file/out_", "'{tmp}/file' is a file")])
def test_a_prefix_under_a_device_or_a_file_names_what_is_in_the_way(sim, tmp_path, prefix, in_the_way):
    """They said "cannot create its directory (File exists)"."""
    (tmp_path / "file").write_text("x")
    prefix, in_the_way = prefix.format(tmp=tmp_path), in_the_way.format(tmp=tmp_path)
    with pytest.raises(ConfigError, match=f"{in_the_way}, not a directory; give a prefix in a directory$"):
        measured(sim, output_prefix=prefix)()


def test_a_device_as_prefix_is_refused(sim):
    with pytest.raises(ConfigError, match=r"^output_prefix '/dev/null' is a character device: an output prefix starts "
                                          r"the names of the files written beside it"):
        measured(sim, output_prefix="/dev/null")()
    assert not os.path.exists("/dev/nullf-0-manifest.json")


def test_an_integer_beyond_int64_is_warned_as_saved_as_text(sim, tmp_path):
    """An int axis with one value beyond int64 came back from a saved file as strings, unsaid."""
    @kscope.analyze.kernel(configs=[(1,), (2**64,)], runs=2, **QUIET)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0)

    with pytest.warns(SweepWarning, match=r"parameter 'n' has the integer 18446744073709551616, beyond the 64-bit "
                                          r"integers the engine holds, so its values are kept as text labels"):
        results = f()
    assert results.to_dataframe()["n"].tolist() == [1, 2**64]


# ---- Merge --------------------------------------------------------------------------------------

def test_merge_refusals_point_to_what_is_there(sim, tmp_path):
    prefix = str(tmp_path / "sweep_")
    for i in range(2):
        measured(sim, output_prefix=prefix, shard=(i, 2))()
    with pytest.raises(ConfigError, match=r"shard 1/2 of the sweep is missing from the files given, but '.*"
                                          r"f-0-shard-1-of-2-results\.json' is beside them: give the sweep's prefix"):
        kscope.merge(f"{prefix}f-0-shard-0-of-2-results.json")
    whole = str(tmp_path / "whole_")
    measured(sim, output_prefix=whole)()
    with pytest.raises(ConfigError, match=rf"which are whole already: read them with kscope\.load\('{whole}f-0-results"):
        kscope.merge(f"{whole}f-0-")
    other = str(tmp_path / "other_")
    measured(sim, configs=[(1,), (2,), (4,)], output_prefix=other, shard=(1, 2))()
    with pytest.raises(ConfigError, match=r"measured different sweeps \(config 3 is \(n=4\) and \(n=3\)\)"):
        kscope.merge([f"{prefix}f-0-shard-0-of-2-results.json", f"{other}f-0-shard-1-of-2-results.json"])


@pytest.mark.parametrize("given", [5, None, [5], b"out_"])
def test_merge_of_something_else_is_a_type_error_in_python_terms(given):
    """merge(5) was a TypeError from Python's insides ('int' object is not iterable)."""
    with pytest.raises(TypeError, match=r"^kscope\.merge takes the shards of a sweep: a list of ProfileResults, of "
                                        r"results files or of output prefixes \(or one path\)"):
        kscope.merge(given)


# ---- Options and values -------------------------------------------------------------------------

def test_work_beyond_a_float_is_a_config_error(sim):
    """An OverflowError from math.isfinite."""
    with pytest.raises(ConfigError, match=r"^kscope.Work bytes=1000000000000000000000000000000000000000\.\.\. \(401 "
                                          r"characters\): give the bytes"):
        kscope.Work(bytes=10**400)
    f = measured(sim, work=lambda n: kscope.Work(bytes=10**400))
    with pytest.raises(SweepError) as info:
        f()
    assert isinstance(info.value.__cause__, ConfigError)


def test_a_failing_work_function_is_named(sim):
    f = measured(sim, work=lambda n: 1 / 0)
    with pytest.raises(SweepError, match=r"failed in run 1, in work: ZeroDivisionError: division by zero") as info:
        f()
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_kscope_tool_typo_is_refused_on_the_simulated_backend_too(sim, monkeypatch):
    """Ignored under the simulated backend, an error on a GPU."""
    monkeypatch.setenv("KSCOPE_TOOL", "nvprof")
    with pytest.raises(ConfigError, match=r"^KSCOPE_TOOL='nvprof' names no tool"):
        measured(sim)()


def test_combining_kernels_under_range_replay_is_refused(sim):
    """combine_kernel_metrics was ignored silently under replay_mode='range'."""
    f = measured(sim, replay_mode="range", combine_kernel_metrics=lambda a, b: a + b)
    with pytest.raises(ConfigError, match=r"^combine_kernel_metrics is set, but replay_mode='range' measures each region "
                                          r"as one result \(the span of its kernels\), so it would combine nothing"):
        f()


def test_a_collector_that_cannot_take_its_arguments_is_refused_at_decoration():
    @kscope.experimental.collect(scope=kscope.CollectionScope.RUN)
    def temperature(n, dtype, extra):
        return 1.0

    @kscope.experimental.collect(scope=kscope.CollectionScope.ONCE)
    def host(name):
        return "h"

    with pytest.raises(ConfigError, match=r"^info collector 'temperature' of scope RUN is called with the 1 config values, "
                                          r"which temperature\(n, dtype, extra\) does not accept"):
        kscope.analyze.kernel(configs=[1], info_collectors=[temperature])(lambda n: None)
    with pytest.raises(ConfigError, match=r"^info collector 'host' of scope ONCE is called with no arguments"):
        kscope.analyze.kernel(configs=[1], info_collectors=[host])(lambda n: None)


def test_ctrl_c_in_a_collector_is_an_interrupt_without_a_collector_warning(sim):
    @kscope.experimental.collect(scope=kscope.CollectionScope.RUN)
    def reading(n):
        raise KeyboardInterrupt

    f = measured(sim, info_collectors=[reading])
    with warnings.catch_warnings(record=True) as caught, pytest.raises(kscope.SweepInterrupted):
        warnings.simplefilter("always")
        f()
    assert [str(w.message) for w in caught] == []


def test_an_energy_window_of_zero_is_named():
    with pytest.raises(ConfigError, match=r"^energy_window is 0: it must be a duration in seconds above 0 and at most 3600"):
        kscope.analyze.kernel(metrics=kscope.energy_metrics(), backend="cupti", energy_window=0)


def test_a_misspelt_energy_metric_is_named_with_the_close_name():
    """It was steered to backend='counters'."""
    with pytest.raises(ConfigError, match=r"^'nvml__energy_per_rn' in metrics is not one of the energy metrics .*: did you "
                                          r"mean 'nvml__energy_per_run'\?$"):
        kscope.analyze.kernel(metrics=["nvml__energy_per_rn"])


@pytest.mark.parametrize("configs, given", [([1, True, 1.0], "n=1 and n=True, equal by =="),
                                            ([0.0, -0.0], "n=0.0 and n=-0.0, equal by ==")])
def test_values_equal_by_python_are_one_config(sim, configs, given):
    """[1, True, 1.0] were three configs while [0.0, -0.0] were refused as repeats: one rule now,
    Python's == (as a set keeps one of them)."""
    with pytest.raises(ConfigError, match=rf"^configs 1 and 2 are the same \({given}"):
        measured(sim, configs=configs)()


@pytest.mark.parametrize("returned, problem", [
    ([1.0, "GB/s", 3], r"returned \[1\.0, 'GB/s', 3\], a 3-element list"),
    ({1: 2.0}, r"returned a dict with the key 1, of type int: each derived metric is named by a string key"),
    (True, r"returned True, a truth value rather than a number"),
    ((1.0, 3), r"returned the unit 3 for 'bw', of type int: a unit is a string"),
])
def test_derive_metric_results_of_other_shapes_are_refused(sim, returned, problem):
    def bw(duration, n):
        return returned

    with pytest.raises(SweepError, match=problem):
        measured(sim, derive_metric=bw)()


def test_a_used_up_generator_is_named_as_such(sim):
    """A second call said "configs cannot be empty"."""
    generator = ((n,) for n in (1, 2))

    @kscope.analyze.kernel(runs=2, **QUIET)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0)

    assert len(f(configs=generator).to_dataframe()) == 2
    with pytest.raises(ConfigError, match=r"^configs is an iterator that gave no configs: it is used up"):
        f(configs=generator)


def test_ignore_kernel_list_names_that_match_nothing_are_mentioned(sim):
    f = measured(sim, ignore_kernel_list=["kern", "kern_typo"])
    with pytest.raises(SweepError, match=r"ignore_kernel_list's 'kern_typo' matched none of its kernels: a misspelt name"):
        f()


# ---- API edges ----------------------------------------------------------------------------------

def test_wrong_argument_types_are_said_without_pybind11(sim):
    with pytest.raises(ConfigError) as info:
        kscope.energy_efficiency("1.0", flop=1)
    assert str(info.value) == "energy_efficiency: energy_j must be a number (a run's energy in J, e.g. the " \
                              "nvml__energy_per_run value), not '1.0'"
    with pytest.raises(TypeError) as launch:
        sim.launch("k", "100")
    assert str(launch.value) == "SimulatedBackend.launch: duration_ns must be a number of nanoseconds, e.g. 100.0, not '100'"
    for message in (str(info.value), str(launch.value)):
        assert "incompatible function arguments" not in message and "kscope._core" not in message


def test_energy_efficiency_refuses_a_negative_energy():
    with pytest.raises(ConfigError, match=r"^energy_efficiency: energy_j is -1.0, but a run's energy is positive"):
        kscope.energy_efficiency(-1.0, flop=100)
    assert all(math.isnan(v) for v, _ in kscope.energy_efficiency(math.nan, flop=100).values())


def test_the_metrics_command_refuses_names_in_its_own_words():
    """`kscope metrics --passes` named Settings::metrics (describe_metric, which blamed analyze.kernel()'s
    metrics parameter: test_never_clobber.py::test_metric_hints_name_the_kscope_metrics_command_and_python)."""
    program = Path(kscope.__file__).resolve().parents[2] / "kscope"
    if not os.access(program, os.X_OK):
        pytest.skip(f"no kscope program at {program}")
    try:
        kscope.count_passes(["dram__bytes_read.sum"], "GH100")
    except kscope.BackendError as e:
        pytest.skip(f"no metric database here: {e}")
    out = subprocess.run([str(program), "metrics", "--chip", "GH100", "--passes", "dram__byte_read.sum"],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "for kscope metrics --passes: unknown metric" in out.stderr, out
    assert not CPP_TERMS.search(out.stderr), out.stderr


def test_a_long_name_is_cut_in_messages(sim):
    """A 1 MB name was echoed whole."""
    name = "x" * 1_000_000

    @kscope.analyze.kernel(configs=[(1,)], runs=2, **QUIET)
    def f(n):
        with kscope.annotate(name):
            sim.launch("kern", 10.0)
        with kscope.annotate(name):
            sim.launch("kern", 10.0)

    with pytest.raises(SweepError) as info:
        f()
    assert len(str(info.value)) < 2000 and "(1000000 characters)" in str(info.value)


def test_empty_partial_results_give_frames_without_pandas_warnings(sim):
    @kscope.analyze.kernel(configs=[(1,)], runs=2, **QUIET)
    def f(n):
        raise ValueError("fails at once")

    with pytest.raises(SweepError) as info:
        f()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(info.value.partial_results.to_dataframe()) == 0
        assert len(info.value.partial_results.raw_dataframe()) == 0


def test_a_long_simulated_kernel_costs_no_more_than_a_short_one(sim):
    """1e17 ns did not return: the simulated energy counter stepped through every update."""
    f = measured(sim, configs=[(1e16,)])
    start = time.monotonic()
    assert len(f().to_dataframe()) == 1
    assert time.monotonic() - start < 10
    with pytest.raises(SweepError, match=r"duration_ns is inf, beyond what the simulated GPU clock counts"):
        measured(sim, configs=[(math.inf,)])()


# ---- Interrupts ---------------------------------------------------------------------------------

def test_an_uncaught_sweep_interrupted_ends_the_program_as_ctrl_c_does():
    """It exited with status 1; a program ended by Ctrl-C is killed by SIGINT (130 in a shell)."""
    code = ("import kscope\n"
            "raise kscope.SweepInterrupted('sweep interrupted (Ctrl-C, SIGINT) before config 1/1')\n")
    ended = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=PACKAGE_PARENT),
                           capture_output=True, text=True)
    assert ended.returncode == -signal.SIGINT, ended
    assert "SweepInterrupted: sweep interrupted (Ctrl-C, SIGINT)" in ended.stderr
