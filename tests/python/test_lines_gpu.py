"""kscope.analyze.lines on Triton kernels on a GPU: a matmul and a fused softmax, whose samples must
land on this file's lines (>= 95%, the inlined tl.* helpers on the calling line, their chain in
InlinedFrom), with the source text of each line, and the listing, HTML and plot of real samples."""

import os

import pytest

import kscope

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

THIS_FILE = os.path.realpath(__file__)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


SASS_COUNTED = []  # the kernels whose profile in this process counted their instructions


def on_this_file(results, kernel_part):
    df = results.to_dataframe()
    mine = df[df.Kernel.str.contains(kernel_part)]
    assert not mine.empty, str(results)
    share = mine[mine.File.map(lambda f: isinstance(f, str) and os.path.realpath(f) == THIS_FILE)].Samples.sum()
    fraction = share / mine.Samples.sum()
    # The figures scripts/lines_check.sh puts in its step table (the docs quote them).
    counted = mine.InstExecuted.notna().any()
    print(f"\nattribution {kernel_part}: {fraction:.1%} of {int(mine.Samples.sum())} samples on this file; "
          f"SASS metrics {'measured' if counted else 'not measured'}")
    for note in results.notes:
        print(f"note {kernel_part}: {note}")
    # The SASS metrics are configured once per process and GPU: a later profile counts as the first did.
    assert counted or not SASS_COUNTED, \
        f"{SASS_COUNTED} counted in this process, {kernel_part} not; notes: {results.notes}"
    if counted:
        SASS_COUNTED.append(kernel_part)
    return fraction, mine


def test_matmul_samples_on_the_users_lines():
    n = 2048
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)

    @kscope.analyze.lines(runs=5, verbosity=0)
    def matmul():
        with kscope.annotate("matmul"):
            matmul_kernel[(n // 128, n // 128)](a, b, c, n, n, n, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)

    results = matmul()
    fraction, mine = on_this_file(results, "matmul_kernel")
    print(results.listing(8))
    assert fraction >= 0.95, f"{fraction:.1%} of the samples on {THIS_FILE}\n{results}\nnotes: {results.notes}"
    assert mine.LineText.str.len().max() > 0  # the lines' text, read from this file
    assert (mine.Line.dropna() > 0).all()


def test_fused_softmax_samples_on_the_users_lines_with_inlined_helpers_on_the_call():
    rows, cols = 8192, 4096
    x = torch.randn(rows, cols, device="cuda")
    out = torch.empty_like(x)

    @kscope.analyze.lines(runs=5, verbosity=0)
    def softmax():
        with kscope.annotate("softmax"):
            softmax_kernel[(rows,)](out, x, cols, BLOCK=4096)

    results = softmax()
    fraction, mine = on_this_file(results, "softmax_kernel")
    print(results.listing(8))
    assert fraction >= 0.95, f"{fraction:.1%} of the samples on {THIS_FILE}\n{results}\nnotes: {results.notes}"
    # tl.max and tl.sum are Triton helpers inlined into the kernel: their samples sit on the calling
    # line, their chain in InlinedFrom.
    reductions = mine[mine.LineText.str.contains("tl.max|tl.sum", regex=True)]
    assert not reductions.empty, str(results)
    assert reductions.InlinedFrom.str.len().max() > 0, reductions.to_string()
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
    assert "softmax_kernel" in results._repr_html_()
    assert len(results.plot(top=5).axes) >= 1
