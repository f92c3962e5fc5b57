"""kscope.helion.benchmark as Helion's autotuner calls its autotune_benchmark_fn (helion's
base_search.py, PopulationBasedSearch.rebenchmark, with the setting given), on the simulated backend:
Helion cannot be installed here, so the stand-in below re-benchmarks its best members the way Helion
does and keeps the one with the lowest time returned."""

import functools
import math

import pytest

import kscope
import kscope.helion

TARGET_MS = 200.0  # Helion's _REBENCHMARK_TARGET_MS_DEFAULT
REPEAT_MAX = 20_000  # _REBENCHMARK_INTERLEAVED_REPEAT_MAX


class PopulationMember:
    def __init__(self, name, fn, perf):
        self.name = name
        self.fn = fn
        self.perfs = [perf]  # the first benchmark's time, in ms

    @property
    def perf(self):
        return self.perfs[-1]


def rebenchmark(members, benchmark_fn, args, desc="Rebenchmarking", progress_bar=True):
    """PopulationBasedSearch.rebenchmark with settings.autotune_benchmark_fn set: no isolated
    benchmark, the repeat sized for 200 ms from the slowest finite member, callables of no arguments
    (the member's compiled function partially applied to the kernel's arguments), perfs appended."""
    if len(members) < 2:
        return
    reference = max((m.perf for m in members if m.perfs and math.isfinite(m.perf) and m.perf > 0), default=math.inf)
    repeat = min(REPEAT_MAX, max(3, int(TARGET_MS / reference))) if math.isfinite(reference) else 1000
    iterator = [functools.partial(m.fn, *args) for m in members]
    timings = benchmark_fn(iterator, repeat=repeat, desc=desc) if progress_bar else benchmark_fn(iterator, repeat=repeat)
    for member, timing in zip(members, timings, strict=True):
        member.perfs.append(timing)


def population(gpu, durations_ns):
    """Members whose compiled function launches its kernel; their first (noisy, one-at-a-time) times."""
    def compiled(name, ns, x, y):
        gpu.launch(name, ns)

    return [PopulationMember(name, functools.partial(compiled, name, ns), ns / 1e6 * (0.97 + 0.01 * i))
            for i, (name, ns) in enumerate(durations_ns.items())]


def test_helion_keeps_the_races_choice_and_a_tie_goes_to_its_first_member():
    durations = {"cfg_a": 60000, "cfg_b": 40000, "cfg_c": 40000, "cfg_d": 45000}  # b and c are one kernel
    kept = set()
    for seed in range(6):
        with kscope.testing.simulated_backend() as gpu:
            gpu.set_noise(seed=seed, jitter_pct=1)
            members = population(gpu, durations)
            rebenchmark(members, kscope.helion.benchmark, args=("x", "y"), progress_bar=seed % 2 == 0)
            best = min(members, key=lambda m: m.perf)  # Helion's choice: the lowest time
            kept.add(best.name)
            times = {m.name: m.perf for m in members}
            assert times["cfg_a"] == pytest.approx(0.06, rel=0.05) and times["cfg_d"] > times["cfg_b"]
            assert times["cfg_c"] > times["cfg_b"]  # tied, and reported just above the chosen one
    assert kept == {"cfg_b"}


def test_benchmark_fn_takes_the_races_options_and_helions_arguments(sim):
    with pytest.raises(kscope.ConfigError, match=r"^kscope.helion.benchmark_fn takes kscope.tune's threshold_pct, "
                                                 r".*; not runs \(the runs are Helion's repeat\)"):
        kscope.helion.benchmark_fn(runs=10)
    bench = kscope.helion.benchmark_fn(threshold_pct=1)
    assert bench([], repeat=10) == []
    assert bench([lambda: sim.launch("k", 30000)], repeat=5) == pytest.approx([0.03])
    with pytest.raises(kscope.ConfigError, match="^autotune_benchmark_fn's repeat is a count of runs >= 1, not 0"):
        bench([lambda: None, lambda: None], repeat=0)
    with pytest.raises(kscope.ConfigError, match="^autotune_benchmark_fn takes a list of the candidates' callables"):
        bench([1, 2], repeat=3)


def test_a_candidate_that_fails_raises_its_own_exception_as_helions_benchmark_would(sim):
    def broken():
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    with pytest.raises(RuntimeError, match="illegal memory access") as e:
        kscope.helion.benchmark([lambda: sim.launch("k", 1000), broken], repeat=10)
    assert type(e.value) is RuntimeError
