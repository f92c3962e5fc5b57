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
