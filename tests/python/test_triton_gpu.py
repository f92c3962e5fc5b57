"""kscope.triton with Triton itself on a GPU: do_bench as triton.autotune's do_bench (Triton 3.6 calls
it with quantiles=(0.5, 0.2, 0.8)), and race() choosing among a real autotuner's configs and
installing the winner so that the next call runs it without benchmarking."""

import pytest

import kscope
import kscope.triton

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

N = 1 << 24
BLOCKS = (128, 256, 512, 1024, 2048, 4096)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def grid(meta):
    return (triton.cdiv(N, meta["BLOCK"]),)


def tensors():
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    return x, y, torch.empty_like(x)


def autotuned(do_bench=None):
    configs = [triton.Config({"BLOCK": b}, num_warps=4) for b in BLOCKS]
    return triton.autotune(configs=configs, key=["n"], do_bench=do_bench)(add_kernel)


def test_do_bench_times_a_kernel_as_triton_returns_it():
    x, y, out = tensors()

    def call():
        add_kernel[(triton.cdiv(N, 1024),)](x, y, out, N, BLOCK=1024)

    ms = kscope.triton.do_bench(call)
    three = kscope.triton.do_bench(call, quantiles=(0.5, 0.2, 0.8))
    # 3 x 64 MiB through DRAM: at least the bytes over the H200's 4.8 TB/s, and not 10x more.
    floor_ms = 3 * N * 4 / 4.8e12 * 1e3
    assert floor_ms < ms < 10 * floor_ms
    assert isinstance(three, list) and len(three) == 3 and three[1] <= three[0] <= three[2]
    torch.testing.assert_close(out, x + y)


def test_triton_autotune_takes_kscopes_do_bench():
    x, y, out = tensors()
    kernel = autotuned(do_bench=kscope.triton.do_bench)
    kernel[grid](x, y, out, N)
    torch.testing.assert_close(out, x + y)
    timings = kernel.configs_timings
    assert len(timings) == len(BLOCKS)
    assert all(isinstance(t, list) and len(t) == 3 and t[0] > 0 for t in timings.values())
    assert kernel.best_config in timings


def test_race_chooses_among_a_real_autotuners_configs():
    x, y, out = tensors()
    benchmarked = []
    kernel = autotuned(do_bench=lambda fn, quantiles=None: benchmarked.append(fn) or [1.0, 1.0, 1.0])
    race = kscope.triton.race(kernel, grid, (x, y, out, N), runs=40)
    assert len(race) == len(BLOCKS)
    assert race.winner[0] in kernel.configs
    kernel[grid](x, y, out, N)  # the winner, from the autotuner's cache
    assert benchmarked == []
    torch.testing.assert_close(out, x + y)


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


MATMUL_CONFIGS = [(64, 64, 32, 3), (128, 64, 32, 4), (64, 128, 32, 4), (128, 128, 64, 3)]
TOO_BIG = (256, 256, 128, 8)  # 8 stages of 256x128 and 128x256 fp16 tiles: far beyond a GPU's shared memory


def matmul_configs(*shapes):
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=4, num_stages=s)
            for m, n, k, s in shapes]


def matmul_inputs(size=2048):
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    return a, b, torch.empty(size, size, device="cuda", dtype=torch.float16), size


def matmul_grid(size):
    return lambda meta: (size // meta["BLOCK_M"], size // meta["BLOCK_N"])


def test_triton_autotune_with_kscopes_do_bench_skips_a_config_too_big_for_the_gpu():
    a, b, c, size = matmul_inputs()
    configs = matmul_configs(*MATMUL_CONFIGS, TOO_BIG)
    kernel = triton.autotune(configs=configs, key=["M", "N", "K"], do_bench=kscope.triton.do_bench)(matmul_kernel)
    kernel[matmul_grid(size)](a, b, c, size, size, size)  # Triton's OutOfResources reaches the autotuner itself
    assert kernel.configs_timings[configs[-1]] == [float("inf")] * 3
    assert kernel.best_config in configs[:-1]
    torch.testing.assert_close(c, a @ b, rtol=1e-2, atol=1e-1)


def test_kscope_autotune_races_on_the_first_call_and_a_later_process_reads_its_choice(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))  # Triton's cache folder, where the choice is kept
    a, b, c, size = matmul_inputs()
    configs = matmul_configs(*MATMUL_CONFIGS, TOO_BIG)
    kernel = kscope.triton.autotune(configs=configs, key=["M", "N", "K"], runs=40)(matmul_kernel)
    assert isinstance(kernel, triton.runtime.Autotuner)
    kernel[matmul_grid(size)](a, b, c, size, size, size)
    torch.testing.assert_close(c, a @ b, rtol=1e-2, atol=1e-1)
    [choice] = kernel.choices.values()
    assert choice.config in configs[:-1] and len(choice.race) == len(MATMUL_CONFIGS)  # the big one left out
    assert not choice.from_cache and choice.path.startswith(str(tmp_path)) and kernel.bench_time > 0
    # A later process makes the kernel again: the choice is read back, nothing is raced.
    again = kscope.triton.autotune(configs=matmul_configs(*MATMUL_CONFIGS, TOO_BIG), key=["M", "N", "K"],
                                   runs=40)(matmul_kernel)
    c.zero_()
    again[matmul_grid(size)](a, b, c, size, size, size)
    [read] = again.choices.values()
    assert read.from_cache and read.race is None and str(read.config) == str(choice.config)
    torch.testing.assert_close(c, a @ b, rtol=1e-2, atol=1e-1)
