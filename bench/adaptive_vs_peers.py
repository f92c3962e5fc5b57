"""Adaptive sampling on a real GPU (run by scripts/gpu_check.sh; needs torch, triton and kscope).

1. A ~5 us kernel: RSD with fixed runs=1/10/100 against adaptive sampling to 1% RSD and to a 1%
   CI half-width (samples needed, wall time), and the SM clock observed per sample.
2. kscope adaptive vs triton.testing.do_bench vs torch.utils.benchmark adaptive_autorange on a
   small and a large kernel, five times each: wall time to a result and the spread of the five
   results. Each tool reports its own quantity (kscope: CUPTI kernel duration; do_bench and
   Timer: CUDA-event / host time of the call), so compare spreads and times, not the values.
"""

import statistics
import time

import torch
import triton.testing
import torch.utils.benchmark as tb

import kscope

torch.manual_seed(0)
small_x = torch.randn(1 << 21, device="cuda")          # 8 MB in, 8 MB out: about 5 us
large_a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
large_b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
WORKLOADS = {
    "small (mul 2^21 f32)": lambda: small_x.mul(1.0001),
    "large (matmul 4096 f16)": lambda: large_a @ large_b,
}


def kscope_measure(fn, **options):
    @kscope.analyze.kernel(configs=[(0,)], verbosity=0, **options)
    def bench(_):
        with kscope.annotate("k"):
            fn()

    start = time.perf_counter()
    result = bench()
    wall = time.perf_counter() - start
    return result.to_dataframe().iloc[0], result.raw_dataframe(), wall


def part1():
    fn = WORKLOADS["small (mul 2^21 f32)"]
    print("== 1. a ~5 us kernel (cupti, cache_control all)")
    print(f"{'sampling':<34}{'median us':>10}{'RSD %':>8}{'CI half %':>10}{'runs':>7}{'wall s':>8}  converged")
    for label, options in [
        ("fixed runs=1", dict(runs=1)),
        ("fixed runs=10", dict(runs=10)),
        ("fixed runs=100", dict(runs=100)),
        ("adaptive rsd < 1%", dict(adaptive={"criterion": "rsd", "target_pct": 1.0})),
        ("adaptive CI half-width < 1%", dict(adaptive={"target_pct": 1.0})),
    ]:
        row, raw, wall = kscope_measure(fn, **options)
        half = (row["CI95_Upper"] - row["AvgValue"]) / row["AvgValue"] * 100
        print(f"{label:<34}{row['Median'] / 1e3:>10.3f}{row['RelativeStdDevPct']:>8.2f}{half:>10.2f}"
              f"{row['NumRuns']:>7}{wall:>8.3f}  {row['Converged']}")
    clocks = raw["SMClockMHz"].tolist()
    print(f"observed SM clock per sample (clock_control none), first 20 of {len(clocks)}: "
          f"{[round(c) for c in clocks[:20]]}; min {min(clocks):.0f}, max {max(clocks):.0f} MHz")


def part2():
    print("== 2. time to a result and spread of 5 repeated results")
    print(f"{'workload':<26}{'tool':<36}{'median us':>10}{'spread %':>10}{'wall s/result':>15}")
    for name, fn in WORKLOADS.items():
        tools = {
            "kscope adaptive (CI<1%, cupti)": lambda: (lambda r: (r[0]["Median"] / 1e3, r[2]))(
                kscope_measure(fn, adaptive=True)),
            "triton do_bench (median)": lambda: timed(lambda: triton.testing.do_bench(fn, return_mode="median") * 1e3),
            "torch Timer.adaptive_autorange": lambda: timed(
                lambda: tb.Timer(stmt="fn()", globals={"fn": fn}).adaptive_autorange().median * 1e6),
        }
        for tool, measure in tools.items():
            values, walls = zip(*(measure() for _ in range(5)))
            med = statistics.median(values)
            print(f"{name:<26}{tool:<36}{med:>10.3f}{(max(values) - min(values)) / med * 100:>10.2f}"
                  f"{statistics.mean(walls):>15.3f}")


def timed(f):
    start = time.perf_counter()
    value = f()
    return value, time.perf_counter() - start


if __name__ == "__main__":
    fn_warm = WORKLOADS["large (matmul 4096 f16)"]
    fn_warm()
    torch.cuda.synchronize()
    part1()
    part2()
