"""The program the Slurm tests submit where docs/scaling-out.md's recipe submits yours (tune_gemm.py): a kscope
sweep with shard="auto" and an output_prefix, on the simulated backend, whose durations depend only
on the config and its call number (sharded_workload.launch: so shards, resumed or not, merge to one
process's table).

    sweep_program.py OUT_DIR [--resume] [--slow-task TASK_ID] [--ignore-sigterm TASK_ID]

- --resume: resume=True, as the recipe's program passes it.
- --slow-task: in array task TASK_ID's first start (SLURM_RESTART_COUNT unset or 0), each run
  sleeps 0.25 s, so that a test can stop the task mid-sweep; the durations measured do not change.
- --ignore-sigterm: in array task TASK_ID, a SIGTERM handler that only notes the signal, as a
  program with a handler of its own (a checkpointing framework's) does: Slurm's SIGKILL ends it.
- OUT_DIR/fail-<array task id>, if it exists, makes that task's sweep fail at its second config
  (a CUDA out-of-memory error would): the test removes the file before running the task again.

Each config's first run appends a line to OUT_DIR/measured.log: "<SLURM_ARRAY_JOB_ID> <array task
id> <SLURM_PROCID> <SLURM_RESTART_COUNT> <n> <dtype> <time>" ("-" for a variable not set), so a
test counts what each start of a task measured; signals noted go to OUT_DIR/signals.log.
"""

import argparse
import os
import signal
import time
from pathlib import Path

import kscope
from sharded_workload import launch  # tests/python, on PYTHONPATH

CONFIGS = [(n, dtype) for n in range(1, 13) for dtype in ("f16", "f32")]


def profiled(sim, on_config=None, run_sleep=0.0, **options):
    calls = {}

    @kscope.analyze.kernel(configs=CONFIGS, runs=3, warmup_runs=1, verbosity="info", normalize_against="base",
                           **options)
    def sweep(n, dtype):
        k = calls.get((n, dtype), 0)
        calls[(n, dtype)] = k + 1
        if k == 0 and on_config is not None:
            on_config(n, dtype, len(calls))
        time.sleep(run_sleep)
        launch(sim, n, dtype, k)

    return sweep


def append(path, line):
    with open(path, "a") as f:  # one write of one short line: lines of concurrent tasks stay whole
        f.write(line + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--slow-task")
    parser.add_argument("--ignore-sigterm")
    args = parser.parse_args()
    array = os.environ.get("SLURM_ARRAY_JOB_ID", "-")
    task = os.environ.get("SLURM_ARRAY_TASK_ID", "-")
    rank = os.environ.get("SLURM_PROCID", "-")
    restart = int(os.environ.get("SLURM_RESTART_COUNT") or 0)
    if args.ignore_sigterm == task:
        signal.signal(signal.SIGTERM, lambda *_: append(args.out_dir / "signals.log", f"{task} SIGTERM {time.time()}"))
    fail = (args.out_dir / f"fail-{task}").exists()

    def on_config(n, dtype, seen):
        if fail and seen == 2:
            raise RuntimeError("CUDA error: out of memory (the test's failing task)")
        append(args.out_dir / "measured.log", f"{array} {task} {rank} {restart} {n} {dtype} {time.time()}")

    with kscope.testing.simulated_backend() as sim:
        slow = args.slow_task == task and restart == 0
        sweep = profiled(sim, on_config, 0.25 if slow else 0.0, shard="auto", output_prefix=f"{args.out_dir}/",
                         resume=args.resume)
        sweep()


if __name__ == "__main__":
    main()
