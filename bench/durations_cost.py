"""What a durations call costs from Python (issue 29), on the add of 2^20 floats the issue names.

Prints one line per figure, for bench/cost_table.py:
  PY bare_events_loop_us X      a hand-written loop: event, add, event, synchronize (warm, no flush)
  PY body_host_us X             the body alone on the host (annotate outside a call, the add's launch)
  PY kernel_ns X                the add's median cupti__kernel_duration (cold L2)
  PY <backend> <cache> per_run_us X fixed_ms X   (cupti all, cupti none, events all) wall time of whole calls: the slope from 1 to
                                1000 runs is per run; the rest of a 1-run call (its warm-up and run
                                taken off) is the fixed cost of a call
  PY split <backend> <cache> ...  where a 1000-run call's time went, per run (us), from kscope's debug log:
                                bodies (the body's calls with kscope's per-run work), collecting (the
                                batches' collections: for cupti, waiting for the GPU, CUPTI's activity
                                flush, attributing the records), recording, and the batches
With --cold, only the lines of the cold run's ratio: kernel_ns and cupti all.
Needs torch with CUDA and the kscope package on PYTHONPATH.
"""

from __future__ import annotations

import contextlib
import io
import re
import statistics
import sys
import time

import torch

import kscope

N = 1 << 20
FEW, MANY = 1, 1000
a = torch.ones(N, device="cuda")
b = torch.ones(N, device="cuda")
c = torch.empty(N, device="cuda")


def add() -> None:
    torch.add(a, b, out=c)


def bare_events_loop_us(iterations: int = 2000) -> float:
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    add()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iterations):
        start.record()
        add()
        stop.record()
        stop.synchronize()
    return 1e6 * (time.perf_counter() - t0) / iterations


def body_host_us(iterations: int = 5000) -> float:
    region = kscope.annotate("add")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iterations):
        with region:
            add()
    elapsed = time.perf_counter() - t0
    torch.cuda.synchronize()
    return 1e6 * elapsed / iterations


def profiled(backend: str, cache: str, runs: int, verbosity: str = "silent"):
    @kscope.analyze.kernel(configs=[(N,)], runs=runs, backend=backend, cache_control=cache, verbosity=verbosity)
    def f(n):
        with kscope.annotate("add"):
            add()

    return f


def wall_ms(f, calls: int) -> float:
    f()  # warm: the first call of a process pays CUPTI's one-time setup
    walls = []
    for _ in range(calls):
        t0 = time.perf_counter()
        f()
        walls.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(walls)


def split(backend: str, cache: str, runs: int = MANY) -> str:
    """The debug log's account of one call's time, per run."""
    profiled(backend, cache, runs)()  # warm
    log = io.StringIO()
    with contextlib.redirect_stderr(log):
        profiled(backend, cache, runs, "debug")()
    text = log.getvalue()
    config = re.search(r"config 1/1: (\d+) runs in (\d+) batches, ([\d.]+) ms: bodies ([\d.]+) ms .*collecting ([\d.]+) ms"
                       r" .*recording ([\d.]+) ms", text)
    if not config:
        return f"PY split {backend} {cache} no account in the debug log: {text[-300:]!r}"
    total_runs, batches = int(config[1]), int(config[2])
    wall, bodies, collecting, recording = (float(config[i]) * 1e3 / total_runs for i in (3, 4, 5, 6))
    line = (f"PY split {backend} {cache} per_run_us wall {wall:.3f} bodies {bodies:.3f} collecting {collecting:.3f} "
            f"recording {recording:.3f} batches {batches}")
    cupti = re.search(r"cupti: \d+ collections: waiting for the GPU ([\d.]+) ms, CUPTI's activity flush ([\d.]+) ms, "
                      r"attributing the records ([\d.]+) ms", text)
    if cupti:
        wait, flush, attribute = (float(cupti[i]) * 1e3 / total_runs for i in (1, 2, 3))
        line += f" | gpu_wait {wait:.3f} activity_flush {flush:.3f} attribute {attribute:.3f}"
    return line


def main() -> None:
    cold_only = "--cold" in sys.argv[1:]
    if not cold_only:
        print(f"PY bare_events_loop_us {bare_events_loop_us():.3f}")
        print(f"PY body_host_us {body_host_us():.3f}")
    kernel = profiled("cupti", "all", 200)().to_dataframe()["Median"].iloc[0]
    print(f"PY kernel_ns {kernel:.1f}")
    for backend, cache in (("cupti", "all"),) if cold_only else (("cupti", "all"), ("cupti", "none"), ("events", "all")):
        few = wall_ms(profiled(backend, cache, FEW), 30)
        many = wall_ms(profiled(backend, cache, MANY), 5)
        per_run_ms = (many - few) / (MANY - FEW)
        fixed_ms = few - (FEW + 1) * per_run_ms  # one warm-up run per call
        print(f"PY {backend} {cache} per_run_us {1e3 * per_run_ms:.3f} fixed_ms {fixed_ms:.3f}", flush=True)
    for backend, cache in (("cupti", "all"),) if cold_only else (("cupti", "all"), ("cupti", "none")):
        print(split(backend, cache), flush=True)


if __name__ == "__main__":
    main()
