"""Nothing measured is lost, from Python: samples streamed under output_prefix as each config
finishes, a sweep killed in a child process and resumed, Ctrl-C (in-process, from outside, in a
Jupyter kernel) raising kscope.SweepInterrupted with the partial results, and failures after the
sweep (plot, CSV) that keep the results."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import kscope
from conftest import need
from kscope import ConfigError, SweepInterrupted

from durable_workload import make

HERE = Path(__file__).resolve().parent
KSCOPE_PATH = str(Path(kscope.__file__).resolve().parents[1])
RUNS_PER_CONFIG = 1 + 3  # warm-up + runs


def lines(path):
    return Path(path).read_text().splitlines() if Path(path).exists() else []


def uninterrupted(configs):
    with kscope.testing.simulated_backend() as sim:
        f, _ = make(sim, None, configs)
        return f()


def assert_same_table(got, expected):
    pd.testing.assert_frame_equal(got.to_dataframe(), expected.to_dataframe(), check_exact=True)
    pd.testing.assert_frame_equal(got.raw_dataframe(), expected.raw_dataframe(), check_exact=True)


def child(prefix, configs, delay_s, *extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([KSCOPE_PATH, str(HERE)]))
    return subprocess.Popen([sys.executable, str(HERE / "durable_workload.py"), prefix, str(configs), str(delay_s),
                             *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_progress(path, finished_configs, process, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while len(lines(path)) < finished_configs:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the child made no progress"
        time.sleep(0.002)


def test_each_configs_samples_are_on_disk_when_the_next_one_starts(sim, tmp_path):
    prefix = str(tmp_path / "out_")
    seen = []

    @kscope.analyze.kernel(configs=[(1,), (2,), (3,)], runs=2, output_prefix=prefix, verbosity=0, fsync_interval_s=0)
    def f(n):
        seen.append(len(lines(f"{prefix}f-0-samples.csv")) - 1)
        with kscope.annotate("k"):
            sim.launch("kern", n)

    results = f()
    assert seen[::3] == [0, 2, 4]  # at each config's first call: the finished configs' rows
    assert len(lines(f"{prefix}f-0-progress.jsonl")) == 3
    assert json.loads(Path(f"{prefix}f-0-manifest.json").read_text())["axes"] == ["n"]
    assert pd.read_csv(f"{prefix}f-0-samples.csv")["Value"].tolist() == results.raw_dataframe()["Value"].tolist()


def test_short_configs_are_written_together_and_all_of_them_by_the_end(sim, tmp_path):
    prefix = str(tmp_path / "out_")
    seen = []

    @kscope.analyze.kernel(configs=[(n,) for n in range(200)], runs=1, warmup_runs=0, output_prefix=prefix,
                           verbosity=0)
    def f(n):
        seen.append(len(lines(f"{prefix}f-0-progress.jsonl")))
        with kscope.annotate("k"):
            sim.launch("kern", n)

    results = f()
    assert any(written < n for n, written in enumerate(seen))  # some waited for the next write (10 ms apart)
    assert len(lines(f"{prefix}f-0-progress.jsonl")) == 200
    assert pd.read_csv(f"{prefix}f-0-samples.csv")["Value"].tolist() == results.raw_dataframe()["Value"].tolist()


def test_quick_configs_reach_the_os_within_10_ms_while_a_long_config_runs(tmp_path):
    prefix = str(tmp_path / "out_")
    process = child(prefix, 4, 0, "long:4")  # configs 1-3 take microseconds, config 4 a minute
    try:
        assert process.stdout.readline() == "long config started\n", process.communicate()
        time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert [json.loads(line)["config"] for line in lines(f"{prefix}durable-0-progress.jsonl")] == [0, 1, 2]
    assert pd.read_csv(f"{prefix}durable-0-samples.csv")["n"].tolist() == [1, 1, 1, 2, 2, 2, 3, 3, 3]


def test_fsync_interval_is_a_number_of_seconds():
    with pytest.raises(ConfigError, match=r"fsync_interval_s must be 0 \(flush after every config\) or a number of "
                                          r"seconds \(the default is 1.0\)"):
        kscope.analyze.kernel(fsync_interval_s=-1, output_prefix="x_")
    with pytest.raises(ConfigError, match="fsync_interval_s must be a number, not 'often'"):
        kscope.analyze.kernel(fsync_interval_s="often")


def test_a_killed_sweep_is_resumed_measuring_only_what_is_missing(tmp_path):
    prefix = str(tmp_path / "out_")
    configs = 40
    process = child(prefix, configs, 0.003)  # configs of 12 ms: each written as it finishes
    progress = f"{prefix}durable-0-progress.jsonl"
    wait_for_progress(progress, 5, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL

    done = len(lines(progress))
    assert 5 <= done < configs
    samples = Path(f"{prefix}durable-0-samples.csv").read_text()
    assert samples.endswith("\n")  # whole lines only
    rows = pd.read_csv(f"{prefix}durable-0-samples.csv")
    assert done * 3 <= len(rows) <= (done + 1) * 3
    assert rows["n"].tolist()[: done * 3] == [n for n in range(1, done + 1) for _ in range(3)]
    assert not Path(f"{prefix}durable-0-summary.csv").exists()

    with kscope.testing.simulated_backend() as sim:
        f, calls = make(sim, prefix, configs, resume=True)
        resumed = f()
    assert len(calls) == (configs - done) * RUNS_PER_CONFIG
    assert calls[0] == done + 1
    assert_same_table(resumed, uninterrupted(configs))
    assert Path(f"{prefix}durable-0-summary.csv").exists()


def test_resume_refuses_another_sweep_naming_the_difference_in_python_terms(sim, tmp_path):
    prefix = str(tmp_path / "out_")
    make(sim, prefix, 3)[0]()
    f, calls = make(sim, prefix, 3, resume=True, cache_control="none", warmup_runs=2)
    with pytest.raises(ConfigError) as info:
        f()
    message = str(info.value)
    assert f"cannot resume the sweep under '{prefix}durable-0-': it was measured differently (" in message
    assert 'cache_control: "all" on disk, "none" now' in message and "warmup_runs: 1 on disk, 2 now" in message
    assert ("start it over with overwrite=True instead of resume (its files are replaced), or give another "
            "output_prefix") in message
    assert "Settings::" not in message
    assert calls == []


def test_resume_needs_an_output_prefix():
    with pytest.raises(ConfigError, match="resume continues the sweep streamed under output_prefix, which is not set"):
        kscope.analyze.kernel(resume=True)
    with pytest.raises(ConfigError, match="resume must be True or False, not 'yes'"):
        kscope.analyze.kernel(resume="yes", output_prefix="x_")


def test_ctrl_c_in_the_body_stops_at_the_end_of_the_run_and_keeps_everything(sim, tmp_path):
    prefix = str(tmp_path / "out_")
    calls = []
    interrupt_at = [6]  # config 2: warm-up, then its first recorded run

    @kscope.analyze.kernel(configs=[(1,), (2,), (3,)], runs=3, output_prefix=prefix, verbosity=0)
    def f(n):
        calls.append(n)
        if len(calls) in interrupt_at:
            os.kill(os.getpid(), signal.SIGINT)
        with kscope.annotate("k"):
            sim.launch("kern", 100.0 * n)

    with pytest.raises(SweepInterrupted) as info:
        f()
    e = info.value
    assert isinstance(e, KeyboardInterrupt) and not isinstance(e, Exception)
    assert kscope.exceptions.SweepInterrupted is SweepInterrupted
    assert "sweep interrupted (Ctrl-C, SIGINT) in config 2/3 (n=2) after run 1" in str(e)
    assert "kept in the exception's partial_results and written to" in str(e)
    assert "run the sweep again with resume=True" in str(e)
    assert e.interrupted_config == "n=2"
    assert isinstance(e.partial_results, kscope.ProfileResults)
    assert e.partial_results.raw_dataframe()["n"].tolist() == [1, 1, 1, 2]
    assert len(calls) == 6
    assert Path(f"{prefix}f-0-summary.csv").exists()

    # Python's own handling of Ctrl-C is back.
    with pytest.raises(KeyboardInterrupt) as plain:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    assert type(plain.value) is KeyboardInterrupt

    # The same function, called again with resume, measures configs 2 and 3 (the {n} of its files
    # counts successful calls, so it continues the interrupted one).
    calls.clear()
    interrupt_at.clear()
    f._kscope_profiled.options.resume = True
    resumed = f()
    assert calls == [2] * 4 + [3] * 4
    assert resumed.to_dataframe()["AvgValue"].tolist() == [100.0, 200.0, 300.0]


def test_a_keyboard_interrupt_raised_in_the_body_is_an_interrupt_too(sim):
    calls = []

    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, verbosity=0)
    def f(n):
        calls.append(n)
        if len(calls) == 5:  # config 2's first recorded run, cut short
            raise KeyboardInterrupt
        with kscope.annotate("k"):
            sim.launch("kern", 1.0)

    with pytest.raises(SweepInterrupted) as info:
        f()
    assert "in config 2/2 (n=2) during run 1, which is dropped (KeyboardInterrupt)" in str(info.value)
    assert len(info.value.partial_results.to_dataframe()) == 1


def test_a_child_interrupted_from_outside_raises_sweep_interrupted_and_keeps_its_files(tmp_path):
    prefix = str(tmp_path / "out_")
    process = child(prefix, 40, 0.002)
    progress = f"{prefix}durable-0-progress.jsonl"
    wait_for_progress(progress, 3, process)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    report = json.loads(out)
    assert report["outcome"] == "SweepInterrupted" and report["keyboard_interrupt"]
    done = len(lines(progress))
    assert report["rows"] in (done, done + 1)  # the finished configs, and the one cut short
    assert Path(f"{prefix}durable-0-summary.csv").exists()

    process = child(prefix, 40, 0, "resume")
    out, err = process.communicate(timeout=60)
    report = json.loads(out)
    assert report["outcome"] == "finished" and report["rows"] == 40
    assert report["calls"] == (40 - done) * RUNS_PER_CONFIG
    assert_same_table_files(f"{prefix}durable-0-", uninterrupted(40))


def assert_same_table_files(prefix, expected):
    got = pd.read_csv(f"{prefix}summary.csv")
    want = expected.to_dataframe()
    assert got["AvgValue"].tolist() == want["AvgValue"].tolist()
    assert got["StdDev"].tolist() == want["StdDev"].tolist()
    assert pd.read_csv(f"{prefix}samples.csv")["Value"].tolist() == expected.raw_dataframe()["Value"].tolist()


def test_a_jupyter_interrupt_stops_the_sweep_and_the_kernel_stays_usable(tmp_path):
    jupyter_client = need("jupyter_client")
    need("ipykernel")
    prefix = str(tmp_path / "nb_")
    km = jupyter_client.KernelManager(kernel_name="python3")
    km.start_kernel(env=dict(os.environ, PYTHONPATH=os.pathsep.join([KSCOPE_PATH, str(HERE)]),
                             PYDEVD_DISABLE_FILE_VALIDATION="1"))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        setup = ("import kscope, durable_workload\n"
                 "sim_block = kscope.testing.simulated_backend(); sim = sim_block.__enter__()\n"
                 f"f, calls = durable_workload.make(sim, {prefix!r}, 40, delay_s=0.002)\n")
        assert kc.execute_interactive(setup, timeout=60)["content"]["status"] == "ok"
        msg_id = kc.execute("r = f()", stop_on_error=False)  # the error must not abort the next request
        progress = f"{prefix}durable-0-progress.jsonl"
        deadline = time.monotonic() + 60
        while len(lines(progress)) < 3:
            assert time.monotonic() < deadline, "the sweep made no progress in the kernel"
            time.sleep(0.002)
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=60)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "SweepInterrupted"
        assert "sweep interrupted (Ctrl-C, SIGINT)" in reply["content"]["evalue"]
        # The kernel goes on: the next profiled call (the same function, resumed) works.
        check = ("f._kscope_profiled.options.resume = True\n"
                 "r = f()\n"
                 "assert len(r.to_dataframe()) == 40, len(r.to_dataframe())\n")
        assert kc.execute_interactive(check, timeout=60)["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_plot_path_in_a_missing_directory_fails_before_the_sweep(sim, tmp_path):
    calls = []

    @kscope.analyze.plot(str(tmp_path / "missing" / "plot.png"))
    @kscope.analyze.kernel(configs=[(1,)], verbosity=0)
    def f(n):
        calls.append(n)

    with pytest.raises(ConfigError, match="filename .* of @kscope.analyze.plot: its directory .*missing' does not exist"):
        f()
    assert calls == []
    with pytest.raises(ConfigError, match=r"matplotlib cannot write '.xyz' files; use one of .*\.png"):
        kscope.analyze.plot("plot.xyz")


def test_a_failure_after_the_sweep_keeps_the_results_on_the_exception(sim, tmp_path):
    def failing(fig):
        raise RuntimeError("callback broke")

    @kscope.analyze.plot(str(tmp_path / "plot.png"), plot_callback=failing)
    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, verbosity=0)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", n)

    with pytest.raises(RuntimeError, match="callback broke") as info:
        f()
    assert isinstance(info.value.results, kscope.ProfileResults)
    assert len(info.value.results.to_dataframe()) == 2
    if sys.version_info >= (3, 11):
        assert "its ProfileResults are in this exception's .results" in info.value.__notes__[0]

    # output_csv: the files are written after the sweep; a failure there keeps the results too.
    blocker = tmp_path / "blocker"
    blocker.write_text("")

    @kscope.analyze.kernel(configs=[(1,)], runs=2, verbosity=0, output_csv=True)
    def g(n):
        with kscope.annotate("k"):
            sim.launch("kern", n)

    g._kscope_profiled.files.csv_prefix = str(blocker / "x_")  # a directory that cannot exist
    with pytest.raises(OSError) as info:
        g()
    assert len(info.value.results.to_dataframe()) == 1


def test_non_finite_info_values_survive_resume_save_and_merge(sim, tmp_path):
    """An info collector's NaN and infinities come back as the floats they were: from a resumed
    sweep's files, from a saved file, and merged from shards."""
    import math

    collectors = [("nan", lambda: math.nan, "run"), ("inf", lambda: math.inf, "config"),
                  ("minus_inf", lambda annotation: -math.inf, "annotation")]

    def measure(fail_at=None, **options):
        @kscope.analyze.kernel(configs=[(n,) for n in range(1, 5)], runs=3, verbosity=0, info_collectors=collectors,
                               **options)
        def durable(n):
            if n == fail_at:
                raise RuntimeError("stop")
            with kscope.annotate("k"):
                sim.launch("kern", 100.0 * n)

        return durable()

    def assert_non_finite(results):
        raw = results.raw_dataframe()
        assert len(raw) and raw["nan"].isna().all()
        assert (raw["inf"] == math.inf).all() and (raw["minus_inf"] == -math.inf).all()

    prefix = str(tmp_path / "out_")
    with pytest.raises(kscope.SweepError):
        measure(fail_at=3, output_prefix=prefix)
    resumed = measure(output_prefix=prefix, resume=True)
    assert_non_finite(resumed)
    resumed.save(tmp_path / "saved.json")
    assert_non_finite(kscope.load(tmp_path / "saved.json"))
    assert_non_finite(kscope.merge([measure(shard=(0, 2)), measure(shard=(1, 2))]))
