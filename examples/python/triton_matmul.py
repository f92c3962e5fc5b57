"""The Triton matmul torch_vs_triton.py measures (imported on a GPU only): fp16, square, n a multiple
of 1024."""

import triton
import triton.language as tl


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
