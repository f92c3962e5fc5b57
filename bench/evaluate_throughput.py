"""kscope.evaluate_many's throughput on one GPU: 100 KernelBench-style candidates of level-1 sizes
(four problems: a scaled add of 4M elements, ReLU and softmax of 16 x 16384, a 2048^3 matmul), a mix
of honest ones (torch, Triton, CUDA through load_inline, side streams joined back or synchronized),
wrong ones, ones that crash their worker (an illegal address, abort, segfault, sys.exit, GPU memory
exhausted), ones that hang (on the GPU, on the host), gaming ones (work on a stream nobody joins,
answers cached by address, a patched timer, the answer written into the input, batch-and-skip) and
ones that do not compile, every verdict checked against its kind (tests/python/batch_problems.py).

Two batches of the same candidates: the first builds everything (compile workers on the CPU, the GPU
measuring meanwhile), the second finds the builds done. The targets:
  - with compilation, the batch's wall time <= 1.2 x max(total compile time / compile workers, total
    time holding the GPU);
  - without it (the second batch), >= 2,000 candidates per GPU-hour (<= 1.8 s a candidate), crashes,
    hangs and worker restarts included;
  - every crash and hang contained (its verdict, its message) and every other verdict right.

    python3 bench/evaluate_throughput.py [--dir DIR] [--timeout S] [--builds N]

Beside the first target it prints the first batch against two bounds that no order of the compiles
beats: the compiles' CPU time (their compilers' included) over the cores, and the workers' start plus
the longest compile.
--builds N compiles and measures only N of the mix's CUDA candidates (up to 10), once: how long one
build takes alone (1) or beside the others (10), which bounds the first batch from below whatever
the order, as the longest build plus the workers' start.

Prints THROUGHPUT lines, the last "THROUGHPUT all PASS" or "... FAIL"; exits 1 on a FAIL.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import kscope

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))
import batch_problems  # noqa: E402

MIX = [
    ("scale_add", "torch", 6), ("scale_add", "side_stream_joined", 1), ("scale_add", "side_stream_synced", 1),
    ("scale_add", "triton", 5), ("scale_add", "cuda", 5), ("scale_add", "slower", 1),
    ("scale_add", "wrong", 3), ("scale_add", "illegal_address", 2), ("scale_add", "hang_gpu", 1),
    ("scale_add", "out_of_memory", 1), ("scale_add", "abort", 1), ("scale_add", "exit", 1),
    ("scale_add", "unjoined_stream", 2), ("scale_add", "cached_by_address", 2), ("scale_add", "timer_patch", 1),
    ("scale_add", "in_place", 2), ("scale_add", "batch_and_skip", 2), ("scale_add", "cuda_compile_error", 2),
    ("relu", "torch", 7), ("relu", "side_stream_joined", 1), ("relu", "triton", 5), ("relu", "cuda", 5), ("relu", "slower", 1), ("relu", "wrong", 3),
    ("relu", "illegal_address", 1), ("relu", "hang_host", 1), ("relu", "segfault", 2), ("relu", "exit", 1),
    ("relu", "unjoined_stream", 1), ("relu", "cached_by_address", 1), ("relu", "timer_patch", 1),
    ("relu", "in_place", 1), ("relu", "batch_and_skip", 1), ("relu", "cuda_compile_error", 1),
    ("relu", "syntax_error", 1),
    ("softmax", "torch", 6), ("softmax", "slower", 1), ("softmax", "wrong", 2), ("softmax", "abort", 1),
    ("softmax", "out_of_memory", 1), ("softmax", "unjoined_stream", 1), ("softmax", "timer_patch", 1),
    ("matmul", "torch", 6), ("matmul", "slower", 1), ("matmul", "wrong", 2), ("matmul", "low_precision", 2),
    ("matmul", "cached_by_address", 1), ("matmul", "syntax_error", 1), ("matmul", "segfault", 1),
]
CONTAINED = {"illegal_address", "abort", "segfault", "exit", "out_of_memory", "hang_gpu", "hang_host"}


def wrong_verdicts(table, kinds: dict[str, str]) -> list[str]:
    """Each candidate whose verdict, message or findings are not its kind's."""
    wrong = []
    for candidate, kind in sorted(kinds.items()):
        rows = table[table["Candidate"] == candidate]
        if rows.empty:
            wrong.append(f"{candidate} ({kind}): no row")
            continue
        row = rows.iloc[0]
        if row["Verdict"] not in batch_problems.EXPECTED[kind]:
            wrong.append(f"{candidate} ({kind}): {row['Verdict']}: {str(row['Reason'])[:160]}")
        elif kind in batch_problems.MESSAGES and batch_problems.MESSAGES[kind] not in str(row["Reason"]):
            wrong.append(f"{candidate} ({kind}): message {str(row['Reason'])[:160]!r}")
        elif batch_problems.EXPECTED[kind] == batch_problems.HONEST_VERDICTS and row["Findings"]:
            wrong.append(f"{candidate} ({kind}): findings {row['Findings']}")
    return wrong


def breakdown(s: dict) -> str:
    """Where a batch's wall time went (kscope.evaluate_many's schedule)."""
    compiling = "" if s["compiling_ended_s"] is None else (
        f"; compiling ended at {s['compiling_ended_s']:.1f} s, then {s['after_compiling_s']:.1f} s measuring "
        f"what compiled last")
    return (f"breakdown: workers started in {s['startup_s'] or 0:.1f} s (a measuring worker in "
            f"{s['worker_start_s'] or 0:.1f} s, then its CUDA context in {s['worker_activate_s'] or 0:.2f} s); "
            f"the GPU measuring {s['gpu_measuring_s']:.1f} s, waiting for its workers to start "
            f"{s['gpu_starting_s']:.1f} s, for a replacement {s['gpu_replacing_s']:.1f} s "
            f"({s['workers_replaced']} workers replaced, {s['workers_replaced_by_standby']} by a standby ready), "
            f"for a compile {s['gpu_waiting_for_compile_s']:.1f} s, for a load {s['gpu_waiting_for_load_s']:.1f} s; "
            f"compile workers busy {s['compile_busy_s']:.1f} s of {s['compile_workers']} x {s['wall_s']:.1f} s, "
            f"their CPU time {s['compile_cpu_s']:.1f} s (compilers included) = {s['compile_cpu_s'] / s['cores']:.1f} s "
            f"on {s['cores']} cores"
            + compiling)


def run_batch(problems: Path, out: Path, build: Path, compile_workers: int, timeout_s: float):
    start = time.monotonic()
    table = kscope.evaluate_many(problems, out, build_dir=build, compile_workers=compile_workers,
                                 timeout_s=timeout_s, verbosity="silent")
    return table, time.monotonic() - start


def compile_worker_count() -> int:
    """The batches' compile workers: the cores beside two measuring workers and this process."""
    return max(1, (os.cpu_count() or 2) - 3)


def builds_only(root: Path, count: int, timeout_s: float) -> int:
    """One batch of `count` CUDA candidates: each one's build time, the batch's wall and start."""
    why = batch_problems.extensions_unbuildable()
    if why:
        print(f"THROUGHPUT builds: none here ({why})")
        return 1
    mix = [("scale_add", "cuda", min(count, 5))] + [("relu", "cuda", count - 5)] * (count > 5)
    kinds = batch_problems.gpu_batch(root / "problems", mix)
    table, wall = run_batch(root / "problems", root / "builds", root / "build", compile_worker_count(), timeout_s)
    builds = table["CompileS"].groupby(table["Candidate"]).first()
    s = table.attrs["schedule"]
    wrong = wrong_verdicts(table, kinds)
    print(f"THROUGHPUT builds: {count} at once on {s['cores']} cores: each {builds.min():.1f} to {builds.max():.1f} s "
          f"(median {builds.median():.1f}); their CPU time {s['compile_cpu_s']:.1f} s; workers started in "
          f"{s['startup_s'] or 0:.1f} s; compiling ended at {s['compiling_ended_s'] or 0:.1f} s; wall {wall:.1f} s; "
          f"verdicts {len(kinds) - len(wrong)}/{len(kinds)} right")
    for line in wrong:
        print(f"THROUGHPUT   wrong: {line}")
    return 0 if not wrong else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", help="where the candidates, builds and tables go (default: a temporary directory)")
    parser.add_argument("--timeout", type=float, default=10.0, help="evaluate_many's timeout_s (default: 10)")
    parser.add_argument("--builds", type=int, choices=range(1, 11), metavar="N",
                        help="only N of the CUDA candidates (1 to 10), one batch: their build times")
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="kscope-throughput-"))
    if args.builds:
        return builds_only(root, args.builds, args.timeout)
    mix, why = batch_problems.buildable(MIX)
    if why:
        print(f"THROUGHPUT note: {why}; its CUDA candidates are torch ones, and none fails to compile")
    kinds = batch_problems.gpu_batch(root / "problems", mix)
    workers = compile_worker_count()
    results = []

    first, wall = run_batch(root / "problems", root / "first", root / "build", workers, args.timeout)
    compile_s, measure_s = first["CompileS"].groupby(first["Candidate"]).first().sum(), \
        first["MeasureS"].groupby(first["Candidate"]).first().sum()
    bound = max(compile_s / workers, measure_s)
    ratio = wall / bound
    results.append(ratio <= 1.2)
    print(f"THROUGHPUT first batch (compiling): wall {wall:.1f} s, compile {compile_s:.1f} s over {workers} "
          f"workers = {compile_s / workers:.1f} s, measuring {measure_s:.1f} s: wall / max = {ratio:.2f} "
          f"(target <= 1.2) {'PASS' if ratio <= 1.2 else 'FAIL'}")
    print(f"THROUGHPUT first batch {breakdown(first.attrs['schedule'])}")
    s = first.attrs["schedule"]
    cpu_bound = max(s["compile_cpu_s"] / s["cores"], measure_s)
    print(f"THROUGHPUT first batch against the machine (not a target): wall / max(compile CPU time / "
          f"{s['cores']} cores = {s['compile_cpu_s'] / s['cores']:.1f} s, measuring {measure_s:.1f} s) = "
          f"{wall / cpu_bound:.2f}; compiling ended at {s['compiling_ended_s'] or 0:.1f} s")
    start, longest = s["startup_s"] or 0, first["CompileS"].max()
    print(f"THROUGHPUT first batch against its longest compile (not a target): wall / max(workers' start "
          f"{start:.1f} s + longest compile {longest:.1f} s, measuring {measure_s:.1f} s) = "
          f"{wall / max(start + longest, measure_s):.2f}; the target's 1.2 x max is {1.2 * bound:.1f} s")

    second, wall2 = run_batch(root / "problems", root / "second", root / "build", workers, args.timeout)
    per_candidate = wall2 / len(kinds)
    per_hour = 3600.0 / per_candidate
    results.append(per_hour >= 2000)
    measured = second["MeasureS"].groupby(second["Candidate"]).first()
    print(f"THROUGHPUT second batch (built): wall {wall2:.1f} s, {per_candidate:.2f} s a candidate = "
          f"{per_hour:.0f} candidates per GPU-hour (target >= 2000) {'PASS' if per_hour >= 2000 else 'FAIL'}; "
          f"holding the GPU {measured.sum():.1f} s (median {measured.median():.2f} s a candidate), compile "
          f"{second['CompileS'].groupby(second['Candidate']).first().sum():.1f} s")
    print(f"THROUGHPUT second batch {breakdown(second.attrs['schedule'])}")

    for name, table in (("first", first), ("second", second)):
        wrong = wrong_verdicts(table, kinds)
        faulty = [c for c, k in kinds.items() if k in CONTAINED]
        contained = len([c for c in faulty if not any(w.startswith(c + " ") for w in wrong)])
        results.append(not wrong)
        print(f"THROUGHPUT {name} batch verdicts: {len(kinds) - len(wrong)}/{len(kinds)} right; crashes and hangs "
              f"contained {contained}/{len(faulty)} {'PASS' if not wrong else 'FAIL'}")
        for line in wrong:
            print(f"THROUGHPUT   wrong: {line}")
    counts = second.drop_duplicates("Candidate")["Verdict"].value_counts()
    print("THROUGHPUT verdicts: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + f"; files in {root}")
    print(f"THROUGHPUT all {'PASS' if all(results) else 'FAIL'}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
