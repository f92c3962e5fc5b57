"""kscope's roofline without counters against the counters themselves (run by scripts/gpu_check.sh).

For four kernels, a Triton copy, a Triton FMA loop, a cuBLAS fp16 GEMM (torch.matmul on half
tensors) and flash attention (torch's scaled_dot_product_attention, flash backend), it measures:

  kscope, no counters: cupti durations + each kernel's declared work (work=): DRAMRoofPct,
      ComputeRoofPct (at the clocks observed around each run) and Bound;
  the counters backend: dram__throughput.avg.pct_of_peak_sustained_elapsed, the kernel's pipe
      (sm__inst_executed_pipe_fma for the FMA loop, sm__pipe_tensor_op_hmma_cycles_active for the
      tensor kernels: HMMA and HGMMA), speed_of_light()'s Bottleneck, and what the hardware counted
      (DRAM bytes read and written, FFMA instructions, fp16 tensor ops) to explain a disagreement;

and prints one table: kernel -> kscope % of the roofs -> counters % -> verdicts -> within 10 points?
Exit status: 0 every percentage within 10 points and every verdict agrees, 1 some do not (the
table says which; docs/roofline.md explains the physical reasons), 2 it
could not measure (no GPU, no torch/Triton, counters refused).
Runs in about 30-60 s on an H200 (most of it torch's import, Triton's compilation and CUPTI's setup).
"""

from __future__ import annotations

import math
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable

TOLERANCE_POINTS = 10.0
ROOFLINE_RUNS = 10
COUNTER_RUNS = 3
DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
FMA_PIPE = "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed"
TENSOR_PIPE = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"
# The SM clock the kernel ran at, from its own cycles (NVML's reading between runs cannot see a clock
# that power limits lower mid-kernel).
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"
COUNTED = ["dram__bytes_read.sum", "dram__bytes_write.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
           "sm__ops_path_tensor_src_fp16.sum", SM_CLOCK]
# speed_of_light() needs sm__throughput and gpu__compute_memory_throughput; gpu__time_duration.sum
# is the counters' duration. 11 replay passes on GH100 in all.
METRICS = ["gpu__time_duration.sum", DRAM, "sm__throughput.avg.pct_of_peak_sustained_elapsed",
           "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", FMA_PIPE, TENSOR_PIPE, *COUNTED]
VERDICTS = {"memory-bound": "memory", "compute-bound": "compute", "latency-bound": "latency"}

try:
    import triton
    import triton.language as tl
except ImportError:  # the CPU tests load this file for its table logic only
    triton = None

if triton is not None:

    @triton.jit
    def copy_kernel(src, dst, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + offsets, tl.load(src + offsets))

    @triton.jit
    def fma_kernel(src, dst, iterations, BLOCK: tl.constexpr):
        # Four independent FMA chains per element: enough independent work per thread to keep the
        # FMA pipes issuing every cycle. Each line is one fused multiply-add (Triton fuses a * x + y).
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        a = tl.load(src + offsets)
        b = a + 1.0
        c = a + 2.0
        d = a + 3.0
        for _ in range(iterations):
            a = a * 0.999 + 0.5
            b = b * 0.999 + 0.5
            c = c * 0.999 + 0.5
            d = d * 0.999 + 0.5
        tl.store(dst + offsets, a + b + c + d)


@dataclass
class Kernel:
    name: str
    launch: Callable[[], Any]  # one launch of the kernel, inputs made beforehand
    work: Any                  # its kscope.Work
    pipe: str                  # the counter that matches its compute roof


def cuda_kernels() -> list[Kernel]:
    """The four kernels on the current GPU, each launched once (Triton compiles, cuBLAS picks)."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention

    import kscope

    torch.manual_seed(0)
    block = 1024
    n_copy = 1 << 28                       # 1 GiB in, 1 GiB out: far past the 60 MB L2
    src, dst = torch.rand(n_copy, device="cuda"), torch.empty(n_copy, device="cuda")
    n_fma, iterations = 1 << 24, 1024      # 137 GFLOP in 64 MiB of traffic
    fma_in, fma_out = torch.rand(n_fma, device="cuda"), torch.empty(n_fma, device="cuda")
    n = 8192
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    batch, heads, seq, dim = 2, 16, 4096, 128
    q, k, v = (torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.float16) for _ in range(3))

    def attention() -> None:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            scaled_dot_product_attention(q, k, v)

    kernels = [
        Kernel("copy", lambda: copy_kernel[(n_copy // block,)](src, dst, BLOCK=block),
               kscope.Work(bytes=8 * n_copy), DRAM),
        Kernel("fma", lambda: fma_kernel[(n_fma // block,)](fma_in, fma_out, iterations, BLOCK=block),
               kscope.Work(bytes=8 * n_fma, flops=2 * 4 * n_fma * iterations, kind="fp32"), FMA_PIPE),
        Kernel("gemm_fp16", lambda: torch.matmul(a, b, out=c),
               kscope.Work(bytes=3 * n * n * 2, flops=2 * n**3, kind="fp16", tensor_cores=True), TENSOR_PIPE),
        # Q K^T and P V: 2 x 2 seq^2 dim per head; Q, K, V read and O written once.
        Kernel("flash_attention", attention,
               kscope.Work(bytes=4 * batch * heads * seq * dim * 2, flops=4 * batch * heads * seq**2 * dim,
                           kind="fp16", tensor_cores=True), TENSOR_PIPE),
    ]
    for kernel in kernels:
        kernel.launch()
    torch.cuda.synchronize()
    return kernels


def profile(kernel: Kernel, runs: int, **options: Any) -> Any:
    """One kscope call measuring the kernel alone in an annotation named after it."""
    import kscope

    @kscope.analyze.kernel(runs=runs, warmup_runs=1, verbosity=kscope.VerbosityLevel.SILENT, **options)
    def measured() -> None:
        with kscope.annotate(kernel.name):
            kernel.launch()

    return measured()


def roofline_row(results: Any) -> dict[str, Any]:
    """The duration row's roofline columns (one annotation, one config)."""
    row = results.to_dataframe().iloc[0]
    keys = ["AvgValue", "Median", "DRAMRoofPct", "ComputeRoofPct", "DRAMRoofPct_CI95_Lower", "DRAMRoofPct_CI95_Upper",
            "ComputeRoofPct_CI95_Lower", "ComputeRoofPct_CI95_Upper", "AchievedGBps", "AchievedTFLOPs",
            "ComputeRoofTFLOPs", "DRAMRoofGBps", "ObservedSMClockMHz", "Bound", "Kernel", "WorkBytes", "WorkFLOPs"]
    return {k: row[k] for k in keys}


def counters_row(summary: Any, sol: Any) -> dict[str, Any]:
    """Each metric's median, and speed_of_light()'s Bottleneck and percentages, by name."""
    out = {m: float(v) for m, v in zip(summary["Metric"], summary["Median"])}
    first = sol.iloc[0]
    out["Bottleneck"] = first["Bottleneck"]
    out["SOLCompute"] = float(first["ComputeThroughputPct"])
    out["SOLMemory"] = float(first["MemoryThroughputPct"])
    out["ObservedSMClockMHz"] = float(summary["ObservedSMClockMHz"].iloc[0])
    return out


def measure(kernel: Kernel) -> tuple[dict[str, Any], dict[str, Any]]:
    """kscope's roofline (cupti) and the counters of one kernel. A kernel that launches several
    kernels per call is measured as one region: durations summed, counters over the range."""
    import kscope

    def both(several: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        combine = {"combine_kernel_metrics": lambda x, y: x + y} if several else {}
        roof = profile(kernel, ROOFLINE_RUNS, backend="cupti", work=lambda: kernel.work, **combine)
        counted = profile(kernel, COUNTER_RUNS, backend="counters", metrics=METRICS,
                          **({"replay_mode": "range"} if several else {}))
        return roofline_row(roof), counters_row(counted.to_dataframe(), counted.speed_of_light())

    try:
        return both(False)
    except kscope.SweepError as e:
        if not isinstance(e.__cause__, kscope.AnnotationError):
            raise
        print(f"[note] {kernel.name}: {e.__cause__}; measured again as one region", file=sys.stderr)
        return both(True)


def compare(kernel: str, pipe: str, ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """One line of the table: the two percentages each way, their differences and the verdicts."""
    dram_delta = ours["DRAMRoofPct"] - theirs[DRAM]
    compute_delta = ours["ComputeRoofPct"] - theirs[pipe] if pipe != DRAM else math.nan
    verdict = VERDICTS.get(theirs["Bottleneck"], theirs["Bottleneck"])
    within = abs(dram_delta) <= TOLERANCE_POINTS and (math.isnan(compute_delta) or
                                                       abs(compute_delta) <= TOLERANCE_POINTS)
    return {"kernel": kernel, "ours_dram": ours["DRAMRoofPct"], "theirs_dram": theirs[DRAM], "dram_delta": dram_delta,
            "ours_compute": ours["ComputeRoofPct"], "theirs_compute": theirs[pipe] if pipe != DRAM else math.nan,
            "compute_delta": compute_delta, "pipe": pipe.split(".")[0], "bound": ours["Bound"], "sol": verdict,
            "within": within, "agree": ours["Bound"] == verdict}


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'kernel':<16} {'kscope DRAM%':>12} {'ctr DRAM%':>10} {'diff':>6}  {'kscope comp%':>12} "
            f"{'ctr pipe%':>10} {'diff':>6}  {'kscope Bound':<12} {'SOL':<9} {'<=10 pts?':<9} verdicts")
    lines = [head]
    for r in rows:
        pipe = "n/a" if math.isnan(r["theirs_compute"]) else f"{r['theirs_compute']:10.1f}"
        delta = "" if math.isnan(r["compute_delta"]) else f"{r['compute_delta']:+6.1f}"
        lines.append(f"{r['kernel']:<16} {r['ours_dram']:12.1f} {r['theirs_dram']:10.1f} {r['dram_delta']:+6.1f}  "
                     f"{r['ours_compute']:12.1f} {pipe:>10} {delta:>6}  {str(r['bound']):<12} {str(r['sol']):<9} "
                     f"{'yes' if r['within'] else 'NO':<9} {'agree' if r['agree'] else 'DIFFER'}")
    return "\n".join(lines)


def details(kernel: Kernel, ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """What each side measured besides the percentages: durations, clocks, declared against counted work."""
    bytes_counted = theirs["dram__bytes_read.sum"] + theirs["dram__bytes_write.sum"]
    flops_counted = (2 * theirs["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] if kernel.pipe == FMA_PIPE
                     else theirs["sm__ops_path_tensor_src_fp16.sum"] if kernel.pipe == TENSOR_PIPE else math.nan)
    return (f"  {kernel.name}: {ours['Kernel']}\n"
            f"    duration: cupti median {ours['Median'] / 1e3:.1f} us, counters gpu__time_duration.sum median "
            f"{theirs['gpu__time_duration.sum'] / 1e3:.1f} us; SM clock observed {ours['ObservedSMClockMHz']:.0f} MHz "
            f"(cupti runs), {theirs['ObservedSMClockMHz']:.0f} MHz (counter runs), counted in the kernel "
            f"{theirs[SM_CLOCK] / 1e6:.0f} MHz: compute% at that clock "
            f"{ours['ComputeRoofPct'] * ours['ObservedSMClockMHz'] * 1e6 / theirs[SM_CLOCK]:.1f}\n"
            f"    kscope: {ours['AchievedGBps']:.0f} GB/s of {ours['DRAMRoofGBps']:.0f}, {ours['AchievedTFLOPs']:.2f} "
            f"TFLOP/s of {ours['ComputeRoofTFLOPs']:.1f}; DRAM% 95% CI {ours['DRAMRoofPct_CI95_Lower']:.1f}.."
            f"{ours['DRAMRoofPct_CI95_Upper']:.1f}, compute% {ours['ComputeRoofPct_CI95_Lower']:.1f}.."
            f"{ours['ComputeRoofPct_CI95_Upper']:.1f}\n"
            f"    declared bytes {ours['WorkBytes']:.4g}, DRAM bytes counted {bytes_counted:.4g} (x"
            f"{bytes_counted / ours['WorkBytes']:.2f}); declared FLOPs {ours['WorkFLOPs']:.4g}, counted "
            f"{flops_counted:.4g} ({'FFMA x 2' if kernel.pipe == FMA_PIPE else 'fp16 tensor ops'})\n"
            f"    speed of light: compute {theirs['SOLCompute']:.1f}%, memory {theirs['SOLMemory']:.1f}% -> "
            f"{theirs['Bottleneck']}")


def device_facts() -> str:
    """What the roofs come from, read both ways kscope may read it: CUDA's device attributes
    (cuDeviceGetAttribute; CUDA 13 dropped cudaDeviceProp's clock fields) and NVML's maximum clocks
    (nvidia-smi), so a difference between the two shows."""
    import ctypes
    import subprocess

    cuda = ctypes.CDLL("libcuda.so.1")
    device = ctypes.c_int()
    cuda.cuDeviceGet(ctypes.byref(device), 0)

    def attribute(code: int) -> int:
        value = ctypes.c_int()
        return value.value if cuda.cuDeviceGetAttribute(ctypes.byref(value), code, device) == 0 else -1

    # CU_DEVICE_ATTRIBUTE_: CLOCK_RATE 13, MULTIPROCESSOR_COUNT 16, MEMORY_CLOCK_RATE 36,
    # GLOBAL_MEMORY_BUS_WIDTH 37, COMPUTE_CAPABILITY_MAJOR 75, _MINOR 76
    cc = f"{attribute(75)}.{attribute(76)}"
    smi = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm,clocks.max.mem", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    return (f"device: compute capability {cc}, {attribute(16)} SMs; CUDA attributes: SM clock {attribute(13) / 1e3:.0f} "
            f"MHz, memory clock {attribute(36) / 1e3:.0f} MHz, bus {attribute(37)} bits; nvidia-smi (NVML) max "
            f"clocks: {smi or 'unavailable'}")


def main() -> int:
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 2
    if triton is None or not torch.cuda.is_available():
        print("SKIP: " + ("Triton is not installed" if triton is None else "no CUDA device"))
        return 2
    import kscope

    kernels = cuda_kernels()
    rows, notes = [], []
    for kernel in kernels:
        try:
            ours, theirs = measure(kernel)
        except kscope.ProfilerException as e:
            print(f"FAIL: {kernel.name} could not be measured: {e}")
            return 2
        rows.append(compare(kernel.name, kernel.pipe, ours, theirs))
        notes.append(details(kernel, ours, theirs))
    print(table(rows))
    print("\n".join(notes))
    print(device_facts())
    print("kscope's roofs (ProfileResults.roofs() of the gemm's cupti run):")
    print(profile(kernels[2], 3, backend="cupti", work=lambda: kernels[2].work).roofs().to_string(index=False))
    failed = [r["kernel"] for r in rows if not (r["within"] and r["agree"])]
    summary = (f"roofline vs counters: {len(rows) - len(failed)} of {len(rows)} kernels within "
               f"{TOLERANCE_POINTS:g} points with the same verdict")
    print(summary + (f"; not: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # exit status 1 means a measured disagreement: anything else is 2
        traceback.print_exc()
        print("FAIL: the check stopped on the exception above")
        sys.exit(2)
