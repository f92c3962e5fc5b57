"""Scale-out on a real Slurm: docs/scaling-out.md's recipe (examples/slurm/ and the submission lines of
"Scaling out") run as written on the one-node cluster that tests/slurm/run.sh starts, measuring
sweep_program.py on the simulated backend. Every scenario ends in a merged table that must equal
the single-process table of the same sweep, cell for cell."""

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import kscope
import sweep_program

ROOT = Path(__file__).resolve().parents[2]
SWEEP_SBATCH = ROOT / "examples" / "slurm" / "sweep.sbatch"
STEPS_SBATCH = ROOT / "examples" / "slurm" / "steps.sbatch"
PROGRAM = f"{shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).with_name('sweep_program.py')))} sweep"
WAIT_S = 90

pytestmark = pytest.mark.skipif(
    not os.environ.get("SLURM_CONF"), reason="needs the one-node Slurm cluster that tests/slurm/run.sh starts")


class Recipe:
    """docs/scaling-out.md's two submission lines: the array of sweep.sbatch, then the merge chained
    to it. The test runs them with its own array, shard count and program in place of the page's."""

    SUBMIT = "sbatch --parsable --array=0-15 sweep.sbatch 16 python3 tune_gemm.py"
    MERGE = '--wrap "kscope merge sweep/merged- sweep/"'

    def __init__(self):
        text = (ROOT / "docs" / "scaling-out.md").read_text()
        self.submit_line = self._line(text, self.SUBMIT)
        self.merge_line = self._line(text, self.MERGE)
        assert "$array" in self.merge_line, self.merge_line

    @staticmethod
    def _line(text, part):
        lines = [line for line in text.splitlines() if part in line]
        assert len(lines) == 1, f"docs/scaling-out.md's Slurm recipe should have one line with {part!r}, not {lines}"
        return lines[0]

    def submit(self, directory, array, shards, *program_options):
        program = " ".join([PROGRAM, *program_options])
        line = self.submit_line.replace("--array=0-15", f"--array={array}").replace(
            "sweep.sbatch 16 python3 tune_gemm.py", f"{SWEEP_SBATCH} {shards} {program}")
        return bash(directory, f"{line}\necho $array").strip()

    def merge(self, directory, after):
        """The merge job, chained with afterok to `after` ("12", or "12:13" for two arrays)."""
        return submitted(bash(directory, f"array={after}\n{self.merge_line}"))


def bash(directory, script):
    done = subprocess.run(["bash", "-ec", script], cwd=directory, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{script}\n{done.stdout}{done.stderr}"
    return done.stdout


def submitted(sbatch_output):
    found = re.search(r"Submitted batch job (\d+)", sbatch_output)
    assert found, sbatch_output
    return found.group(1)


def jobs(job_id):
    """{array task id or "-": (state, reason, restarts)} of a job or array, from slurmctld's records."""
    text = subprocess.run(["scontrol", "-o", "show", "job", job_id], capture_output=True, text=True,
                          check=True).stdout
    out = {}
    for line in text.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        out[fields.get("ArrayTaskId", "-")] = (fields["JobState"], fields["Reason"], int(fields["Restarts"]))
    return out


def wait_for(*job_ids, each_poll=lambda: None):
    """Until none of the jobs is pending, running or completing; each_poll() runs at every look."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        each_poll()
        queued = subprocess.run(["squeue", "-h", "-o", "%i %T %r", "-j", ",".join(job_ids)], capture_output=True,
                                text=True).stdout
        if not queued.strip():
            return
        time.sleep(0.2)
    pytest.fail(f"jobs {job_ids} still queued after {WAIT_S} s:\n{queued}")


def wait_until(condition, what):
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {WAIT_S} s for {what}")
        time.sleep(0.05)


def measured(directory, **match):
    """The configs measured, in order, by the task starts whose fields (array, task, rank, restart:
    strings) are those given."""
    path = directory / "sweep" / "measured.log"
    out = []
    for line in path.read_text().splitlines() if path.exists() else []:
        array, task, rank, restart, n, dtype, when = line.split()
        fields = {"array": array, "task": task, "rank": rank, "restart": restart}
        if all(fields[k] == v for k, v in match.items()):
            out.append(((int(n), dtype), float(when), fields))
    return out


def shard_configs(index, count):
    return [c for i, c in enumerate(sweep_program.CONFIGS) if i % count == index]


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The single-process table of the sweep, as saved and loaded (configs hold the engine's values)."""
    path = tmp_path_factory.mktemp("single") / "whole.json"
    with kscope.testing.simulated_backend() as sim:
        sweep_program.profiled(sim)().save(path)
    return kscope.load(path)


@pytest.fixture(scope="module")
def recipe():
    return Recipe()


@pytest.fixture
def directory(tmp_path):
    (tmp_path / "sweep").mkdir()
    return tmp_path


def assert_identical(directory, whole, report, shards):
    merged = kscope.load(directory / "sweep" / "merged-results.json")
    assert merged._core.shard_count() == shards
    pd.testing.assert_frame_equal(merged.to_dataframe(), whole.to_dataframe(), check_exact=True)
    pd.testing.assert_frame_equal(merged.raw_dataframe(), whole.raw_dataframe(), check_exact=True)
    report(f"{shards} shards merged: identical to the single-process table ({len(merged.to_dataframe())} rows, "
           f"{len(merged.raw_dataframe())} samples)")


def test_dense_array(recipe, directory, whole, report):
    array = recipe.submit(directory, "0-3", 4, "--resume")
    merge = recipe.merge(directory, array)
    wait_for(array, merge)
    assert set(jobs(array).values()) == {("COMPLETED", "None", 0)}
    assert jobs(merge)["-"][0] == "COMPLETED"
    assert_identical(directory, whole, report, 4)


def test_throttled_array(recipe, directory, whole, report):
    array = recipe.submit(directory, "0-3%2", 4, "--resume")
    merge = recipe.merge(directory, array)
    most = 0

    def at_most_two_at_once():
        nonlocal most
        running = subprocess.run(["squeue", "-h", "-t", "running", "-o", "%K", "-j", array], capture_output=True,
                                 text=True).stdout.split()
        assert len(running) <= 2, f"tasks {running} ran at once under %2"
        most = max(most, len(running))

    wait_for(array, merge, each_poll=at_most_two_at_once)
    assert set(jobs(array).values()) == {("COMPLETED", "None", 0)}
    assert jobs(merge)["-"][0] == "COMPLETED"
    report(f"at most 2 tasks running at once (squeue, every 0.2 s: {most} at most)")
    assert_identical(directory, whole, report, 4)


def test_stepped_arrays(recipe, directory, whole, report):
    even = recipe.submit(directory, "0-3:2", 4, "--resume")
    odd = recipe.submit(directory, "1-3:2", 4, "--resume")
    merge = recipe.merge(directory, f"{even}:{odd}")
    wait_for(even, odd, merge)
    assert sorted(jobs(even)) == ["0", "2"] and sorted(jobs(odd)) == ["1", "3"]
    assert jobs(merge)["-"][0] == "COMPLETED"
    report("--array=0-3:2 and --array=1-3:2, merged after both (afterok:EVEN:ODD)")
    assert_identical(directory, whole, report, 4)


def test_failed_tasks_named_by_the_merge_and_run_again(recipe, directory, whole, report):
    for task in (1, 3):
        (directory / "sweep" / f"fail-{task}").touch()
    array = recipe.submit(directory, "0-3", 4, "--resume")
    merge = recipe.merge(directory, array)
    wait_for(array)
    assert {t: s[0] for t, s in jobs(array).items()} == {
        "0": "COMPLETED", "1": "FAILED", "2": "COMPLETED", "3": "FAILED"}
    wait_until(lambda: jobs(merge)["-"][1] == "DependencyNeverSatisfied", "the merge job's afterok to fail")
    subprocess.run(["scancel", merge], check=True)
    by_hand = subprocess.run(["kscope", "merge", "sweep/merged-", "sweep/"], cwd=directory, capture_output=True,
                             text=True)
    assert by_hand.returncode == 2, by_hand.stdout + by_hand.stderr
    fix = re.search(r"sbatch --array=\S+ <job script>", by_hand.stderr)
    assert fix and fix.group(0) == "sbatch --array=1,3 <job script>", by_hand.stderr
    report("kscope merge: " + by_hand.stderr.strip().removeprefix("kscope merge: "))
    for task in (1, 3):
        (directory / "sweep" / f"fail-{task}").unlink()
    rerun = submitted(bash(directory, fix.group(0).replace("<job script>", f"{SWEEP_SBATCH} 4 {PROGRAM} --resume")))
    merge = recipe.merge(directory, rerun)
    wait_for(rerun, merge)
    assert jobs(merge)["-"][0] == "COMPLETED"
    # The rerun measured what the failed tasks had not: all of their configs but the first.
    for task in (1, 3):
        again = [config for config, _, _ in measured(directory, array=rerun, task=str(task))]
        assert again == shard_configs(task, 4)[1:]
    report(f"the rerun measured {len(measured(directory, array=rerun))} configs: those the failed tasks had not")
    assert_identical(directory, whole, report, 4)


def test_shard_auto_from_the_arrays_own_variables(recipe, directory, whole, report):
    """Without KSCOPE_SHARD: one submission of an evenly stepped array (here stepped, from 1) splits
    by SLURM_ARRAY_TASK_*; a list of ids is refused by each task."""
    array = submitted(bash(directory, f"sbatch --array=1-5:2 --output=slurm-%A_%a.out --wrap 'exec {PROGRAM}'"))
    merge = recipe.merge(directory, array)
    (directory / "sparse").mkdir()
    sparse = submitted(bash(directory / "sparse",
                            f"sbatch --array=0,3,7 --output=slurm-%A_%a.out --wrap 'exec {PROGRAM}'"))
    wait_for(array, merge, sparse)
    assert jobs(merge)["-"][0] == "COMPLETED"
    for task, (state, _, _) in jobs(sparse).items():
        assert state == "FAILED"
        said = (directory / "sparse" / f"slurm-{sparse}_{task}.out").read_text()
        assert f"SLURM_ARRAY_TASK_ID={task} (MIN 0, MAX 7, STEP 1, COUNT 3): the array's task ids are not evenly " \
               "stepped" in said, said
    report("--array=1-5:2: shards 0-2 of 3; --array=0,3,7: each task refused (not evenly stepped)")
    assert_identical(directory, whole, report, 3)


def test_requeued_tasks_resume(recipe, directory, whole, report):
    """A task requeued mid-sweep (as preemption does) and a task cancelled mid-sweep (scancel: its
    SIGTERM ignored by the program, so SIGKILL after KillWait), then requeued. The program does not
    pass resume=True: the requeued start (SLURM_RESTART_COUNT=1) resumes by itself. Two arrays."""
    preempted_dir, cancelled_dir = directory / "preempted", directory / "cancelled"
    for d in (preempted_dir, cancelled_dir):
        (d / "sweep").mkdir(parents=True)
    preempted = recipe.submit(preempted_dir, "0-1", 2, "--slow-task 0")
    preempted_merge = recipe.merge(preempted_dir, preempted)
    cancelled = recipe.submit(cancelled_dir, "0-1", 2, "--slow-task 1 --ignore-sigterm 1")
    cancelled_merge = recipe.merge(cancelled_dir, cancelled)

    def acknowledged(d, task):
        progress = d / "sweep" / f"sweep-0-shard-{task}-of-2-progress.jsonl"
        return len(progress.read_text().splitlines()) if progress.exists() else 0

    wait_until(lambda: acknowledged(preempted_dir, 0) >= 2, "2 configs of the preempted task")
    subprocess.run(["scontrol", "requeue", f"{preempted}_0"], check=True)
    wait_until(lambda: acknowledged(cancelled_dir, 1) >= 2, "2 configs of the cancelled task")
    cancelled_at = time.time()
    subprocess.run(["scancel", f"{cancelled}_1"], check=True)
    wait_until(lambda: jobs(cancelled)["1"][0] == "CANCELLED", "the cancelled task to end")
    ended_at = time.time()
    subprocess.run(["scontrol", "requeue", f"{cancelled}_1"], check=True)
    wait_for(preempted, preempted_merge, cancelled)

    assert jobs(preempted)["0"] == ("COMPLETED", "None", 1)
    assert jobs(preempted_merge)["-"][0] == "COMPLETED"  # a requeue keeps the afterok chain
    assert jobs(cancelled)["1"] == ("COMPLETED", "None", 1)
    sigterm = float((cancelled_dir / "sweep" / "signals.log").read_text().split()[2])
    after_sigterm = [when - sigterm for _, when, _ in measured(cancelled_dir, task="1", restart="0") if when > sigterm]
    assert after_sigterm, "the program ignores SIGTERM: it measured on until the SIGKILL"
    report(f"cancelled task: SIGTERM {sigterm - cancelled_at:.1f} s after scancel; the program (ignoring it) began "
           f"configs until {max(after_sigterm):.1f} s after it; SIGKILL ended it {ended_at - sigterm:.1f} s after "
           f"it (KillWait 1: slurmd waits about 5 s)")

    for d, array, task in ((preempted_dir, preempted, "0"), (cancelled_dir, cancelled, "1")):
        first = [config for config, _, _ in measured(d, array=array, task=task, restart="0")]
        second = [config for config, _, _ in measured(d, array=array, task=task, restart="1")]
        mine = shard_configs(int(task), 2)
        said = (d / f"slurm-{array}_{task}.out").read_text()
        assert "SLURM_RESTART_COUNT=1: Slurm started this job again, so it continues the sweep under" in said, said
        found = re.search(rf"resuming the sweep under '[^']*': (\d+) of the {len(mine)} configs of shard {task}/2 "
                          r"were measured before; measuring the other (\d+)", said)
        assert found, said
        before = int(found.group(1))
        # Re-measured only what was missing: the configs after the ones on disk; lost at most the one in flight.
        assert second == mine[before:] and first[:before] == mine[:before]
        lost = len(first) - before
        assert 0 <= lost <= 1 and before < len(mine), f"the first start measured {len(first)}, {before} on disk"
        report(f"{'preempted' if task == '0' else 'cancelled'} task {task}: first start measured {len(first)} "
               f"configs, {before} on disk (lost {lost}, the one in flight); the requeued start measured "
               f"{len(second)}, the rest of its {len(mine)}")

    # The chain of the cancelled array broke (Slurm: a cancelled task fails afterok for good, requeued
    # or not), so the merge is by hand, as docs/scaling-out.md says.
    assert jobs(cancelled_merge)["-"][:2] == ("PENDING", "DependencyNeverSatisfied")
    subprocess.run(["scancel", cancelled_merge], check=True)
    subprocess.run(["kscope", "merge", "sweep/merged-", "sweep/"], cwd=cancelled_dir, check=True, capture_output=True)
    assert_identical(preempted_dir, whole, report, 2)
    assert_identical(cancelled_dir, whole, report, 2)


def test_srun_steps_in_one_allocation(directory, whole, report):
    job = submitted(bash(directory, f"sbatch {STEPS_SBATCH} sweep/ {PROGRAM}"))
    wait_for(job)
    assert jobs(job)["-"][0] == "COMPLETED", (directory / f"slurm-{job}.out").read_text()
    ranks = sorted({fields["rank"] for _, _, fields in measured(directory)})
    assert ranks == ["0", "1", "2", "3"]
    report("sbatch --ntasks=4 steps.sbatch: srun's 4 tasks measured shards 0-3 (SLURM_PROCID), merged in the job")
    assert_identical(directory, whole, report, 4)
