"""What an output prefix holds, from Python: a finished result of the call's own kind is moved aside
to numbered backups when a script runs again (Nsight Python's example 11 twice in a row), an
unfinished one is refused with advice the call accepts, another kind of result (a sweep, a race, an
evaluation) is never continued, replaced or moved, and no file of a prefix is written through a link."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kscope
from kscope import ConfigError

KSCOPE_PATH = str(Path(kscope.__file__).resolve().parents[1])
QUIET = dict(verbosity="silent")


def profiled(sim, prefix, **options):
    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, output_prefix=prefix, **{**QUIET, **options})
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0 * n)

    return f


def normal(config, seed):
    return (np.random.default_rng(seed).standard_normal(config["n"]).astype(np.float32),)


def evaluated(sim, prefix, fail_at=None, **options):
    def reference(x):
        if x.size == fail_at:
            raise RuntimeError("reference broke")
        sim.launch("reference_kernel", 1000.0)
        return x * 2

    def candidate(x):
        sim.launch("candidate_kernel", 500.0)
        return x * 2

    return kscope.evaluate(candidate, reference, normal, [{"n": 8}, {"n": 16}], runs=6, output_prefix=prefix,
                           **{**QUIET, **options})


def raced(sim, prefix, **options):
    def gemm(n):
        with kscope.annotate("gemm"):
            sim.launch(f"k{n}", 1000.0 * (n + 1))

    return kscope.tune(gemm, configs=[0, 1], runs=20, output_prefix=prefix, **{**QUIET, **options})


def files(directory):
    return sorted(os.listdir(directory))


# Nsight Python's examples/11_output_csv.py as its users run it (import ... as nsight, output_prefix
# beside the script, output_csv=True, its clean-up of earlier .csv files), on the simulated backend.
EXAMPLE_11 = textwrap.dedent('''
    import os
    import pandas as pd
    import kscope as nsight

    current_dir = os.path.dirname(os.path.abspath(__file__))
    output_prefix = f"{current_dir}/example11_"
    sizes = [(2**i,) for i in range(10, 13)]

    def main():
        for old_file in os.listdir(current_dir):
            if old_file.startswith("example11_") and old_file.endswith((".csv", ".ncu-rep", ".log")):
                os.remove(os.path.join(current_dir, old_file))
        with nsight.testing.simulated_backend() as sim:
            @nsight.analyze.kernel(configs=sizes, runs=3, output_prefix=output_prefix, output_csv=True)
            def analyze_memory_ops_with_csv(n: int) -> None:
                with nsight.annotate("matmul-operator"):
                    sim.launch("matmul", 2.0 * n)
                with nsight.annotate("torch-matmul"):
                    sim.launch("matmul", 2.0 * n)

            print(analyze_memory_ops_with_csv().to_dataframe())
        for file in sorted(os.listdir(current_dir)):
            if file.startswith("example11_") and file.endswith(".csv"):
                print(file, len(pd.read_csv(os.path.join(current_dir, file))))

    if __name__ == "__main__":
        main()
''')


def test_nsight_example_11_runs_twice_in_the_same_folder(tmp_path):
    script = tmp_path / "11_output_csv.py"
    script.write_text(EXAMPLE_11)
    env = dict(os.environ, PYTHONPATH=KSCOPE_PATH)
    runs = [subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=120) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert "example11_processed_data-analyze_memory_ops_with_csv-0.csv 6" in run.stdout
    prefix = f"{tmp_path}/example11_analyze_memory_ops_with_csv-0-"
    # The example removes its .csv files itself; what it leaves of the first run is moved aside, once.
    assert (f"[kscope] moved a finished sweep under '{prefix}' aside: its 3 files end in '.~1~' now (overwrite=True "
            f"replaces it instead, resume=True returns its results without measuring)") in runs[1].stderr
    assert runs[0].stderr.count("moved") == 0 and runs[1].stderr.count("moved") == 1
    assert {f for f in files(tmp_path) if f.endswith("~")} == {
        f"example11_analyze_memory_ops_with_csv-0-{name}.~1~" for name in ("manifest.json", "progress.jsonl",
                                                                           "results.json")}


def test_a_script_run_again_moves_its_finished_calls_aside_output_csv_included(sim, tmp_path, capfd):
    prefix = str(tmp_path / "out_")
    for run in range(3):
        profiled(sim, prefix, output_csv=True, verbosity="info")()
    err = capfd.readouterr().err
    assert err.count(f"[kscope] moved a finished sweep under '{prefix}f-0-' aside: its 7 files end in") == 2
    assert "'.~2~' now" in err
    for n in (1, 2):
        backups = [f for f in files(tmp_path) if f.endswith(f".~{n}~")]
        assert len(backups) == 7 and "out_processed_data-f-0.csv" + f".~{n}~" in backups
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / f"out_processed_data-f-0.csv.~{n}~"),
                                      pd.read_csv(tmp_path / "out_processed_data-f-0.csv"))
    # output_csv files alone (their call's engine files removed by hand) are moved aside too.
    for name in ("manifest.json", "progress.jsonl", "samples.csv", "summary.csv", "results.json"):
        os.remove(f"{prefix}f-0-{name}")
    profiled(sim, prefix, output_csv=True, verbosity="info")()
    assert (f"[kscope] moved the earlier files beside '{prefix}f-0-' aside ({prefix}profiled_data-f-0.csv, "
            f"{prefix}processed_data-f-0.csv): they end in '.~3~' now (overwrite=True replaces them instead)"
            ) in capfd.readouterr().err


def test_a_finished_shard_run_again_is_moved_aside_too(sim, tmp_path, capfd):
    """A shard measures its own configs of the sweep's: finished with them, not unfinished."""
    prefix = str(tmp_path / "out_")
    for _ in range(2):
        profiled(sim, prefix, shard=(1, 2), verbosity="info")()
    assert (f"moved a finished sweep under '{prefix}f-0-shard-1-of-2-' aside: its 5 files end in '.~1~' now"
            in capfd.readouterr().err)


def test_an_unfinished_sweep_is_refused_naming_resume(sim, tmp_path):
    prefix = str(tmp_path / "out_")
    calls = []

    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, output_prefix=prefix, **QUIET)
    def f(n):
        calls.append(n)
        if len(calls) == 5:
            raise RuntimeError("out of memory")
        with kscope.annotate("k"):
            sim.launch("kern", 10.0 * n)

    profiled(sim, prefix)()
    with pytest.raises(kscope.SweepError):
        f()  # the finished call is moved aside; this one stops in its second config
    with pytest.raises(ConfigError) as info:
        profiled(sim, prefix, output_csv=True)()
    message = str(info.value)
    assert message.startswith(f"output_prefix '{prefix}f-0-' holds an unfinished sweep (1 of 2 configs measured: "
                              f"killed, interrupted or failed) ({prefix}f-0-manifest.json, ")
    assert message.endswith("which kscope does not replace unasked. Set resume=True to continue it, overwrite=True "
                            "to replace it, or give another output_prefix")
    assert len(profiled(sim, prefix, resume=True)().to_dataframe()) == 2
    assert Path(f"{prefix}f-0-results.json.~1~").exists() and not Path(f"{prefix}f-0-results.json.~2~").exists()


def test_kinds_never_continue_replace_or_move_each_others_files(sim, tmp_path):
    evaluation = str(tmp_path / "p_f-0-")
    evaluated(sim, evaluation)
    before = {f: (tmp_path / f).read_bytes() for f in files(tmp_path)}
    for options in ({}, {"resume": True}, {"overwrite": True}):
        with pytest.raises(ConfigError) as info:
            raced(sim, evaluation, **options)
        assert str(info.value) == (
            f"output_prefix '{evaluation}' holds a finished evaluation ({evaluation}manifest.json, {evaluation}"
            f"progress.jsonl, {evaluation}samples.csv, {evaluation}summary.csv, {evaluation}results.json), not the "
            f"files of a race: kscope never continues, replaces or moves another kind of result's files. Give this "
            f"race another output_prefix, or move those files away")
        with pytest.raises(ConfigError, match=r"holds a finished evaluation \(.*\), not the files of a sweep: "):
            profiled(sim, str(tmp_path / "p_"), **options)()
    assert {f: (tmp_path / f).read_bytes() for f in files(tmp_path)} == before
    assert kscope.load_evaluation(f"{evaluation}results.json").verdicts() == ["faster", "faster"]

    race = str(tmp_path / "race_")
    raced(sim, race)
    with pytest.raises(ConfigError, match=r"holds a finished race \(.*race_race.csv.*\), not the files of an "
                                          r"evaluation: kscope never continues"):
        evaluated(sim, race, overwrite=True)
    sweep = str(tmp_path / "s_")
    profiled(sim, sweep)()
    with pytest.raises(ConfigError, match=r"holds a finished sweep \(.*\), not the files of a race"):
        raced(sim, f"{sweep}f-0-", resume=True)


def test_an_evaluation_is_moved_aside_and_an_unfinished_one_refused_without_resume(sim, tmp_path):
    prefix = str(tmp_path / "e_")
    evaluated(sim, prefix)
    evaluated(sim, prefix)
    assert Path(f"{prefix}results.json.~1~").exists()
    with pytest.raises(kscope.SweepError):
        evaluated(sim, prefix, overwrite=True, fail_at=16)
    with pytest.raises(ConfigError) as info:
        evaluated(sim, prefix)
    message = str(info.value)
    assert message.startswith(f"output_prefix '{prefix}' holds an unfinished evaluation (1 of 2 configs measured: "
                              f"killed, interrupted or failed) ({prefix}manifest.json, ")
    assert message.endswith("which kscope does not replace unasked. Set overwrite=True to replace it (an evaluation "
                            "is not continued: it is evaluated again), or give another output_prefix")
    assert "resume" not in message
    assert evaluated(sim, prefix, overwrite=True).verdicts() == ["faster", "faster"]


def test_a_link_or_a_stray_one_line_file_of_a_prefix_is_never_written_over(sim, tmp_path):
    precious = tmp_path / "precious.csv"
    precious.write_text("a,b\n1,2\n")
    (tmp_path / "out_f-0-samples.csv").symlink_to(precious)
    for options in ({}, {"resume": True}, {"overwrite": True}):
        with pytest.raises(OSError) as info:
            profiled(sim, str(tmp_path / "out_"), **options)()
        assert str(info.value) == (
            f"cannot write '{tmp_path}/out_f-0-samples.csv' under output_prefix: it is a symbolic link (to "
            f"'{precious}'), not a file kscope wrote there. kscope never writes, replaces or moves the files of an "
            f"output prefix through such a path (it would write into what it names): remove it, or give another "
            f"output_prefix")
    assert precious.read_text() == "a,b\n1,2\n"
    with pytest.raises(OSError, match="it is a symbolic link"):
        raced(sim, str(tmp_path / "out_f-0-"))

    (tmp_path / "one_f-0-samples.csv").write_text("a line of someone else's\n")
    with pytest.raises(ConfigError, match=r"^output_prefix '.*one_f-0-' holds files no kscope result is known by \(no "
                                          r"manifest.json, results.json or race.csv says what wrote them\) \(.*"
                                          r"one_f-0-samples.csv\), which kscope does not replace unasked. Give "
                                          r"overwrite=True to replace them, or give another output_prefix$"):
        profiled(sim, str(tmp_path / "one_"))()
    assert (tmp_path / "one_f-0-samples.csv").read_text() == "a line of someone else's\n"
