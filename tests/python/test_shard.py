"""Sharded sweeps from Python: shard=(index, count) and 'auto', KSCOPE_SHARD for an unchanged
script, a real torchrun (torch.distributed.run, gloo) whose rank 0 returns the merged table, and
kscope.merge of objects, files and prefixes, against one process's run of the same sweep."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import kscope
from conftest import need
from kscope import ConfigError

from sharded_workload import CONFIGS, profiled

HERE = Path(__file__).resolve().parent
KSCOPE_PATH = str(Path(kscope.__file__).resolve().parents[1])


def whole():
    with kscope.testing.simulated_backend() as sim:
        return profiled(sim)()


def shard(index, count, **options):
    with kscope.testing.simulated_backend() as sim:
        return profiled(sim, (index, count), **options)()


def assert_same_table(got, expected):
    pd.testing.assert_frame_equal(got.to_dataframe(), expected.to_dataframe(), check_exact=True)
    pd.testing.assert_frame_equal(got.raw_dataframe(), expected.raw_dataframe(), check_exact=True)


def script_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("KSCOPE_SHARD", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = os.pathsep.join([KSCOPE_PATH, str(HERE)])
    env.update(extra)
    return env


def test_a_shard_measures_every_count_th_config():
    part = shard(1, 3)
    measured = sorted(set(zip(part.raw_dataframe()["n"], part.raw_dataframe()["dtype"])))
    assert measured == sorted(CONFIGS[1::3])


def test_shards_merge_to_the_single_process_table():
    expected = whole()
    assert_same_table(kscope.merge([shard(2, 3), shard(0, 3), shard(1, 3)]), expected)


def test_merge_from_files_and_from_the_output_prefix(tmp_path):
    prefix = str(tmp_path / "out" / "run_")
    for i in range(3):
        shard(i, 3, output_prefix=prefix)
    files = sorted(tmp_path.joinpath("out").glob("run_sweep-0-shard-*-of-3-results.json"))
    assert len(files) == 3
    expected = whole()
    from_prefix = kscope.merge(prefix + "sweep-0-")
    # Loaded from files, the configs hold the engine's values (here the same ints and strings).
    assert_same_table(from_prefix, expected)
    assert_same_table(kscope.merge(files), expected)


def test_output_csv_of_a_shard_is_named_for_it(tmp_path):
    prefix = str(tmp_path / "csv_")
    shard(1, 2, output_prefix=prefix, output_csv=True)
    names = sorted(p.name for p in tmp_path.glob("csv_*_data-*.csv"))
    assert names == ["csv_processed_data-sweep-0-shard-1-of-2.csv", "csv_profiled_data-sweep-0-shard-1-of-2.csv"]


def test_merge_refusals_speak_python():
    s0, s1 = shard(0, 3), shard(1, 3)
    with pytest.raises(ConfigError, match=r"shard 2/3 of the sweep is missing: run it \(KSCOPE_SHARD=2/3"):
        kscope.merge([s0, s1])
    with pytest.raises(ConfigError, match=r"shard 1/3 is given twice"):
        kscope.merge([s0, s1, s1, shard(2, 3)])
    with pytest.raises(ConfigError, match=r"is not a shard: it was measured without shard or KSCOPE_SHARD"):
        kscope.merge([s0, s1, whole()])
    with kscope.testing.simulated_backend() as sim:

        @kscope.analyze.kernel(configs=CONFIGS, runs=5, shard=(2, 3), verbosity=0, normalize_against="base")
        def sweep(n, dtype):
            with kscope.annotate("base"):
                sim.launch("b", 1.0)
            with kscope.annotate("work"):
                sim.launch("w", 2.0)

        other = sweep()
    with pytest.raises(ConfigError, match=r"different settings \(runs: 5 and 4\)"):
        kscope.merge([s0, s1, other])
    with pytest.raises(ConfigError, match="either ProfileResults or paths"):
        kscope.merge([s0, "x.json"])


@pytest.mark.parametrize("bad", [(3, 3), (0, 0), (-1, 2), (1,), "2/4", (0.0, 2), True])
def test_bad_shard_option_is_refused_at_decoration(bad):
    with pytest.raises(ConfigError, match=r"shard must be None, 'auto' .* or \(index, count\)"):
        kscope.analyze.kernel(shard=bad)(lambda: None)


def test_kscope_shard_in_the_environment_shards_an_unchanged_script(tmp_path):
    for i in range(2):
        result = subprocess.run([sys.executable, str(HERE / "sharded_workload.py"), str(tmp_path)],
                                env=script_env(KSCOPE_SHARD=f"{i}/2"), capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
    merged = kscope.merge([tmp_path / "rank-0.json", tmp_path / "rank-1.json"])
    assert_same_table(merged, kscope.load(_saved(whole(), tmp_path / "whole.json")))


def _saved(results, path):
    results.save(path)
    return path


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(tmp_path, *args, **env):
    need("torch.distributed.run")
    # --redirects/--tee given as 1: Debian's torch 1.13 on Python 3.11 reads the default 0 as None
    # (Flag iteration no longer yields the zero member) and fails before starting a worker.
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=3",
               f"--master_port={_free_port()}", "--redirects=1", "--tee=1", str(HERE / "sharded_workload.py"), str(tmp_path), *args]
    return subprocess.run(command, env=script_env(OMP_NUM_THREADS="1", **env), capture_output=True, text=True,
                          timeout=300)


def test_torchrun_rank_0_returns_the_merged_table_of_all_ranks(tmp_path):
    result = torchrun(tmp_path, SHARD_PREFIX=str(tmp_path / "out_"))
    assert result.returncode == 0, result.stdout + result.stderr
    expected = kscope.load(_saved(whole(), tmp_path / "whole.json"))
    assert_same_table(kscope.load(tmp_path / "rank-0.json"), expected)
    # On disk: each shard's files, and rank 0's merged files under the call's own prefix.
    assert sorted(p.name for p in tmp_path.glob("out_sweep-0-shard-*-results.json")) == [
        f"out_sweep-0-shard-{i}-of-3-results.json" for i in range(3)]
    assert_same_table(kscope.load(tmp_path / "out_sweep-0-results.json"), expected)
    # The other ranks return their own part.
    part = kscope.load(tmp_path / "rank-2.json")
    assert sorted(set(zip(part.raw_dataframe()["n"], part.raw_dataframe()["dtype"]))) == sorted(CONFIGS[2::3])


def test_torchrun_with_the_programs_own_process_group(tmp_path):
    result = torchrun(tmp_path, "user-group")
    assert result.returncode == 0, result.stdout + result.stderr
    assert_same_table(kscope.load(tmp_path / "rank-0.json"), kscope.load(_saved(whole(), tmp_path / "whole.json")))


def test_torchrun_a_failing_rank_is_named_on_rank_0_and_nobody_hangs(tmp_path):
    result = torchrun(tmp_path, "fail-shard-1")
    assert result.returncode != 0
    rank0 = (tmp_path / "rank-0.error.txt").read_text()
    assert "the sharded sweep failed on another rank (shard 1/3: SweepError: config 2/10" in rank0
    assert "out of memory" in rank0
    assert rank0.endswith("[this rank's results attached]")  # rank 0's own measurements are not lost
    assert (tmp_path / "rank-1.error.txt").read_text().startswith("SweepError: config 2/10")
    assert (tmp_path / "rank-2.json").exists()  # a rank that finished returns its part


def test_an_unfinished_shard_is_named_with_the_python_fix(tmp_path):
    prefix = str(tmp_path / "run_")
    for i in range(3):
        shard(i, 3, output_prefix=prefix)
    (tmp_path / "run_sweep-0-shard-1-of-3-results.json").unlink()
    with pytest.raises(ConfigError) as caught:
        kscope.merge(prefix + "sweep-0-")
    message = str(caught.value)
    assert "shard 1/3 under" in message and "has not finished" in message
    assert "resume=True" in message and "Settings::" not in message


def test_a_malformed_kscope_shard_is_a_config_error(monkeypatch):
    monkeypatch.setenv("KSCOPE_SHARD", "4/4")
    with kscope.testing.simulated_backend() as sim:
        with pytest.raises(ConfigError, match=r"KSCOPE_SHARD '4/4': shard index 4 is not below the shard count 4"):
            profiled(sim)()
        with pytest.raises(ConfigError, match=r"KSCOPE_SHARD '4/4'"):
            profiled(sim, "auto")()


def test_the_docs_show_the_slurm_scripts_that_tests_slurm_runs():
    """docs/scaling-out.md's Slurm recipe holds examples/slurm's scripts word for word: tests/slurm
    submits those files (and the page's submission lines) to a real Slurm."""
    root = HERE.parents[1]
    page = (root / "docs" / "scaling-out.md").read_text()
    for name in ("sweep.sbatch", "steps.sbatch"):
        script = (root / "examples" / "slurm" / name).read_text()
        assert f"`examples/slurm/{name}`" in page and f"```bash\n{script}```" in page, name
