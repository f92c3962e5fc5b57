"""kscope.torch.install() without a GPU: on the stand-in of Inductor (torch 2.11; inductor_standin.py,
installed as torch._inductor), whose candidates launch simulated kernels. Both timing paths measure
with kscope, algorithm selection races the candidates and settles a tie by Inductor's order, the
autotune subprocess installs kscope itself, and uninstall gives Inductor its own benchmarking back.
tests/python/test_torch_gpu.py runs torch.compile(mode="max-autotune") itself on a GPU."""

import sys

import pytest

import kscope
import kscope.torch

torch = pytest.importorskip("torch")

import inductor_standin as inductor  # noqa: E402


@pytest.fixture
def torch_2_11(monkeypatch):
    """torch 2.11's Inductor, as far as kscope.torch meets it."""
    monkeypatch.setattr(torch, "__version__", inductor.VERSION)
    for name, module in inductor.modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    inductor.own_calls.clear()
    monkeypatch.setattr(inductor.config, "deterministic", False)
    yield inductor
    assert kscope.torch._active is None, "a test left kscope installed"


def choices():
    """A matmul's candidates in Inductor's order: ATen's, then templates; mm_1 ties ATen's, mm_2 cannot run."""
    return [inductor.ExternKernelCaller("extern_mm", 50000),
            inductor.TritonTemplateCaller("triton_mm_0", "BLOCK_M=64, BLOCK_N=64", 56000),
            inductor.TritonTemplateCaller("triton_mm_1", "BLOCK_M=128, BLOCK_N=64", 50000),
            inductor.TritonTemplateCaller("triton_mm_2", "BLOCK_M=256, BLOCK_N=256", 40000,
                                          fails=RuntimeError("CUDA error: invalid argument")),
            inductor.TritonTemplateCaller("triton_mm_3", "BLOCK_M=32, BLOCK_N=32", 90000)]


def test_install_refuses_a_torch_other_than_2_11():
    with pytest.raises(kscope.ConfigError, match=rf"^kscope.torch.install\(\) works with torch 2.11 only \(it hooks "
                                                 rf"Inductor's benchmarker, algorithm selection and autotune "
                                                 rf"subprocess as they are there\); this is torch "
                                                 rf"{torch.__version__}: install torch 2.11"):
        kscope.torch.install()
    assert kscope.torch._active is None


def test_both_timing_paths_measure_with_kscope_until_uninstalled(sim, torch_2_11):
    def mm(*args, out=None):
        sim.launch("mm", 40000)

    bench = inductor.benchmarker
    with kscope.torch.install() as installed:
        # Benchmarker.benchmark: the benchmarker torch registers for 'cuda' (ATen and subgraph choices).
        assert bench.benchmark(mm, (inductor.Tensor(),), {}) == pytest.approx(0.04)
        # benchmark_gpu: Triton templates and Inductor's own kernels, with Inductor's keyword arguments.
        assert bench.benchmark_gpu(lambda: mm(), rep=40) == pytest.approx(0.04)
        assert bench.benchmark_gpu(lambda: mm(), quantiles=(0.5, 0.2, 0.8)) == pytest.approx(0.04)
        every = bench.benchmark_gpu(lambda: mm(), return_mode="all")
        assert isinstance(every, list) and set(every) == {0.04}
        assert inductor.own_calls == []
        with pytest.raises(kscope.ConfigError, match="kscope.torch is installed already in this process"):
            kscope.torch.install()
        assert "installed" in repr(installed)
    assert bench.benchmark(mm, (inductor.Tensor(),), {}) == 1.0 and bench.benchmark_gpu(lambda: mm()) == 1.0
    assert len(inductor.own_calls) == 2 and inductor._BENCHMARK_DISPATCH["cuda"] is inductor._default_cuda_bench
    assert "benchmark_gpu" not in vars(bench)
    installed.uninstall()  # a second uninstall does nothing


def test_a_step_that_launches_no_gpu_work_takes_no_time(sim, torch_2_11):
    # The scheduler's fusion check subtracts the time of cloning a kernel's mutated inputs: with none
    # to clone, the callable launches nothing, and Triton's timing reads ~0 for it, not an error.
    with kscope.torch.install():
        assert inductor.benchmarker.benchmark_gpu(lambda: None, rep=40) == 0.0
        assert inductor.benchmarker.benchmark_gpu(lambda: None, quantiles=(0.5, 0.2, 0.8)) == 0.0
        assert inductor.benchmarker.benchmark_gpu(lambda: None, return_mode="all") == [0.0]
    with pytest.raises(kscope.ConfigError, match="launched no GPU work"):
        kscope.triton.do_bench(lambda: None)  # a user's own do_bench of nothing is a mistake


def test_deterministic_mode_still_bans_unvetted_benchmarking(sim, torch_2_11):
    torch_2_11.config.deterministic = True
    with kscope.torch.install():
        with pytest.raises(RuntimeError, match="In the deterministic mode of Inductor"):
            inductor.benchmarker.benchmark_gpu(lambda: sim.launch("k", 1000))
        assert inductor.benchmarker.benchmark_gpu(lambda: sim.launch("k", 1000), is_vetted_benchmarking=True) > 0


def test_algorithm_selection_races_the_candidates_and_settles_a_tie_by_inductors_order(torch_2_11):
    picks, winners = set(), set()
    for seed in range(6):
        with kscope.testing.simulated_backend() as gpu, kscope.torch.install(runs=40) as installed:
            gpu.set_noise(seed=seed, jitter_pct=1)
            candidates = choices()
            chosen, timings = inductor.AlgorithmSelectorCache().select(candidates, inductor.AutotuneArgs())
            picks.add(chosen.name)
            assert timings[candidates[3]] == float("inf")  # Inductor's own handling of a candidate that fails
            assert timings[chosen] < min(t for c, t in timings.items() if c is not chosen)
            assert timings[candidates[4]] == pytest.approx(0.09, rel=0.05)
            [decision] = installed.decisions
            assert decision.rule == "among the winner and the configs tied with it, the one listed first"
            assert decision.candidates[1] == "triton_mm_0 (BLOCK_M=64, BLOCK_N=64)"
            assert decision.chosen == "extern_mm" and len(decision.race) == 4
            assert set(decision.ties) <= {"extern_mm", "triton_mm_1 (BLOCK_M=128, BLOCK_N=64)"}
            winners.add(decision.race.winner[0])
            assert inductor.own_calls == []
    assert picks == {"extern_mm"}  # tied with triton_mm_1 in every process: Inductor's first, every time
    assert winners == {0, 2}  # the race's own winner among the two is chance


def test_candidates_not_timed_through_the_benchmarker_are_timed_one_at_a_time(sim, torch_2_11):
    with kscope.torch.install() as installed:
        candidates = choices()
        chosen, timings = inductor.AlgorithmSelectorCache().select(candidates, inductor.AutotuneArgs(numel=0))
    # ATen's candidate answers 0.0 for an empty output without timing anything: the race cannot have it.
    assert chosen is candidates[0] and timings[candidates[0]] == 0.0
    assert timings[candidates[1]] == pytest.approx(0.056)
    [decision] = installed.decisions
    assert decision.race is None and decision.rule == "the minimum"
    assert decision.note == "extern_mm not timed through Inductor's benchmarker once"


def test_the_autotune_subprocess_installs_kscope_itself(sim, torch_2_11):
    candidates = choices()[1:3]
    pool = inductor.TuningProcessPool()
    try:
        with kscope.torch.install():
            timings = pool.benchmark(candidates)
        assert [timings[c] for c in candidates] == pytest.approx([0.056, 0.05])  # the subprocess's kscope
        assert pool.benchmark(candidates)[candidates[0]] == pytest.approx(0.056)  # installed there for good
    finally:
        pool.shutdown()
    fresh = inductor.TuningProcessPool()
    try:
        assert fresh.benchmark(candidates)[candidates[0]] == 1.0  # uninstalled here: Inductor's own there
    finally:
        fresh.shutdown()


def test_install_names_the_options_it_takes(torch_2_11):
    with pytest.raises(kscope.ConfigError, match=r"^kscope.torch.install takes race and kscope.tune's runs, "
                                                 r"warmup_runs, .*; not verbose$"):
        kscope.torch.install(verbose=True)
    with pytest.raises(kscope.ConfigError, match="^install's race must be True or False, not 'yes'"):
        kscope.torch.install(race="yes")


def test_install_refuses_an_inductor_without_the_hooks_it_needs(torch_2_11, monkeypatch):
    monkeypatch.delattr(inductor.TuningProcess, "put")
    with pytest.raises(kscope.ConfigError, match=r"^this torch 2.11.0\+cu130 has no torch._inductor.autotune_process."
                                                 r"TuningProcess.put, which kscope.torch hooks"):
        kscope.torch.install()
    assert "benchmark_gpu" not in vars(inductor.benchmarker)  # nothing was patched
