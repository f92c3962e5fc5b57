"""kscope.triton without Triton: do_bench's arguments and return values (Triton 3.6's), and race()
on an autotuner that does what Triton 3.6's Autotuner does with them (its run and _bench, below), on
the simulated backend. tests/python/test_triton_gpu.py runs both with Triton itself on a GPU."""

import functools
import sys

import pytest

import kscope
import kscope.triton

import triton_standin as standin
from triton_standin import CompileTimeAssertionFailure, Config, OutOfResources, PTXASError

# Config BLOCK launches kernel "k<BLOCK>" of this many ns: 64 is the fastest.
KERNEL_NS = {16: 90000, 32: 60000, 64: 40000, 128: 41500, 256: 75000}
# Configs that cannot run here, raising what Triton raises for each.
FAILING = {512: OutOfResources, 1024: CompileTimeAssertionFailure, 2048: PTXASError}


def JitFunction(sim, fails=None):  # noqa: N802 - the stand-in's class, with this test's kernel
    return standin.JITFunction(sim, KERNEL_NS, ["x", "n"], fails=fails)


def Autotuner(fn, arg_names, configs, key, do_bench=None, **options):  # noqa: N802
    """Triton 3.6's Autotuner (the stand-in), with hooks that record their calls."""
    tuner = standin.Autotuner(fn, arg_names, configs, key, None, None, do_bench=do_bench, **options)
    tuner.hooks = []
    tuner.pre_hook = lambda kwargs, reset_only=False: tuner.hooks.append(("pre", reset_only))
    tuner.post_hook = lambda kwargs, exception: tuner.hooks.append(("post", exception))
    return tuner


def blocks(*sizes):
    return [Config({"BLOCK": b}) for b in sizes]


class Tensor:
    dtype = "float16"


def test_triton_is_not_imported():
    assert "triton" not in sys.modules  # kscope.triton imports Triton only where it needs it


def test_do_bench_returns_what_tritons_returns_in_milliseconds(sim):
    def fn():
        sim.launch("k", 40000)

    assert kscope.triton.do_bench(fn, rep=2) == pytest.approx(0.04)  # mean
    assert kscope.triton.do_bench(fn, rep=2, return_mode="median") == pytest.approx(0.04)
    every = kscope.triton.do_bench(fn, warmup=1, rep=2, return_mode="all")
    assert isinstance(every, list) and len(every) >= 1 and set(every) == {0.04}
    three = kscope.triton.do_bench(fn, rep=2, quantiles=(0.5, 0.2, 0.8))
    assert three == pytest.approx([0.04, 0.04, 0.04])
    assert isinstance(kscope.triton.do_bench(fn, rep=2, quantiles=[0.5]), float)
    with pytest.raises(AssertionError, match="return_mode must be one of 'min', 'max', 'mean', 'median', 'all'"):
        kscope.triton.do_bench(fn, return_mode="p50")
    with pytest.raises(kscope.ConfigError, match="do_bench's rep is a time in milliseconds, finite and >= 0, not -1"):
        kscope.triton.do_bench(fn, rep=-1)


def test_do_bench_counts_runs_from_rep_and_clears_grads(sim):
    class Param:
        grad = "stale"

    p = Param()
    calls = []

    def fn():
        calls.append(p.grad)
        sim.launch("k", 1000)

    one = kscope.triton.do_bench(fn, warmup=0, rep=0, grad_to_none=[p], return_mode="all")
    assert len(one) == 1  # at least one run, as Triton
    assert calls and set(calls) == {None}
    calls.clear()
    many = kscope.triton.do_bench(fn, warmup=0, rep=20, return_mode="all")
    assert len(many) > 5  # rep milliseconds of runs, at the pace the estimate found


def test_do_bench_summarizes_as_triton_does():
    summarize = kscope.triton._summarize
    times = [4.0, 1.0, 3.0, 2.0]
    assert summarize(times, (0.5, 0.2, 0.8), "mean") == pytest.approx([2.5, 1.6, 3.4])  # point = q * (n - 1)
    assert summarize(times, [0.5], "min") == 2.5  # one quantile: a float; return_mode is not used
    assert [summarize(times, None, m) for m in ("min", "max", "mean", "median")] == [1.0, 4.0, 2.5, 2.5]
    assert summarize(times, None, "all") == times


def test_do_bench_refuses_bad_arguments_in_its_own_words_before_calling_fn(sim):
    calls = []

    def fn():
        calls.append(1)
        sim.launch("k", 1000)

    class Param:
        grad = None

    refused = {
        "do_bench's fn is the function to time, called with no arguments, not 3": dict(fn=3),
        r"do_bench's quantiles must lie in \[0, 1\], not 1.5 \(of \[0.5, 1.5\]\)": dict(quantiles=[0.5, 1.5]),
        r"do_bench's quantiles are a list of numbers in \[0, 1\], such as \(0.5, 0.2, 0.8\), not 0.5": dict(quantiles=0.5),
        r"do_bench's quantiles are a list .*, not '0.5'": dict(quantiles="0.5"),
        r"do_bench's quantiles are a list .*, not \[\]": dict(quantiles=[]),
        "do_bench's quantiles must lie in \\[0, 1\\], not 'a'": dict(quantiles=["a"]),
        "do_bench's rep is a time in milliseconds, finite and >= 0, not inf": dict(rep=float("inf")),
        "do_bench's warmup is a time in milliseconds, finite and >= 0, not nan": dict(warmup=float("nan")),
        "do_bench's rep is a time in milliseconds, finite and >= 0, not '100'": dict(rep="100"),
        r"do_bench's grad_to_none is a list of the tensors .* \(\[x\] for one tensor\), not <": dict(grad_to_none=Param()),
        r"do_bench's grad_to_none holds 3, whose .grad cannot be set to None \('int' object has no attribute "
        r"'grad'\): give the tensors whose gradients fn accumulates": dict(grad_to_none=[3]),
    }
    for message, arguments in refused.items():
        with pytest.raises(kscope.ConfigError, match="^" + message) as refusal:
            kscope.triton.do_bench(**{"fn": fn, **arguments})
        assert "runs" not in str(refusal.value) and "config 1/1" not in str(refusal.value)
    assert calls == []
    long = [0.5] * 100
    with pytest.raises(kscope.ConfigError, match=r"not 2 \(of \[0.5, 0.5, .*\.\.\. \(list, 503 characters\)\)$"):
        kscope.triton.do_bench(fn, quantiles=long + [2])  # the list is cut, its bad value named


def test_do_bench_refuses_a_function_that_launches_no_gpu_work(sim):
    with pytest.raises(kscope.ConfigError, match=r"^do_bench's fn launched no GPU work to time: give a function "
                                                 r"that launches the kernels, such as lambda: kernel\[grid\]") as e:
        kscope.triton.do_bench(lambda: None)
    assert "config 1/1" not in str(e.value) and "runs" not in str(e.value)


def test_do_bench_lets_fns_own_exception_through_as_itself(sim):
    calls = []

    def fn():  # compiles (the first call), then fails on its fourth run
        calls.append(1)
        if len(calls) == 4:
            raise ValueError("bad launch")
        sim.launch("k", 1000)

    with pytest.raises(ValueError, match="^bad launch$") as e:
        kscope.triton.do_bench(fn, rep=1)
    assert type(e.value) is ValueError  # not a SweepError, as from Triton's do_bench
    for raised in FAILING.values():
        with pytest.raises(raised) as e:
            kscope.triton.do_bench(functools.partial(standin.JITFunction(sim, KERNEL_NS, ["x"], fails=FAILING).run,
                                                     grid=(1,), warmup=False, BLOCK=next(b for b in FAILING
                                                                                        if FAILING[b] is raised)))
        assert type(e.value) is raised


def test_the_autotuner_chooses_the_fastest_config_with_kscopes_do_bench(sim):
    fn = JitFunction(sim, fails=FAILING)
    configs = blocks(*KERNEL_NS, *FAILING)
    tuner = Autotuner(fn, ["x", "n"], configs, ["n"], do_bench=functools.partial(kscope.triton.do_bench, rep=3))
    tuner.run(Tensor(), 1024, grid=(1,), warmup=False)  # as kernel[grid](...) calls it
    assert tuner.cache[(1024, "float16")].kwargs["BLOCK"] == 64
    timings = {c.kwargs["BLOCK"]: t for c, t in tuner.configs_timings.items()}
    assert timings[64] == pytest.approx([0.04] * 3)
    assert timings[16] == pytest.approx([0.09] * 3)
    # The configs that cannot run reach the autotuner as Triton's own exceptions, and it skips them.
    assert {b: timings[b] for b in FAILING} == {b: [float("inf")] * 3 for b in FAILING}
    assert ("pre", False) in tuner.hooks and ("post", None) in tuner.hooks
    assert any(kind == "post" and isinstance(e, OutOfResources) for kind, e in tuner.hooks)


def test_race_chooses_among_the_autotuners_configs_and_installs_the_winner(sim):
    sim.set_noise(seed=5, jitter_pct=1, clock_bound=0.5)
    fn = JitFunction(sim, fails=FAILING)
    configs = blocks(*KERNEL_NS, *FAILING)  # the last three do not compile
    tuner = Autotuner(fn, ["x", "n"], configs, ["n"], do_bench=lambda *a, **k: pytest.fail("benchmarked"))
    race = kscope.triton.race(tuner, (1,), (Tensor(), 1024), runs=40)
    assert race.winner[0] is configs[2]  # BLOCK 64
    assert race.winner_index == 2
    assert [c[0] for c in race.ties] in ([], [configs[3]])  # BLOCK 128 is 3.75% slower: rarely a tie
    assert len(race) == 5  # the configs that do not compile are left out
    assert tuner.cache == {(1024, "float16"): configs[2]}
    assert tuner.best_config is configs[2]
    assert tuner.hooks[-1] == ("pre", True)  # reset_to_zero once more, as the autotuner does after tuning
    assert tuner.nargs is None
    assert "do_bench" not in vars(tuner)  # the autotuner's own do_bench is back
    # The next call with this key runs the winner without benchmarking.
    fn.runs.clear()
    tuner.run(Tensor(), 1024, grid=(1,), warmup=False)  # as kernel[grid](...) calls it
    assert fn.runs == [64] and tuner.used_cached_result
    assert race.to_dataframe()["config"].map(lambda c: c.kwargs["BLOCK"]).tolist() == [16, 32, 64, 128, 256]


def test_race_takes_an_autotuner_only():
    with pytest.raises(kscope.ConfigError, match=r"race takes a @triton.autotune kernel \(triton.runtime.Autotuner, "
                                                 r"as in Triton 3.6\), not function: it has no configs, keys"):
        kscope.triton.race(lambda: None, (1,), ())


def test_race_refuses_configs_that_are_not_triton_configs_before_measuring(sim):
    fn = JitFunction(sim)
    configs = blocks(16, 32)
    # What pruning may hand back: the dicts a perf model was given rather than the configs.
    tuner = Autotuner(fn, ["x", "n"], configs, ["n"],
                      prune_configs_by={"early_config_prune": lambda configs, nargs, **kw: [c.kwargs for c in configs]})
    with pytest.raises(kscope.ConfigError, match=r"^config 1/2 of matmul_kernel is \{'BLOCK': 16\} \(dict\), not a "
                                                 r"triton.Config: give configs=\[triton.Config\(\{'BLOCK': 64\}, "
                                                 r"num_warps=4\), ...\] \(or have prune_configs_by return them\)"):
        kscope.triton.race(tuner, (1,), (Tensor(), 1024), runs=20)
    assert fn.runs == [] and tuner.nargs is None
