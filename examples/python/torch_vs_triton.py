"""torch vs Triton on a matmul sweep, in a process where torch already ran CUDA work.

- derive_metric turns each run's kernel duration into TFLOP/s;
- normalize_against="torch" divides the Triton kernel's values by torch's at every size;
- @kscope.analyze.plot writes the TFLOP/s bars as a PNG;
- the same decorated function is profiled twice in this one process.

Run: python examples/python/torch_vs_triton.py [output directory]
"""

import os
import sys

import torch

torch.ones(1, device="cuda").sum().item()  # CUDA is initialised before kscope is imported

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import kscope  # noqa: E402

SIZES = [1024, 2048, 4096, 8192]


@triton.jit
def _matmul_kernel(a, b, c, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr):
    # Tiles are visited in groups of GROUP_M rows, so neighbouring programs share B tiles in L2.
    pid = tl.program_id(0)
    tiles = tl.cdiv(n, BLOCK_N)
    group = pid // (GROUP_M * tiles)
    row = group * GROUP_M + (pid % GROUP_M)
    col = (pid % (GROUP_M * tiles)) // GROUP_M
    rm = row * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = col * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, n, BLOCK_K):
        x = tl.load(a + rm[:, None] * n + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * n + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * n + rn[None, :], acc.to(tl.float16))


def triton_matmul(a, b, out):
    n = a.shape[0]  # square, a multiple of 1024 (whole groups of whole tiles)
    grid = ((n // 128) * (n // 128),)
    _matmul_kernel[grid](a, b, out, n, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=4)


_inputs = {}


def inputs(n):
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
        torch.matmul(a, b, out=c_torch)
    with kscope.annotate("triton"):
        triton_matmul(a, b, c_triton)


def main(out_dir="."):
    os.makedirs(out_dir, exist_ok=True)
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
