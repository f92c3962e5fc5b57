"""Issue 25, from Python: never clobber, never lose, never abort. An output prefix is one process's
at a time; an earlier sweep is replaced only with overwrite=True; files go through symbolic links
and never replace a device; every path error is the OSError open() raises; a body without
annotation, a config given twice, a misspelt baseline are said early; messages name the failing
callable in Python's terms; the pip command ends on a closed pipe as Unix tools do."""

import gc
import math
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kscope
from kscope import AnnotationError, ConfigError, SweepError

from durable_workload import make
from test_catalogue import CPP_TERMS
from test_durable import child, lines

QUIET = dict(verbosity=0)


def measured(sim, **options):
    @kscope.analyze.kernel(configs=[(1,), (2,), (3,)], runs=2, **{**QUIET, **options})
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0 * n)

    return f


def test_a_second_process_on_one_prefix_is_refused_and_a_killed_ones_prefix_taken_over(tmp_path):
    prefix = str(tmp_path / "out_")
    process = child(prefix, 40, 0.05)
    try:
        deadline = time.monotonic() + 60
        while not Path(f"{prefix}durable-0-manifest.json").exists():
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.01)
        with kscope.testing.simulated_backend() as sim:
            f, calls = make(sim, prefix, 40, resume=True)
            with pytest.raises(ConfigError) as info:
                f()
        message = str(info.value)
        assert f"output_prefix '{prefix}durable-0-' is in use: process {process.pid} on host " in message
        assert ") is writing a sweep there" in message
        assert "two processes writing under one prefix would mix their files" in message
        assert calls == [] and not CPP_TERMS.search(message)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert Path(f"{prefix}durable-0-lock").exists()  # the killed process's; its lock died with it
    with kscope.testing.simulated_backend() as sim:
        f, calls = make(sim, prefix, 40, resume=True)
        assert len(f().to_dataframe()) == 40
    assert not Path(f"{prefix}durable-0-lock").exists()


def test_an_earlier_sweep_is_moved_aside_replaced_only_with_overwrite_or_resumed(sim, tmp_path, capfd):
    prefix = str(tmp_path / "out_")
    measured(sim, output_prefix=prefix)()
    earlier = Path(f"{prefix}f-0-results.json").read_text()
    measured(sim, output_prefix=prefix, verbosity="info")()  # a fresh process's first call: the same files
    assert (f"[kscope] moved a finished sweep under '{prefix}f-0-' aside: its 5 files end in '.~1~' now "
            f"(overwrite=True replaces it instead, resume=True returns its results without measuring)") in capfd.readouterr().err
    assert Path(f"{prefix}f-0-results.json.~1~").read_text() == earlier
    assert len(measured(sim, output_prefix=prefix, resume=True)().to_dataframe()) == 3
    assert len(measured(sim, output_prefix=prefix, overwrite=True)().to_dataframe()) == 3
    assert not Path(f"{prefix}f-0-results.json.~2~").exists()
    with pytest.raises(ConfigError, match="resume continues the sweep under output_prefix and overwrite replaces it"):
        kscope.analyze.kernel(output_prefix=prefix, resume=True, overwrite=True)


def test_saved_files_go_through_links_and_never_replace_what_is_no_file(sim, tmp_path):
    results = measured(sim)()
    (tmp_path / "data").mkdir()
    (tmp_path / "link.json").symlink_to("data/base.json")
    results.save(tmp_path / "link.json")
    assert (tmp_path / "link.json").is_symlink() and len(kscope.load(tmp_path / "data/base.json")) == 3

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match=r"cannot write '.*fifo': it is a FIFO \(named pipe\), not a regular file") as info:
        results.to_gbench_json(tmp_path / "fifo")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)
    assert info.value.errno is None
    with pytest.raises(OSError, match=r"^cannot write '/dev/null': it is a character device, not a regular file"):
        results.save("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(IsADirectoryError, match="it is a directory; give the path of a file"):
        results.save(tmp_path)
    with pytest.raises(FileNotFoundError, match="its directory '.*missing' does not exist"):
        results.save(tmp_path / "missing" / "x.json")


def test_output_prefix_naming_a_directory_writes_inside_it(sim, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("out")
    measured(sim, output_prefix="out", output_csv=True)()
    assert sorted(os.listdir("out")) == sorted(
        ["f-0-manifest.json", "f-0-progress.jsonl", "f-0-samples.csv", "f-0-summary.csv", "f-0-results.json",
         "profiled_data-f-0.csv", "processed_data-f-0.csv"])
    assert sorted(os.listdir(".")) == ["out"]  # nothing beside it (it wrote outf-0-*)


def test_output_csv_must_be_true_or_false():
    with pytest.raises(ConfigError, match="^output_csv must be True or False, not 'no'$"):
        kscope.analyze.kernel(output_csv="no")


def test_a_body_without_annotation_fails_after_its_first_config(sim):
    calls = []

    @kscope.analyze.kernel(configs=[(1,), (2,), (3,)], runs=2, **QUIET)
    def f(n):
        calls.append(n)
        sim.launch("kern", 1.0)

    with pytest.raises(SweepError) as info:
        f()
    assert isinstance(info.value.__cause__, kscope.KernelCountError)
    assert str(info.value).startswith(
        "config 1/3 (n=1) failed in its 3 runs: No kernels were profiled: the body opened no annotation in any of "
        "them, so nothing was measured. Mark the code to measure with 'with kscope.annotate(\"name\"):' around its kernel launches (or "
        "@kscope.annotate(\"name\") on a function the body calls)")
    assert calls == [1, 1, 1]


def test_normalize_against_an_annotation_the_body_does_not_open_fails_after_the_first_config(sim):
    with pytest.raises(SweepError) as info:
        measured(sim, normalize_against="kk")()
    assert isinstance(info.value.__cause__, ConfigError)
    assert ("normalize_against names annotation 'kk', which the body did not open (it opened 'k'): each row is "
            "divided by that annotation's AvgValue at its config, so a config without it has no rows. Name one of "
            "the annotations the body opens (did you mean 'k'?)") in str(info.value)
    assert len(info.value.partial_results.to_dataframe()) == 1


def test_failing_callables_are_named_without_pybind11s_traceback(sim):
    def tflops(duration, n):
        return 1 / 0

    with pytest.raises(SweepError) as info:
        measured(sim, derive_metric=tflops)()
    assert "config 1/3 (n=1) failed in run 1, in derive_metric: ZeroDivisionError: division by zero\n" in str(info.value)
    assert isinstance(info.value.__cause__, ZeroDivisionError)

    @kscope.analyze.kernel(configs=[(1,)], combine_kernel_metrics=lambda a, b: a / 0, **QUIET)
    def two(n):
        with kscope.annotate("k"):
            sim.launch("a", 1.0)
            sim.launch("b", 2.0)

    with pytest.raises(SweepError, match=r"failed in warm-up run 1, in combine_kernel_metrics: ZeroDivisionError"):
        two()

    @kscope.experimental.collect(scope=kscope.CollectionScope.RUN)
    def temperature():
        raise ValueError("no sensor")

    with pytest.raises(SweepError) as info:
        measured(sim, info_collectors=[temperature], info_collector_errors="raise")()
    assert "ValueError: no sensor" in str(info.value) and "At:" not in str(info.value)


def test_metric_database_arguments_are_checked_in_python_terms():
    with pytest.raises(TypeError, match=r"^list_metrics\(\) takes chip as a string, e.g. 'GH100', not 5$"):
        kscope.list_metrics(5)
    with pytest.raises(TypeError, match=r"^count_passes\(\) takes a list of metric names"):
        kscope.count_passes("dram__bytes_read.sum")
    with pytest.raises(TypeError, match=r"^describe_metric\(\) takes name as a string"):
        kscope.describe_metric(None)


def test_metric_hints_name_the_kscope_metrics_command_and_python():
    try:
        kscope.describe_metric("dram__byte_read.sum", "GH100")
    except ConfigError as e:
        message = str(e)
    except kscope.BackendError as e:
        pytest.skip(f"no metric database here: {e}")
    assert ("(`kscope metrics --chip GH100` lists every metric; kscope.list_metrics() returns them)") in message
    assert "kscope-metrics" not in message and not CPP_TERMS.search(message)
    # Issue 39: the name is refused in the words of the call that gave it, not analyze.kernel()'s.
    assert message.startswith("Invalid value ['dram__byte_read.sum'] for kscope.describe_metric(): unknown metric")


def test_a_changing_derived_unit_and_a_zero_baseline_are_warned(sim):
    def bandwidth(duration, n):
        return (duration, "MB/s") if n == 1 else (duration / 1000, "GB/s")

    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, derive_metric=bandwidth, normalize_against="base")
    def f(n):
        with kscope.annotate("base"):
            sim.launch("b", 0.0 if n == 1 else 5.0)
        with kscope.annotate("work"):
            sim.launch("w", 10.0)

    with pytest.warns(kscope.ProfilerWarning) as caught:
        df = f().to_dataframe()
    err = "\n".join(str(w.message) for w in caught)
    assert ("derive_metric returned the unit 'GB/s' for 'bandwidth' of annotation 'base' at config (n=2), 'MB/s' "
            "before") in err
    assert "normalize_against 'base' has an AvgValue of 0 for bandwidth at config (n=1)" in err
    assert math.isinf(df.query("Annotation == 'work' and n == 1 and Metric == 'bandwidth'")["AvgValue"].iloc[0])


def test_an_annotate_object_never_exited_is_an_annotation_error(sim):
    @kscope.analyze.kernel(configs=[(1,)], **QUIET)
    def f(n):
        kscope.annotate("dropped").__enter__()  # the object is collected at once, its region open
        gc.collect()
        sim.launch("kern", 1.0)

    with pytest.raises(SweepError) as info:
        f()
    assert isinstance(info.value.__cause__, AnnotationError)
    assert ("annotation 'dropped' was entered but never exited: Python collected its kscope.annotate object while the "
            "region was open") in str(info.value)

    with pytest.raises(AnnotationError, match=r"^annotate\('k'\).__exit__\(\) was called without a matching "
                                              r"__enter__\(\)"):
        kscope.annotate("k").__exit__(None, None, None)


def test_a_comparison_plot_never_loses_the_comparison(sim, tmp_path):
    results = measured(sim)()
    with pytest.raises(ConfigError, match=r"filename '.*missing/c.png' of kscope.compare\(plot=...\): its directory "
                                          r"'.*missing' does not exist"):
        kscope.compare(results, results, plot=tmp_path / "missing" / "c.png")  # before comparing

    @kscope.analyze.kernel(configs=[(1,)], runs=2, **QUIET)
    def other(n):
        with kscope.annotate("j"):
            sim.launch("kern", 1.0)

    with pytest.warns(kscope.CompareWarning), pytest.raises(ConfigError, match="no row was measured on both sides") \
            as info:
        kscope.compare(results, other(), plot=tmp_path / "c.png")  # nothing to draw: fails after comparing
    assert info.value.comparison["Verdict"].tolist() == ["only_in_baseline"] * 3 + ["only_in_candidate"]


def test_merge_takes_the_output_prefix_the_sweep_was_given(sim, tmp_path):
    prefix = str(tmp_path / "sweep_")
    for i in range(2):
        measured(sim, output_prefix=prefix, shard=(i, 2))()
    merged = kscope.merge(prefix)
    assert len(merged.to_dataframe()) == 3
    measured(sim, output_prefix=str(tmp_path / "sweep_other-"), shard=(0, 2))()  # a second sweep under the prefix
    with pytest.raises(ConfigError) as info:
        kscope.merge(prefix)
    assert str(info.value) == (f"'{prefix}' holds the shards of 2 sweeps (under '{prefix}f-0-', '{prefix}other-f-0-'): "
                               f"give the prefix of the one to merge, e.g. kscope.merge('{prefix}f-0-')")
    assert len(kscope.merge(f"{prefix}f-0-").to_dataframe()) == 3


def test_the_pip_command_ends_on_a_closed_pipe_as_unix_tools_do():
    program = Path(kscope.__file__).resolve().parents[2] / "kscope"  # the build tree's program
    if not os.access(program, os.X_OK):
        pytest.skip(f"no kscope program at {program} (an installed package: tests/install/pip_venv.sh checks it)")
    read, write = os.pipe()
    os.close(read)
    launcher = ("import sys; from pathlib import Path; import kscope._cli as cli; cli.PROGRAM = Path(sys.argv[1]); "
                "sys.argv = ['kscope', 'compare', '--help']; cli.main()")
    returncode = subprocess.call([sys.executable, "-c", launcher, str(program)], stdout=write, stderr=subprocess.DEVNULL,
                                 env=dict(os.environ, PYTHONPATH=str(Path(kscope.__file__).resolve().parents[1])))
    os.close(write)
    assert returncode == -signal.SIGPIPE  # it was 0: Python's ignored SIGPIPE reached the program
