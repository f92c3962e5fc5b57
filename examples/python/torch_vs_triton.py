"""torch vs Triton on a matmul sweep, in a process where torch already ran CUDA work.

- derive_metric turns each run's kernel duration into TFLOP/s;
- normalize_against="torch" divides the Triton kernel's values by torch's at every size;
- @kscope.analyze.plot writes the TFLOP/s bars as a PNG;
- the same decorated function is profiled twice in this one process.

Run: python examples/python/torch_vs_triton.py [output directory]
(With KSCOPE_SIMULATED=1, no GPU, Triton or torch: simulated kernels stand in for both.)
"""

import os
import sys

SIMULATED = os.environ.get("KSCOPE_SIMULATED") == "1"
if not SIMULATED:
    import torch

    torch.ones(1, device="cuda").sum().item()  # CUDA is initialised before kscope is imported
    from triton_matmul import triton_matmul

import kscope  # noqa: E402
from kscope.testing import workloads  # noqa: E402

SIZES = [1024, 2048, 4096, 8192]


def simulated_triton_matmul(a, b, out):
    """A simulated Triton kernel, a tenth slower than the simulated cuBLAS one at large sizes."""
    workloads.launch("_matmul_kernel", 5000.0 + 2.0 * a**3 / 450e3)


_inputs = {}


def inputs(n):
    if SIMULATED:
        return n, n, None, None
    if n not in _inputs:
        _inputs.clear()  # one size at a time on the GPU
        a, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))
        _inputs[n] = a, b, torch.empty_like(a), torch.empty_like(a)
    return _inputs[n]


def tflops(duration_ns, n):
    return 2 * n**3 / duration_ns / 1e3, "TFLOP/s"


def compare(n):
    a, b, c_torch, c_triton = inputs(n)
    with kscope.annotate("torch"):
        workloads.matmul(a, b) if SIMULATED else torch.matmul(a, b, out=c_torch)
    with kscope.annotate("triton"):
        (simulated_triton_matmul if SIMULATED else triton_matmul)(a, b, c_triton)


def main(out_dir="."):
    os.makedirs(out_dir, exist_ok=True)
    if not SIMULATED:
        a, b, c_torch, c_triton = inputs(1024)
        triton_matmul(a, b, c_triton)
        torch.testing.assert_close(c_triton, a @ b, rtol=2e-2, atol=2e-1)  # the two compute the same

    # Every size: a warm-up run (Triton compiles there), then 10 recorded runs. cuBLAS may split
    # a product into several kernels: their durations add up.
    options = dict(configs=SIZES, runs=10, derive_metric=tflops, combine_kernel_metrics=lambda x, y: x + y)
    absolute = kscope.analyze.plot(os.path.join(out_dir, "torch_vs_triton.png"), metric="tflops",
                                   plot_type="bar", annotate_points=True, show_aggregate="geomean",
                                   title="fp16 matmul, torch vs Triton")(kscope.analyze.kernel(**options)(compare))
    relative = kscope.analyze.kernel(**options, normalize_against="torch")(compare)

    first = absolute().to_dataframe()
    second = absolute().to_dataframe()  # the same function profiled again
    rel = relative().to_dataframe()

    def table(df, metric):
        return df[df["Metric"] == metric].pivot(index="n", columns="Annotation", values="AvgValue")

    print("TFLOP/s (first call):", table(first, "tflops").round(1), sep="\n")
    print("TFLOP/s (second call):", table(second, "tflops").round(1), sep="\n")
    print("Triton relative to torch (TFLOP/s ratio):", table(rel, "tflops").round(3), sep="\n")
    print("kernels:", sorted(set(first["Kernel"])))
    print("backend:", first["Backend"].iloc[0], "| cache_control:", first["CacheControl"].iloc[0],
          "| clock_control:", first["ClockControl"].iloc[0], "| GPU:", first["GPU"].iloc[0])
    return first, second, rel


if __name__ == "__main__":
    main(*sys.argv[1:])
