"""kscope.evaluate_many and `kscope evaluate` on the simulated backend, in real worker processes:
both problem formats, every way a candidate can end its worker (abort, segfault, sys.exit, SIGKILL, a
hang), compile failures, what a worker puts back between candidates, the table streamed to disk and
a killed batch resumed, and the errors it gives."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import batch_problems
import kscope
from kscope import _evaluate_cli, _problems
from kscope._evaluate_many import compile_order
from kscope.errors import ConfigError

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
KERNELBENCH = ["faster.py", "wrong.py", "aborts.py", "segfaults.py", "exits.py", "killed.py", "hangs.py",
               "syntax_error.py", "fails_to_build.py", "patches_timer.py", "plain.py", "unjoined_stream.py"]
batch_problems.KERNELBENCH_CANDIDATES["plain.py"] = batch_problems.KERNELBENCH_CANDIDATES["faster.py"]


def by_candidate(table):
    return {c: rows.reset_index(drop=True) for c, rows in table.groupby("Candidate")}


@pytest.fixture(scope="module")
def kernelbench_batch(tmp_path_factory):
    """One measuring worker, so that the candidates run in one order, each after the one before in
    the same process unless that one ended it."""
    root = tmp_path_factory.mktemp("kernelbench")
    batch_problems.kernelbench_problem(root / "problems", KERNELBENCH)
    with kscope.testing.simulated_backend():
        table = kscope.evaluate_many(root / "problems", root / "out", timeout_s=8.0, workers_per_gpu=1,
                                     compile_workers=1, verbosity="silent")
    return table, root / "out"


def test_every_candidate_gets_its_verdict_and_the_crashes_their_message(kernelbench_batch):
    table, _ = kernelbench_batch
    rows = by_candidate(table)
    assert sorted(rows) == sorted(f"scale/{name}" for name in KERNELBENCH)
    verdict = {c: r.loc[0, "Verdict"] for c, r in rows.items()}
    reason = {c: r.loc[0, "Reason"] for c, r in rows.items()}
    assert verdict["scale/faster.py"] == "faster" and rows["scale/faster.py"].loc[0, "Speedup"] == 2.0
    assert verdict["scale/wrong.py"] == "incorrect"
    assert verdict["scale/aborts.py"] == "crashed" and "SIGABRT" in reason["scale/aborts.py"]
    assert "Fatal Python error: Aborted" in reason["scale/aborts.py"]
    assert verdict["scale/segfaults.py"] == "crashed" and "SIGSEGV" in reason["scale/segfaults.py"]
    assert "Segmentation fault" in reason["scale/segfaults.py"]
    assert verdict["scale/exits.py"] == "crashed" and reason["scale/exits.py"] == "the candidate called sys.exit(3)"
    assert verdict["scale/killed.py"] == "crashed" and "killed by SIGKILL" in reason["scale/killed.py"]
    assert verdict["scale/hangs.py"] == "timed_out" and "8 s to be measured" in reason["scale/hangs.py"]
    assert verdict["scale/syntax_error.py"] == "compile_failed" and "SyntaxError" in reason["scale/syntax_error.py"]
    assert verdict["scale/fails_to_build.py"] == "compile_failed"
    assert "nvcc exited with status 1" in reason["scale/fails_to_build.py"]


def test_work_on_an_unjoined_stream_is_found_in_the_worker_and_carried_back(kernelbench_batch):
    table, out = kernelbench_batch
    row = by_candidate(table)["scale/unjoined_stream.py"].loc[0]
    assert row["Verdict"] == "suspect" and "unjoined_work" in row["Findings"], row["Reason"]
    assert "unjoined_work" in kscope.load_evaluation(out / "evaluations" / "scale__unjoined_stream.json").findings()[
        "Finding"].tolist()


def test_a_patched_timer_is_found_and_put_back_before_the_next_candidate(kernelbench_batch):
    table, _ = kernelbench_batch
    rows = by_candidate(table)
    patched, plain = rows["scale/patches_timer.py"].loc[0], rows["scale/plain.py"].loc[0]
    assert patched["Verdict"] == "suspect" and "timer_patched" in patched["Findings"]
    assert "time.perf_counter" in patched["Restored"]
    assert plain["Worker"] == patched["Worker"]  # the same process, after it
    assert plain["Verdict"] == "faster" and not plain["Findings"]


def test_the_table_is_on_disk_with_each_evaluation_and_the_times(kernelbench_batch):
    table, out = kernelbench_batch
    on_disk = pd.read_csv(out / "results.csv")
    assert list(on_disk.columns) == list(table.columns)
    assert list(on_disk["Candidate"]) == list(table["Candidate"])
    assert len((out / "results.jsonl").read_text().splitlines()) == len(KERNELBENCH)
    faster = table[table["Candidate"] == "scale/faster.py"].iloc[0]
    assert faster["CompileS"] > 0 and faster["LoadS"] > 0 and faster["MeasureS"] > 0
    assert faster["Format"] == "kernelbench" and faster["Problem"] == "scale" and faster["Config"] == ""
    evaluation = kscope.load_evaluation(out / "evaluations" / "scale__faster.json")
    assert evaluation.verdicts() == ["faster"]
    compile_failed = table[table["Verdict"] == "compile_failed"]
    assert compile_failed["MeasureS"].isna().all() and compile_failed["Worker"].str.startswith("compile").all()


def test_gpumode_problems_each_see_their_own_helper_modules(tmp_path):
    pytest.importorskip("yaml", reason="GPU MODE's task.yml needs PyYAML")
    batch_problems.gpumode_problems(tmp_path / "problems")
    with kscope.testing.simulated_backend():
        table = kscope.evaluate_many(tmp_path / "problems", tmp_path / "out", workers_per_gpu=1,
                                     compile_workers=1, verbosity="silent")
    rows = by_candidate(table)
    assert sorted(rows) == ["double_py/submission.py", "triple_py/solutions/wrong/twice.py",
                            "triple_py/submission.py"]
    # One worker measured all three: the second problem's task.py (FACTOR = 3) was not the first's.
    assert table["Worker"].nunique() == 1
    assert list(rows["triple_py/submission.py"]["Verdict"]) == ["faster", "faster"]
    assert list(rows["double_py/submission.py"]["Verdict"]) == ["faster", "faster"]
    assert list(rows["triple_py/solutions/wrong/twice.py"]["Verdict"]) == ["incorrect", "incorrect"]
    assert [json.loads(c) for c in rows["double_py/submission.py"]["Config"]] == [
        {"size": 64, "seed": 2}, {"size": 128, "seed": 3}]
    assert set(table["Format"]) == {"gpumode"} and set(table["Problem"]) == {"double_py", "triple_py"}

    with kscope.testing.simulated_backend():
        tests = kscope.evaluate_many(tmp_path / "problems", tmp_path / "tests", gpumode_configs="tests",
                                     compile_workers=1, verbosity="silent")
    assert len(tests) == 3 and set(tests["Config"]) == {json.dumps({"size": 8, "seed": 1})}


def test_reference_and_candidate_pairs_are_a_batch_too(tmp_path):
    batch_problems.kernelbench_problem(tmp_path, ["faster.py", "wrong.py"])
    pairs = [(tmp_path / "scale" / "reference.py", tmp_path / "scale" / name) for name in ("faster.py", "wrong.py")]
    with kscope.testing.simulated_backend():
        table = kscope.evaluate_many(pairs, tmp_path / "out", compile_workers=1, verbosity="silent")
    assert list(table["Verdict"]) == ["faster", "incorrect"]
    assert list(table["Candidate"]) == [str(p[1]) for p in pairs]


KILLED_BATCH = """
import sys
import kscope
with kscope.testing.simulated_backend():
    kscope.evaluate_many(sys.argv[1], sys.argv[2], workers_per_gpu=1, compile_workers=1, verbosity="silent")
"""


def test_a_killed_batch_resumed_evaluates_only_the_rest(tmp_path, capfd):
    names = [f"c{i}.py" for i in range(6)]
    # Each candidate's calls take the host 20 ms, so the rest of the batch cannot finish between two polls.
    slow = batch_problems.kernelbench_candidate("""
        time.sleep(0.02)
        sim.launch("candidate", 500.0)
        return x * self.scale
    """)
    batch_problems.write(tmp_path / "problems", {"scale/reference.py": batch_problems.KERNELBENCH_REFERENCE,
                                                 **{f"scale/{n}": slow for n in names}})
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(kscope.__file__)),
                                                        os.environ.get("PYTHONPATH", "")])}
    batch = subprocess.Popen([sys.executable, "-c", KILLED_BATCH, str(tmp_path / "problems"), str(out)], env=env)
    stream = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and batch.poll() is None:
        if stream.exists() and len(stream.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    batch.send_signal(signal.SIGKILL)
    batch.wait()
    before = {json.loads(line)["candidate"]: json.loads(line)["rows"] for line in stream.read_text().splitlines()}
    assert 2 <= len(before) < len(names), "the batch was to be killed halfway"
    with open(stream, "a") as f:
        f.write('{"candidate": "scale/c5.py", "rows": [{"Verd')  # a line the kill cut short

    with kscope.testing.simulated_backend(), pytest.raises(ConfigError, match=r"resume=True.*overwrite=True"):
        kscope.evaluate_many(tmp_path / "problems", out, verbosity="silent")
    with kscope.testing.simulated_backend(), pytest.raises(ConfigError, match=r"runs: 20 then, 10 now"):
        kscope.evaluate_many(tmp_path / "problems", out, runs=10, resume=True, verbosity="silent")
    capfd.readouterr()
    with kscope.testing.simulated_backend():
        table = kscope.evaluate_many(tmp_path / "problems", out, resume=True, compile_workers=1)
    evaluated = {line.split()[2].rstrip(":") for line in capfd.readouterr().err.splitlines()
                 if line.startswith("[kscope] ")}
    assert evaluated == {f"scale/{n}" for n in names} - set(before)  # the rest, and only the rest
    assert sorted(table["Candidate"]) == [f"scale/{n}" for n in names]
    assert set(table["Verdict"]) == {"faster"}
    for candidate, rows in before.items():  # as the first batch wrote them
        assert table.loc[table["Candidate"] == candidate, "MeasureS"].tolist() == [rows[0]["MeasureS"]]
    lines = stream.read_text().splitlines()
    assert len(lines) == len(names) and all(json.loads(line) for line in lines)


def test_the_command_line_runs_a_batch_and_says_how_it_went(tmp_path, capsys):
    batch_problems.kernelbench_problem(tmp_path / "problems", ["faster.py", "wrong.py"])
    argv = [str(tmp_path / "problems"), "-o", str(tmp_path / "out"), "--compile-workers", "1", "--runs", "8", "-q"]
    with kscope.testing.simulated_backend():
        assert _evaluate_cli.main(argv) == 0
        said = capsys.readouterr().out
        assert "2 candidates, 2 rows (1 faster, 1 incorrect)" in said and "results.csv" in said
        assert _evaluate_cli.main(argv) == _evaluate_cli.USAGE_ERROR  # an earlier batch, neither flag
        assert "--resume" in capsys.readouterr().err
        assert _evaluate_cli.main([*argv, "--resume"]) == 0
        assert _evaluate_cli.main([*argv, "--resume", "--checked-runs", "2"]) == _evaluate_cli.USAGE_ERROR
        assert "checked_runs: 8 then, 2 now" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        _evaluate_cli.main([str(tmp_path), "--runs", "many"])
    assert exited.value.code == _evaluate_cli.USAGE_ERROR


def kscope_program():
    build = ROOT / os.environ.get("KSCOPE_BUILD_DIR", "build")
    program = build / "kscope"
    if not program.is_file():
        pytest.skip(f"no kscope program in {build} (build the target kscope_cli)")
    return program


def test_the_kscope_program_runs_evaluate_in_python(tmp_path):
    program = kscope_program()
    helped = subprocess.run([program, "evaluate", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "compile_failed" in helped.stdout and "--resume" in helped.stdout
    missing = subprocess.run([program, "evaluate", str(tmp_path / "none")], capture_output=True, text=True)
    assert missing.returncode == 64 and "is not a directory" in missing.stderr
    unstartable = subprocess.run([program, "evaluate", "x"], capture_output=True, text=True,
                                 env={**os.environ, "KSCOPE_PYTHON": str(tmp_path / "no-python")})
    assert unstartable.returncode == 1 and "KSCOPE_PYTHON" in unstartable.stderr


def test_pips_kscope_command_runs_evaluate_itself(monkeypatch, capsys):
    from kscope import _cli

    monkeypatch.setattr(sys, "argv", ["kscope", "evaluate", "--help"])
    with pytest.raises(SystemExit) as exited:
        _cli.main()
    assert exited.value.code == 0 and "kscope evaluate" in capsys.readouterr().out


def test_one_batch_at_a_time_per_directory(tmp_path):
    from kscope._batch_table import BatchTable

    first = BatchTable(str(tmp_path), {"runs": 20}, resume=False, overwrite=False)
    try:
        with pytest.raises(ConfigError, match=rf"in use by another batch \(pid {os.getpid()} "):
            BatchTable(str(tmp_path), {"runs": 20}, resume=False, overwrite=False)
    finally:
        first.close()
    BatchTable(str(tmp_path), {"runs": 20}, resume=True, overwrite=False).close()


@pytest.mark.parametrize("files, message", [
    ({"a/notes.txt": "x"}, r"no problem under"),
    ({"a/one.py": batch_problems.KERNELBENCH_REFERENCE, "a/two.py": batch_problems.KERNELBENCH_REFERENCE},
     r"several KernelBench references \(one.py, two.py\)"),
    ({"a/reference.py": batch_problems.GPUMODE_REFERENCE}, r"without a task.yml"),
    ({"a/reference.py": batch_problems.GPUMODE_REFERENCE, "a/task.yml": "tests: []\n"},
     r"no list of configs under 'benchmarks'"),
])
def test_a_directory_that_holds_no_batch_is_refused_naming_why(tmp_path, files, message):
    if "task.yml" in str(files):
        pytest.importorskip("yaml", reason="GPU MODE's task.yml needs PyYAML")
    batch_problems.write(tmp_path, files)
    with kscope.testing.simulated_backend(), pytest.raises(ConfigError, match=message):
        kscope.evaluate_many(tmp_path, tmp_path / "out")


@pytest.mark.parametrize("options, message", [
    ({"workers_per_gpu": 0}, r"workers_per_gpu must be an integer >= 1"),
    ({"timeout_s": 0}, r"timeout_s must be a number of seconds > 0"),
    ({"gpumode_configs": "all"}, r"'benchmarks' or 'tests'"),
    ({"gpus": [-1]}, r"gpus: -1 is not the index of a visible GPU"),
    ({"gpus": "0,1"}, r"gpus must be a list of GPU indices"),
    ({"runs": 0}, r"runs"),
    ({"rtol": -1.0}, r"rtol must be a finite number >= 0"),
    ({"checked_runs": -1}, r"checked_runs must be an integer >= 0 \(0: every run\)"),
])
def test_bad_options_are_refused_before_anything_runs(tmp_path, options, message):
    batch_problems.kernelbench_problem(tmp_path / "problems", ["faster.py"])
    with kscope.testing.simulated_backend(), pytest.raises(ConfigError, match=message):
        kscope.evaluate_many(tmp_path / "problems", tmp_path / "out", **options)
    assert not (tmp_path / "out").exists()


def test_the_simulated_backend_measures_in_the_workers_each_on_its_own(tmp_path):
    batch_problems.kernelbench_problem(tmp_path / "problems", ["faster.py"])
    with kscope.testing.simulated_backend() as sim:
        table = kscope.evaluate_many(tmp_path / "problems", tmp_path / "out", gpus=[0, 1], compile_workers=1,
                                     verbosity="silent")
    assert sim.session_count == 0  # the workers measured, on simulated backends of their own
    assert list(table["Verdict"]) == ["faster"] and table["GPU"].iloc[0]


def test_a_failed_build_is_said_in_a_line_with_the_compilers_first_error():
    from kscope._workers import _build_error, last_words

    command = "[1/3] /usr/local/cuda/bin/nvcc " + "-I/include " * 200
    torch_says = RuntimeError(f"Error building extension 'add': {command}\nFAILED: cuda.cuda.o\n"
                              "/tmp/add/cuda.cu(9): error: expected a \";\"\n1 error detected in the compilation\n"
                              "ninja: build stopped: subcommand failed.")
    said = _build_error(torch_says, "")
    assert said.startswith("RuntimeError: Error building extension 'add': [1/3]") and len(said) < 700
    assert 'cuda.cu(9): error: expected a ";"' in said
    log = "Warning: something\nFatal Python error: Segmentation fault\n  File \"x.py\", line 3 in f\nother\n"
    assert last_words(log) == "Fatal Python error: Segmentation fault"


def test_compile_order_puts_imports_first_then_the_longest_compiles(tmp_path):
    problems = batch_problems.write(tmp_path / "problems", {
        "scale/reference.py": batch_problems.KERNELBENCH_REFERENCE,
        "scale/a_build.py": batch_problems.timed_candidate(1.0, 0),
        "scale/b_built.py": batch_problems.timed_candidate(1.0, 0),
        "scale/c_triton.py": "import triton\n" + batch_problems.KERNELBENCH_CANDIDATES["faster.py"],
        "scale/d_plain.py": batch_problems.KERNELBENCH_CANDIDATES["faster.py"]})
    build = tmp_path / "build"
    (build / "scale__b_built" / "ext").mkdir(parents=True)
    (build / "scale__b_built" / "ext" / "ext.so").write_bytes(b"")
    order = [c.id for c in compile_order(_problems.find(problems), str(build))]
    assert order == ["scale/b_built.py", "scale/d_plain.py", "scale/a_build.py", "scale/c_triton.py"]


def test_a_batch_reads_each_candidates_source_once_and_an_edited_one_again(tmp_path):
    from kscope._evaluate_many import _source_uses, preloaded

    problems = batch_problems.write(tmp_path / "problems", {
        "scale/reference.py": batch_problems.KERNELBENCH_REFERENCE,
        "scale/plain.py": batch_problems.KERNELBENCH_CANDIDATES["faster.py"]})
    candidates = _problems.find(problems)
    _source_uses.cache_clear()
    assert preloaded(compile_order(candidates, str(tmp_path / "build"))) == ["torch"]
    assert _source_uses.cache_info().misses == len(candidates)
    edited = problems / "scale" / "plain.py"
    edited.write_text("import triton\n" + edited.read_text())
    assert preloaded(candidates) == ["torch", "triton"]


def _all_faster(tmp_path, candidates, **options):
    """The table of a batch of ``candidates`` (file: source) of one problem on the simulated backend,
    every one of them judged faster."""
    batch_problems.write(tmp_path / "problems", {"scale/reference.py": batch_problems.KERNELBENCH_REFERENCE,
                                                 **candidates})
    with kscope.testing.simulated_backend():
        table = kscope.evaluate_many(tmp_path / "problems", tmp_path / "out", runs=6, verbosity="silent", **options)
    assert set(table["Verdict"]) == {"faster"}, table[["Candidate", "Verdict", "Reason"]]
    return table


def test_the_share_of_runs_read_reaches_every_evaluation_and_a_resume_keeps_it(tmp_path):
    candidates = {f"scale/c{i}.py": batch_problems.KERNELBENCH_CANDIDATES["faster.py"] for i in range(2)}
    table = _all_faster(tmp_path, candidates, checked_runs=2, compile_workers=1)
    out = tmp_path / "out"
    for candidate in table["Candidate"]:
        evaluation = kscope.load_evaluation(out / "evaluations" / (candidate.replace("/", "__")[:-3] + ".json"))
        assert list(evaluation.to_dataframe()["CheckedRuns"]) == [1 + 2]  # its warm-up run, 2 of the 6 recorded
    with kscope.testing.simulated_backend(), pytest.raises(ConfigError, match=r"checked_runs: 2 then, 8 now"):
        kscope.evaluate_many(tmp_path / "problems", out, runs=6, resume=True, verbosity="silent")
    # A batch written before checked_runs was a setting ran with evaluate's default, 8, and resumes so.
    settings = json.loads((out / "batch.json").read_text())
    del settings["checked_runs"]
    (out / "batch.json").write_text(json.dumps(settings))
    with kscope.testing.simulated_backend(), pytest.raises(ConfigError, match=r"checked_runs: 8 then, 0 now"):
        kscope.evaluate_many(tmp_path / "problems", out, runs=6, checked_runs=0, resume=True, verbosity="silent")
    with kscope.testing.simulated_backend():
        resumed = kscope.evaluate_many(tmp_path / "problems", out, runs=6, resume=True, verbosity="silent")
    assert sorted(resumed["Candidate"]) == sorted(table["Candidate"])


def test_quick_candidates_are_measured_while_the_builds_compile(tmp_path):
    """Two builds of 5 s each and ten quick candidates, each holding the GPU 0.2 s, on two compile
    workers: with the builds first (as the files are named), the GPU would wait for them and measure
    nearly everything after compiling ended (0.95 of its measuring time); with the quick ones first
    it measures them while the builds compile, and only the two builds after (0.28 to 0.33 of it
    alone on 2 cores, 0.40 beside the rest of the suite: the bound sits between that and 0.95)."""
    files = {f"scale/a_build_{i}.py": batch_problems.timed_candidate(5.0, 0.2) for i in range(2)}
    files.update({f"scale/quick_{i}.py": batch_problems.timed_candidate(0, 0.2) for i in range(10)})
    table = _all_faster(tmp_path, files, compile_workers=2, workers_per_gpu=2)
    s = table.attrs["schedule"]
    assert json.loads((tmp_path / "out" / "schedule.json").read_text()) == s
    parts = (s["gpu_measuring_s"] + s["gpu_starting_s"] + s["gpu_replacing_s"] + s["gpu_waiting_for_compile_s"]
             + s["gpu_waiting_for_load_s"])
    assert parts == pytest.approx(s["wall_s"], abs=0.05), s
    assert s["compile_busy_s"] == pytest.approx(table["CompileS"].sum(), rel=0.05), s
    assert s["after_compiling_s"] <= 0.6 * s["gpu_measuring_s"], s


def test_the_longest_build_starts_before_the_shorter_compiles(tmp_path):
    """One build of 6 s and four Triton-like compiles of 1.5 s on two compile workers: the build
    first, beside the others on the second worker, ends compiling after about 6 s; the shorter
    compiles first would start the build after two of them and end it after 9 s."""
    files = {"scale/build.py": batch_problems.timed_candidate(6.0, 0.1)}
    files.update({f"scale/triton_{i}.py": batch_problems.timed_candidate(1.5, 0.1, triton=True) for i in range(4)})
    files.update({f"scale/quick_{i}.py": batch_problems.timed_candidate(0, 0.1) for i in range(4)})
    table = _all_faster(tmp_path, files, compile_workers=2, workers_per_gpu=1)
    compile_s = dict(zip(table["Candidate"], table["CompileS"]))
    assert compile_s["scale/build.py"] >= 6.0 and all(compile_s[f"scale/triton_{i}.py"] >= 1.5 for i in range(4))
    s = table.attrs["schedule"]
    assert s["compiling_ended_s"] - s["startup_s"] < 7.5, s


def test_the_schedule_counts_the_compiles_cpu_time_with_their_compilers(tmp_path):
    """A build whose compiler (a child process) spends 1.5 s of CPU, and one that sleeps 4 s: the CPU
    time is the first one's, beside the machine's cores (a batch whose builds keep every core busy
    cannot end compiling sooner than that over them)."""
    table = _all_faster(tmp_path, {"scale/computes.py": batch_problems.timed_candidate(1.5, 0, cpu=True),
                                   "scale/sleeps.py": batch_problems.timed_candidate(4.0, 0)},
                        compile_workers=2, workers_per_gpu=1)
    s = table.attrs["schedule"]
    # 2.2 s on a 2-core Debian machine (loading the problem and both candidates costs the rest);
    # counting the sleep too would give over 5.5 s
    assert 1.5 <= s["compile_cpu_s"] < 5.5, s
    assert s["cores"] == os.cpu_count()


def test_a_standby_takes_a_dead_workers_place_so_the_gpu_does_not_wait_for_a_start(tmp_path, monkeypatch):
    """Three candidates that end their worker (SIGKILL, abort), each after three that hold the GPU
    1.5 s, on one measuring worker, with workers that take 1.5 s longer to start (as importing torch
    does on a GPU machine beside busy compile workers): were a dead worker replaced by a process
    started then, the GPU would wait for that start after each crash (more than 3 x 1.5 s); a standby
    started ahead takes the dead worker's place at once, and its own replacement starts while the
    next candidates are measured."""
    start_s, crashes = 1.5, 3
    monkeypatch.setenv("KSCOPE_WORKER_SIMULATED_START_S", str(start_s))
    files = {"scale/reference.py": batch_problems.KERNELBENCH_REFERENCE}
    for i in range(crashes):
        files.update({f"scale/c{i}_a_honest_{j}.py": batch_problems.timed_candidate(0, 1.5) for j in range(3)})
        files[f"scale/c{i}_b_crashes.py"] = batch_problems.KERNELBENCH_CANDIDATES[("killed.py", "aborts.py")[i % 2]]
    batch_problems.write(tmp_path / "problems", files)
    with kscope.testing.simulated_backend():
        table = kscope.evaluate_many(tmp_path / "problems", tmp_path / "out", runs=6, compile_workers=1,
                                     workers_per_gpu=1, timeout_s=30.0, verbosity="silent")
    verdicts = dict(zip(table["Candidate"], table["Verdict"]))
    assert [c for c, v in verdicts.items() if v == "crashed"] == [f"scale/c{i}_b_crashes.py" for i in range(crashes)]
    assert {v for c, v in verdicts.items() if "honest" in c} == {"faster"}, table[["Candidate", "Verdict", "Reason"]]
    s = table.attrs["schedule"]
    assert s["startup_s"] is not None and s["worker_start_s"] >= start_s and s["worker_activate_s"] < start_s, s
    assert s["workers_replaced"] == crashes and s["workers_replaced_by_standby"] >= 1, s
    assert s["gpu_replacing_s"] <= 0.2 * crashes * start_s, s


def _parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def test_workers_are_forked_by_a_launcher_that_imported_torch_once(tmp_path):
    """Workers forked by the launcher are its children (no interpreter start, no torch import of their
    own), named by their kind in ps, answer over their pipe, and their ends (a kill, a crash) come back through it as a
    program's would; the launcher's end takes its workers with it."""
    from kscope._workers import Launcher, Worker

    launcher = Launcher(str(tmp_path / "launcher.log"), "torch")
    try:
        workers = [Worker(f"w{i}", "compile", str(tmp_path / f"w{i}.log"), {"KSCOPE_WORKER_SIMULATED": "1"}, None,
                          launcher) for i in range(3)]
        assert all(w.receive() == ("ready", None) for w in workers)
        assert {_parent_of(w.process.pid) for w in workers} == {launcher.process.pid}
        assert {Path(f"/proc/{w.process.pid}/comm").read_text().strip() for w in workers} == {"kscope-compile"}
        workers[0].kill()
        assert workers[0].process.returncode == -signal.SIGKILL
        os.kill(workers[1].process.pid, signal.SIGSEGV)
        assert "killed by SIGSEGV" in workers[1].death()
        workers[2].stop()
        workers[2].reap(time.monotonic() + 5)
        assert workers[2].process.returncode == 0
        last = Worker("last", "compile", str(tmp_path / "last.log"), {}, None, launcher)
        assert last.receive() == ("ready", None)
    finally:
        launcher.close()
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{last.process.pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{last.process.pid}"), "a worker outlived its launcher"
    last.kill()  # its end known: killed with the launcher
    assert last.process.returncode == -signal.SIGKILL


def test_without_a_launcher_each_worker_starts_as_a_program(tmp_path, monkeypatch):
    """Where the launcher cannot start, the batch starts each worker as a program of its own and every
    verdict is the same."""
    from kscope import _evaluate_many

    def no_launcher(*args, **kwargs):
        raise OSError("no launcher here")

    monkeypatch.setattr(_evaluate_many, "Launcher", no_launcher)
    batch_problems.kernelbench_problem(tmp_path / "problems", ["faster.py", "segfaults.py"])
    with kscope.testing.simulated_backend():
        table = kscope.evaluate_many(tmp_path / "problems", tmp_path / "out", timeout_s=8.0, workers_per_gpu=1,
                                     compile_workers=1, verbosity="silent")
    verdicts = dict(zip(table["Candidate"], table["Verdict"]))
    assert verdicts == {"scale/faster.py": "faster", "scale/segfaults.py": "crashed"}, table
    assert "SIGSEGV" in table.set_index("Candidate").loc["scale/segfaults.py", "Reason"]
    assert not (tmp_path / "out" / "logs" / "launcher.log").exists()


def test_the_launcher_leaves_torchs_extension_builder_to_the_workers():
    from kscope._evaluate_many import launcher_preload

    assert launcher_preload(["torch", "torch.utils.cpp_extension", "triton"]) == "torch,triton"
    assert launcher_preload(["torch"]) == "torch"


def test_a_forked_worker_imports_what_the_launcher_left_out_as_it_starts(tmp_path, monkeypatch):
    """Before it says it can take a candidate, not in its first candidate's load that the GPU would
    wait for."""
    from kscope._workers import Launcher, Worker

    mark = tmp_path / "imported_in"
    (tmp_path / "left_to_workers.py").write_text(f"import os\nopen({str(mark)!r}, 'w').write(str(os.getpid()))\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    launcher = Launcher(str(tmp_path / "launcher.log"), "torch")
    try:
        worker = Worker("w", "measure", str(tmp_path / "w.log"),
                        {"KSCOPE_WORKER_SIMULATED": "1", "KSCOPE_WORKER_PRELOAD": "torch,left_to_workers"}, None, launcher)
        assert worker.receive() == ("standby", None)  # a measuring worker's first word, before its GPU
        assert _parent_of(worker.process.pid) == launcher.process.pid
        assert mark.read_text() == str(worker.process.pid)
        worker.stop()
        worker.reap(time.monotonic() + 10)
    finally:
        launcher.close()


def test_a_forked_worker_runs_torchs_cpu_threads(tmp_path, monkeypatch):
    """The launcher never runs torch's CPU thread pool before it forks: a child forked after the pool
    ran hangs in its first parallel operation (torch 1.13 here, 2.11 on the GPU machine), and
    candidates make inputs on the CPU (KernelBench's get_inputs)."""
    from kscope._workers import Launcher, Worker

    mark = tmp_path / "summed"
    (tmp_path / "sums_in_parallel.py").write_text(
        "import os, torch\ntorch.set_num_threads(2)\n"
        f"open({str(mark)!r}, 'w').write(f'{{os.getpid()}} {{float(torch.ones(1 << 22).sum())}}')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    launcher = Launcher(str(tmp_path / "launcher.log"), "torch")
    try:
        worker = Worker("w", "measure", str(tmp_path / "w.log"),
                        {"KSCOPE_WORKER_SIMULATED": "1", "KSCOPE_WORKER_PRELOAD": "torch,sums_in_parallel"}, None, launcher)
        assert worker.conn.poll(30), "a forked worker hung in its first parallel operation on the CPU"
        assert worker.receive() == ("standby", None)
        assert mark.read_text() == f"{worker.process.pid} {float(1 << 22)}"
        worker.stop()
        worker.reap(time.monotonic() + 10)
    finally:
        launcher.close()


def test_a_launcher_whose_forks_could_not_use_cuda_ends_and_workers_start_as_programs(tmp_path, monkeypatch):
    """As after an import that asks CUDA (torch.utils.cpp_extension's): torch would refuse CUDA in
    every forked worker, so the launcher ends before forking any, and each worker starts as a program."""
    from kscope._workers import Launcher, Worker

    (tmp_path / "poisons_forks.py").write_text("import torch\ntorch.cuda._is_in_bad_fork = lambda: True\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    launcher = Launcher(str(tmp_path / "launcher.log"), "torch,poisons_forks")
    try:
        assert launcher.process.wait(timeout=60) == 1
        worker = Worker("w", "compile", str(tmp_path / "w.log"), {"KSCOPE_WORKER_SIMULATED": "1"}, None, launcher)
        assert worker.receive() == ("ready", None)
        assert _parent_of(worker.process.pid) == os.getpid()
        worker.stop()
        worker.reap(time.monotonic() + 10)
    finally:
        launcher.close()


def test_compile_workers_yield_the_cpu_to_the_measuring_ones(tmp_path):
    """Builds are background work: a compile worker, forked or started as a program, runs niced (its
    compilers inherit it); a measuring worker runs as the batch does."""
    from kscope._workers import Launcher, Worker

    batch = os.getpriority(os.PRIO_PROCESS, 0)
    env = {"KSCOPE_WORKER_SIMULATED": "1"}
    launcher = Launcher(str(tmp_path / "launcher.log"), "torch")
    workers = []
    try:
        workers = [Worker("forked", "compile", str(tmp_path / "forked.log"), env, None, launcher),
                   Worker("program", "compile", str(tmp_path / "program.log"), env, None, None),
                   Worker("measuring", "measure", str(tmp_path / "measuring.log"), env, None, launcher)]
        assert [w.receive()[0] for w in workers] == ["ready", "ready", "standby"]
        assert _parent_of(workers[0].process.pid) == launcher.process.pid
        assert _parent_of(workers[1].process.pid) == os.getpid()
        niceness = [os.getpriority(os.PRIO_PROCESS, w.process.pid) for w in workers]
        assert niceness == [min(batch + 10, 19), min(batch + 10, 19), batch]
    finally:
        for w in workers:
            w.kill()
        launcher.close()


def test_a_worker_whose_launcher_is_gone_starts_as_a_program(tmp_path):
    from kscope._workers import Launcher, Worker

    launcher = Launcher(str(tmp_path / "launcher.log"), "")
    launcher.process.kill()
    launcher.process.wait()
    try:
        worker = Worker("w", "compile", str(tmp_path / "w.log"), {"KSCOPE_WORKER_SIMULATED": "1"}, None, launcher)
        assert worker.receive() == ("ready", None)
        assert _parent_of(worker.process.pid) == os.getpid()
        worker.stop()
        worker.reap(time.monotonic() + 10)
        assert worker.process.returncode == 0
    finally:
        launcher.close()
