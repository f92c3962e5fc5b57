"""kscope.triton without Triton: do_bench's arguments and return values (Triton 3.6's), and race()
on an autotuner that does what Triton 3.6's Autotuner does with them (its run and _bench, below), on
the simulated backend. tests/python/test_triton_gpu.py runs both with Triton itself on a GPU."""

import builtins
import functools
import sys

import pytest

import kscope
import kscope.triton

# Config BLOCK launches kernel "k<BLOCK>" of this many ns: 64 is the fastest.
KERNEL_NS = {16: 90000, 32: 60000, 64: 40000, 128: 41500, 256: 75000}


class OutOfResources(Exception):
    """Triton's exception for a config that does not fit the GPU (matched by name, as Triton's is)."""


class Config:
    """triton.Config's surface: kwargs, pre_hook, all_kwargs()."""

    def __init__(self, block, pre_hook=None):
        self.kwargs = {"BLOCK": block}
        self.num_warps = 4
        self.pre_hook = pre_hook

    def all_kwargs(self):
        return {**self.kwargs, "num_warps": self.num_warps}

    def __repr__(self):
        return f"BLOCK: {self.kwargs['BLOCK']}, num_warps: {self.num_warps}"


class JitFunction:
    """A kernel: each run launches its config's simulated kernel, or fails like a config too big."""

    def __init__(self, sim):
        self.sim = sim
        self.runs = []

    def run(self, *args, grid, warmup, **meta):  # Triton 3.6's JITFunction.run: both keyword-only, required
        self.runs.append(meta["BLOCK"])
        if meta["BLOCK"] > 256:
            raise OutOfResources("out of resource: shared memory")
        self.sim.launch(f"k{meta['BLOCK']}", KERNEL_NS[meta["BLOCK"]])


class Autotuner:
    """What Triton 3.6's Autotuner does with do_bench, its hooks and its cache, for one key."""

    def __init__(self, fn, arg_names, configs, key, do_bench=None):
        self.fn = fn
        self.arg_names = arg_names
        self.configs = configs
        self.keys = key
        self.cache = {}
        self._do_bench = do_bench
        self.hooks = []
        self.pre_hook = lambda kwargs, reset_only=False: self.hooks.append(("pre", reset_only))
        self.post_hook = lambda kwargs, exception: self.hooks.append(("post", exception))
        self.benchmarks = 0
        self.nargs = None

    @functools.cached_property
    def do_bench(self):
        return self._do_bench

    def prune_configs(self, kwargs):
        return self.configs

    def _bench(self, *args, config, **meta):
        current = dict(meta, **config.all_kwargs())
        full_nargs = {**self.nargs, **current}

        def kernel_call():
            if config.pre_hook:
                config.pre_hook(full_nargs)
            self.pre_hook(full_nargs)
            self.fn.run(*args, **current)
            self.post_hook(full_nargs, exception=None)

        try:
            return self.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        except OutOfResources:
            return [float("inf")] * 3

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        all_args = {**self.nargs, **kwargs}
        named = {k: v for k, v in all_args.items() if k in self.arg_names}
        key = tuple([named[k] for k in self.keys if k in named] + [str(v.dtype) for v in named.values()
                                                                   if hasattr(v, "dtype")])
        if key not in self.cache:
            self.benchmarks += 1
            timings = {config: self._bench(*args, config=config, **kwargs) for config in self.prune_configs(kwargs)}
            self.cache[key] = builtins.min(timings, key=timings.get)
            self.configs_timings = timings
        config = self.cache[key]
        self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None


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
    with pytest.raises(kscope.ConfigError, match="do_bench's rep is a time in milliseconds >= 0, not -1"):
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
    with pytest.raises(kscope.ConfigError, match=r"quantiles must lie in \[0, 1\], not 1.5"):
        summarize(times, [1.5], "mean")


def test_the_autotuner_chooses_the_fastest_config_with_kscopes_do_bench(sim):
    fn = JitFunction(sim)
    tuner = Autotuner(fn, ["x", "n"], [Config(b) for b in KERNEL_NS], ["n"],
                      do_bench=functools.partial(kscope.triton.do_bench, rep=3))
    tuner.run(Tensor(), 1024, grid=(1,), warmup=False)  # as kernel[grid](...) calls it
    assert tuner.cache[(1024, "float16")].kwargs["BLOCK"] == 64
    timings = {c.kwargs["BLOCK"]: t for c, t in tuner.configs_timings.items()}
    assert timings[64] == pytest.approx([0.04] * 3)
    assert timings[16] == pytest.approx([0.09] * 3)
    assert ("pre", False) in tuner.hooks and ("post", None) in tuner.hooks


def test_race_chooses_among_the_autotuners_configs_and_installs_the_winner(sim):
    sim.set_noise(seed=5, jitter_pct=1, clock_bound=0.5)
    fn = JitFunction(sim)
    configs = [Config(b) for b in KERNEL_NS] + [Config(512)]  # 512 does not compile
    tuner = Autotuner(fn, ["x", "n"], configs, ["n"], do_bench=lambda *a, **k: pytest.fail("benchmarked"))
    race = kscope.triton.race(tuner, (1,), (Tensor(), 1024), runs=40)
    assert race.winner[0] is configs[2]  # BLOCK 64
    assert race.winner_index == 2
    assert [c[0] for c in race.ties] in ([], [configs[3]])  # BLOCK 128 is 3.75% slower: rarely a tie
    assert len(race) == 5  # the config that does not compile is left out
    assert tuner.cache == {(1024, "float16"): configs[2]}
    assert tuner.best_config is configs[2]
    assert tuner.hooks[-1] == ("pre", True)  # reset_to_zero once more, as the autotuner does after tuning
    assert tuner.nargs is None
    assert "do_bench" not in vars(tuner)  # the autotuner's own do_bench is back
    # The next call with this key runs the winner without benchmarking.
    fn.runs.clear()
    tuner.run(Tensor(), 1024, grid=(1,), warmup=False)  # as kernel[grid](...) calls it
    assert fn.runs == [64] and tuner.benchmarks == 0
    assert race.to_dataframe()["config"].map(lambda c: c.kwargs["BLOCK"]).tolist() == [16, 32, 64, 128, 256]


def test_race_takes_an_autotuner_only():
    with pytest.raises(kscope.ConfigError, match=r"race takes a @triton.autotune kernel \(triton.runtime.Autotuner, "
                                                 r"as in Triton 3.6\), not function: it has no configs, keys"):
        kscope.triton.race(lambda: None, (1,), ())
