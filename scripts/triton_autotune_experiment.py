#!/usr/bin/env python3
"""Issue 38's device experiment: does Triton's autotuner choose the same config every time, with
Triton's default do_bench and with kscope.triton.do_bench, and what does racing save?

1. A Triton fp16 matmul (M = N = K = --size) autotuned over 18 configs, in --processes separate
   processes with Triton's default do_bench, then in as many with kscope.triton.do_bench: each
   process's winner and tuning time (the autotuner's bench_time; the kernels are compiled once
   beforehand, by a process of their own, so that no process times compilation).
2. On the same space, in one process: kscope.triton.race against the exhaustive sweep (every config
   --runs times, kscope.analyze.kernel, the lowest median): the same winner (or one of the race's
   ties)? The runs and GPU time the race saved.
Prints a summary (and --json FILE writes it). Needs a GPU, torch and triton.

    python3 scripts/triton_autotune_experiment.py [--size 4096] [--processes 10] [--runs 100]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time


def build(size):
    """The matmul, its 18 configs, and a call of it on fresh fp16 inputs."""
    import torch
    import triton
    import triton.language as tl

    configs = [
        triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=w, num_stages=s)
        for (m, n, k, w, s) in [
            (128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 32, 4, 4),
            (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4),
            (64, 64, 64, 4, 5), (64, 64, 32, 4, 5), (128, 128, 64, 8, 3), (128, 256, 32, 8, 3),
            (256, 64, 64, 8, 3), (64, 256, 64, 8, 3), (128, 128, 128, 8, 2), (32, 64, 64, 2, 5),
            (64, 32, 64, 2, 5), (32, 32, 64, 2, 6),
        ]
    ]

    @triton.jit
    def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak, mask=(rm[:, None] < M) & ((k + rk)[None, :] < K))
            y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn, mask=((k + rk)[:, None] < K) & (rn[None, :] < N))
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))

    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)
    args = (a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    def grid(meta):
        return (triton.cdiv(size, meta["BLOCK_M"]), triton.cdiv(size, meta["BLOCK_N"]))

    return matmul, configs, args, grid


def autotuned(size, do_bench):
    import triton

    matmul, configs, args, grid = build(size)
    kernel = triton.autotune(configs=configs, key=["M", "N", "K"], do_bench=do_bench)(matmul)
    return kernel, configs, args, grid


def child(mode, size):
    """One process: autotune once, print {winner, tuning_s} as JSON."""
    import kscope.triton

    kernel, configs, args, grid = autotuned(size, kscope.triton.do_bench if mode == "kscope" else None)
    started = time.perf_counter()
    kernel[grid](*args)
    wall = time.perf_counter() - started
    print(json.dumps({"winner": configs.index(kernel.best_config), "config": str(kernel.best_config),
                      "tuning_s": getattr(kernel, "bench_time", wall), "wall_s": wall}))


def compile_all(size):
    """Every config compiled once, into Triton's disk cache, so that no measured process compiles."""
    matmul, configs, args, grid = build(size)
    for config in configs:
        matmul[grid](*args, **config.all_kwargs())


def in_processes(mode, size, processes):
    out = []
    for _ in range(processes):
        done = subprocess.run([sys.executable, __file__, "--child", mode, "--size", str(size)], check=True,
                              capture_output=True, text=True)
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def race_vs_exhaustive(size, runs):
    import kscope
    import kscope.triton

    kernel, configs, args, grid = autotuned(size, None)
    race = kscope.triton.race(kernel, grid, args, runs=runs, verbosity="silent")
    matmul = kernel.fn

    @kscope.analyze.kernel(configs=[(c,) for c in configs], runs=runs, replay_mode="range", verbosity="silent")
    def exhaustive(config):
        with kscope.annotate("matmul"):
            matmul[grid](*args, **config.all_kwargs())

    started = time.perf_counter()
    table = exhaustive().to_dataframe()
    exhaustive_s = time.perf_counter() - started
    best = configs.index(table.loc[table["Median"].astype(float).idxmin(), "config"])
    ties = [configs.index(t[0]) for t in race.ties]
    return {
        "race_winner": race.winner_index, "race_ties": ties, "exhaustive_winner": best,
        "same_winner": race.winner_index == best, "exhaustive_winner_in_race_answer": best in [race.winner_index] + ties,
        "race_runs": race.cost["runs"], "exhaustive_runs": race.cost["exhaustive_runs"],
        "runs_saved_pct": 100 * (1 - race.cost["runs"] / race.cost["exhaustive_runs"]),
        "race_gpu_s": race.cost["gpu_s"], "exhaustive_gpu_s": race.cost["exhaustive_gpu_s"],
        "race_wall_s": race.cost["wall_s"], "exhaustive_wall_s": exhaustive_s,
        "race_table": str(race),
    }


def summary_of(runs):
    winners = [r["winner"] for r in runs]
    return {"distinct_winners": len(set(winners)), "winners": winners,
            "tuning_s_median": statistics.median(r["tuning_s"] for r in runs),
            "tuning_s": [round(r["tuning_s"], 3) for r in runs]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--json")
    parser.add_argument("--child", choices=("triton", "kscope"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        return child(options.child, options.size)

    compile_all(options.size)
    result = {"size": options.size, "processes": options.processes}
    for mode in ("triton", "kscope"):
        result[mode] = summary_of(in_processes(mode, options.size, options.processes))
    result["race"] = race_vs_exhaustive(options.size, options.runs)

    import torch

    print(f"Triton fp16 matmul {options.size}^3, 18 configs, {options.processes} processes each, on "
          f"{torch.cuda.get_device_name()}")
    print(f"{'do_bench':<24}{'distinct winners':>18}{'tuning s (median)':>20}  winners")
    for mode, name in (("triton", "triton.testing"), ("kscope", "kscope.triton")):
        s = result[mode]
        print(f"{name:<24}{s['distinct_winners']:>18}{s['tuning_s_median']:>20.2f}  {s['winners']}")
    r = result["race"]
    print(f"race vs exhaustive ({options.runs} runs a config): race winner {r['race_winner']} (ties {r['race_ties']}), "
          f"exhaustive winner {r['exhaustive_winner']}: same winner {r['same_winner']}, exhaustive winner in the "
          f"race's answer {r['exhaustive_winner_in_race_answer']}")
    print(f"  runs {r['race_runs']} of {r['exhaustive_runs']} ({r['runs_saved_pct']:.0f}% saved); GPU time "
          f"{r['race_gpu_s'] * 1e3:.1f} of {r['exhaustive_gpu_s'] * 1e3:.1f} ms; wall {r['race_wall_s']:.1f} s against "
          f"{r['exhaustive_wall_s']:.1f} s")
    print(r["race_table"])
    if options.json:
        with open(options.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
