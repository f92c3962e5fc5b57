"""kscope GPU check of the energy metrics through the Python package, on an NVIDIA GPU
with a total-energy counter (Volta or newer; the bounds below were set on an H200).

  1. Energy per run is linear in the spins a run launches: k = 2 and 4 spins of 1 ms cost k times
     one spin's energy, within 5%.
  2. A spin twice as long costs twice the energy above idle, within 5% (and one 2 ms spin costs
     what two 1 ms spins do, within 5%).
  3. A long fp16 GEMM's average power agrees with NVML's own power readings sampled during its
     windows, within 10%, and is under the board's enforced power limit (within 5%: the board's
     controller holds its ~1 s average at the limit, and the exploration saw 100 ms stretches at
     up to 1.07x the limit during steady GEMMs).
  4. The spin sweep measured again in a second session agrees with the first within 5% (energy per
     run and above idle): each window's ends are known to ~3 ms of a read (< 1 J on a >= 150 J
     window), and what moves between sessions is the GPU's temperature (leakage power) and the
     idle power measured anew; kscope itself warns when idle power drifts over 5% in a session.

Never changes clocks or power settings. Prints a table and PASS/FAIL; exit 0 pass, 1 fail, 77 skip.
About 60-80 s on an H200 (two spin sessions of ~20 s, a GEMM session of ~10 s, imports).
"""

import ctypes
import math
import sys
import threading
import time

import kscope

try:
    import cupy
    import torch
except ImportError as e:
    print(f"SKIP: the energy check needs torch and cupy: {e}")
    sys.exit(77)

if not torch.cuda.is_available():
    print("SKIP: no CUDA device")
    sys.exit(77)

LINEAR_PCT = 5.0
DOUBLE_PCT = 5.0
POWER_PCT = 10.0
LIMIT_SLACK_PCT = 5.0
SESSIONS_PCT = 5.0
SPIN_CONFIGS = [(1000, 1), (1000, 2), (1000, 4), (2000, 1)]  # (us per spin, spins per run)

# Every multiprocessor busy for a fixed %globaltimer time, whatever the clocks.
_SPIN = cupy.RawKernel(r"""
extern "C" __global__ void spin(unsigned long long ns, float* sink) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  float acc = threadIdx.x;
  do {
    acc = acc * 1.0000001f + 1.0f;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  if (acc == -1.0f) *sink = acc;
}""", "spin")
_SINK = cupy.zeros(1, cupy.float32)
_BLOCKS = cupy.cuda.Device().attributes["MultiProcessorCount"] * 4


def spin(us):
    _SPIN((_BLOCKS,), (256,), (cupy.uint64(us * 1000), _SINK))


def spin_session():
    @kscope.analyze.kernel(configs=SPIN_CONFIGS, runs=3, metrics=kscope.energy_metrics(), energy_window=1.0,
                           combine_kernel_metrics=lambda a, b: a + b, verbosity="silent")
    def spins(us, k):
        with kscope.annotate("spin"):
            for _ in range(k):
                spin(us)

    df = spins().to_dataframe()
    return {(r.us, r.k, r.Metric): r for r in df.itertuples()}


class Nvml:
    """NVML's own power readings, for comparison: nvmlDeviceGetPowerUsage (a ~1 s average on this
    GPU) and the field NVML_FI_DEV_POWER_INSTANT (186), both in mW and updated every ~100 ms."""

    class _Field(ctypes.Structure):
        _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                    ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_uint), ("nvmlReturn", ctypes.c_uint),
                    ("value", ctypes.c_ulonglong)]

    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        assert self.lib.nvmlInit_v2() == 0
        self.dev = ctypes.c_void_p()
        assert self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.dev)) == 0  # the machine's one GPU
        limit = ctypes.c_uint()
        assert self.lib.nvmlDeviceGetEnforcedPowerLimit(self.dev, ctypes.byref(limit)) == 0
        self.limit_w = limit.value / 1000

    def instant_w(self):
        f = self._Field(fieldId=186)
        if self.lib.nvmlDeviceGetFieldValues(self.dev, 1, ctypes.byref(f)) != 0 or f.nvmlReturn != 0:
            return math.nan
        return (f.value & 0xFFFFFFFF) / 1000

    def usage_w(self):
        mw = ctypes.c_uint()
        return mw.value / 1000 if self.lib.nvmlDeviceGetPowerUsage(self.dev, ctypes.byref(mw)) == 0 else math.nan


def gemm_session(nvml):
    """A 16384^3 fp16 GEMM (~12 ms) per run, no flush; NVML sampled every 20 ms meanwhile. Each run
    waits for its GEMM (after the region), so the body's timestamps follow the GPU: a window is a
    stretch of runs 12 ms apart, and between two windows kscope waits for two counter updates
    (~0.1 s or more). The instant readings kept are those from 0.2 s after a window's first run to
    its last; the ~1 s averages of nvmlDeviceGetPowerUsage from 1 s after it."""
    n = 16384
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    calls, samples, stop = [], [], threading.Event()

    def sample():
        while not stop.is_set():
            samples.append((time.perf_counter(), nvml.instant_w(), nvml.usage_w()))
            time.sleep(0.02)

    @kscope.analyze.kernel(configs=[(n,)], runs=3, warmup_runs=3, metrics=kscope.energy_metrics(),
                           energy_window=1.5, cache_control="none", verbosity="silent",
                           derive_metric=lambda ns, joules, watts, above, n: kscope.energy_efficiency(
                               joules, flop=2 * n**3))
    def gemm(n):
        calls.append(time.perf_counter())
        with kscope.annotate("gemm"):
            a @ b
        torch.cuda.synchronize()

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        df = gemm().to_dataframe()
    finally:
        stop.set()
        sampler.join()
    recorded = calls[3:]  # after the warm-ups
    windows, start = [], 0
    for i in range(1, len(recorded) + 1):  # a gap of more than 50 ms separates two windows
        if i == len(recorded) or recorded[i] - recorded[i - 1] > 0.05:
            windows.append((recorded[start], recorded[i - 1]))
            start = i
    instant = [s[1] for s in samples if any(w0 + 0.2 <= s[0] <= w1 for w0, w1 in windows) and not math.isnan(s[1])]
    usage = [s[2] for s in samples if any(w0 + 1.0 <= s[0] <= w1 for w0, w1 in windows) and not math.isnan(s[2])]
    return {r.Metric: r for r in df.itertuples()}, instant, usage, windows


def main():
    nvml = Nvml()
    rows, ok = [], True

    def check(name, value, low, high, text):
        nonlocal ok
        passed = low <= value <= high and not math.isnan(value)
        ok &= passed
        rows.append((name, text, f"[{low:.3g}, {high:.3g}]", "PASS" if passed else "FAIL"))

    t0 = time.perf_counter()
    first = spin_session()
    t1 = time.perf_counter()
    second = spin_session()
    t2 = time.perf_counter()
    gemm, instant, usage, windows = gemm_session(nvml)
    t3 = time.perf_counter()

    e = lambda s, us, k: s[(us, k, kscope.energy_metrics()[0])].AvgValue  # noqa: E731
    above = lambda s, us, k: s[(us, k, kscope.energy_metrics()[2])].AvgValue  # noqa: E731
    print("spin sessions (per run):")
    print(f"{'us':>6} {'k':>3} {'J/run (1st)':>12} {'J/run (2nd)':>12} {'W (1st)':>8} {'above idle J':>13} "
          f"{'RSD% (1st)':>10} {'windows':>7}")
    for us, k in SPIN_CONFIGS:
        r = first[(us, k, kscope.energy_metrics()[0])]
        print(f"{us:>6} {k:>3} {r.AvgValue:12.4f} {e(second, us, k):12.4f} "
              f"{first[(us, k, kscope.energy_metrics()[1])].AvgValue:8.1f} {above(first, us, k):13.4f} "
              f"{r.RelativeStdDevPct:10.2f} {r.NumRuns:>7}")
    idle = [s[(1000, 1, kscope.energy_metrics()[0])].IdlePowerW for s in (first, second)]
    print(f"idle power: {idle[0]:.1f} W (1st session), {idle[1]:.1f} W (2nd); board limit {nvml.limit_w:.0f} W")

    for k in (2, 4):
        ratio = e(first, 1000, k) / e(first, 1000, 1)
        check(f"linear: {k} spins / 1 spin", ratio / k, 1 - LINEAR_PCT / 100, 1 + LINEAR_PCT / 100,
              f"{ratio:.3f}x (ideal {k}x)")
    ratio = above(first, 2000, 1) / above(first, 1000, 1)
    check("2 ms spin / 1 ms spin, above idle", ratio / 2, 1 - DOUBLE_PCT / 100, 1 + DOUBLE_PCT / 100,
          f"{ratio:.3f}x (ideal 2x)")
    ratio = e(first, 2000, 1) / e(first, 1000, 2)
    check("one 2 ms spin / two 1 ms spins", ratio, 1 - DOUBLE_PCT / 100, 1 + DOUBLE_PCT / 100, f"{ratio:.3f}x")
    for us, k in SPIN_CONFIGS:
        for name, get in (("J/run", e), ("above idle", above)):
            ratio = get(second, us, k) / get(first, us, k)
            check(f"sessions agree: {us} us x{k} {name}", ratio, 1 - SESSIONS_PCT / 100, 1 + SESSIONS_PCT / 100,
                  f"2nd/1st {ratio:.4f}")

    power = gemm[kscope.energy_metrics()[1]]
    print(f"\nGEMM 16384^3 fp16: {gemm[kscope.energy_metrics()[0]].AvgValue:.3f} J/run, {power.AvgValue:.1f} W "
          f"(RSD {power.RelativeStdDevPct:.2f}%, {power.NumRuns} windows: "
          f"{', '.join(f'{w1 - w0:.2f} s' for w0, w1 in windows)}), "
          f"{gemm['flop_per_joule'].AvgValue / 1e12:.3f} TFLOP/J, "
          f"{gemm[next(iter(gemm))].AvgValue / 1e6:.2f} ms per GEMM")  # the duration comes first
    reference = instant or usage
    nvml_w = sum(reference) / len(reference) if reference else math.nan
    print(f"NVML during the windows: POWER_INSTANT mean {(sum(instant) / len(instant)) if instant else math.nan:.1f} W "
          f"({len(instant)} samples), nvmlDeviceGetPowerUsage mean "
          f"{(sum(usage) / len(usage)) if usage else math.nan:.1f} W ({len(usage)} samples)")
    check("GEMM power / NVML's readings", power.AvgValue / nvml_w, 1 - POWER_PCT / 100, 1 + POWER_PCT / 100,
          f"{power.AvgValue:.1f} W / {nvml_w:.1f} W ({'instant' if instant else 'usage'} field)")
    check("GEMM power / board limit", power.AvgValue / nvml.limit_w, 0.0, 1 + LIMIT_SLACK_PCT / 100,
          f"{power.AvgValue:.1f} W / {nvml.limit_w:.0f} W")

    print(f"\n{'check':<40} {'measured':<40} {'bound':<16} verdict")
    for row in rows:
        print(f"{row[0]:<40} {row[1]:<40} {row[2]:<16} {row[3]}")
    print(f"sessions {t1 - t0:.1f} s + {t2 - t1:.1f} s, GEMM {t3 - t2:.1f} s")
    failed = sum(r[3] == "FAIL" for r in rows)
    print(f"energy check: {len(rows) - failed}/{len(rows)} PASS" + ("" if ok else f", {failed} FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
