"""kscope for Helion's autotuner: a function for ``@helion.kernel(autotune_benchmark_fn=...)``.

    import kscope.helion

    @helion.kernel(autotune_benchmark_fn=kscope.helion.benchmark)
    def matmul(x, y): ...

Helion calls its ``autotune_benchmark_fn`` where it re-benchmarks its best candidates to rank them
(``fns``: one callable per candidate, no arguments; ``repeat``: the runs it would give each; ``desc``:
a progress label) and keeps the candidate with the lowest time returned. Here the candidates are
raced side by side (kscope.tune: the L2 flushed before every run, CUPTI's durations, interleaved
final passes), and a declared tie is settled by the stable rule: the first of the winner and its
ties in Helion's order. The times returned are the candidates' medians in ms, the chosen one the
lowest (a tied one that measured faster is reported just above it).

Helion does not run on the machines kscope is tested on: this plug-in is built against Helion's
documented interface (``Settings.autotune_benchmark_fn``: ``(fns, *, repeat, desc=None) ->
list[float]``) and tested with a stand-in that calls it as Helion's autotuner does.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

from ._race_choice import chosen, race_callables, reported_ms
from .errors import ConfigError
from .triton import do_bench

__all__ = ["benchmark", "benchmark_fn"]

_RACE_OPTIONS = ("threshold_pct", "alpha", "first_runs", "final_runs", "max_finalists", "warmup_runs",
                 "cache_control", "clock_control", "thermal_mode")


def benchmark_fn(**race_options: Any) -> Callable[..., list[float]]:
    """An ``autotune_benchmark_fn`` that races with these kscope.tune options (threshold_pct, alpha,
    first_runs, final_runs, max_finalists, warmup_runs, cache_control, clock_control, thermal_mode;
    the race's runs are Helion's ``repeat``, at least first_runs)."""
    unknown = sorted(set(race_options) - set(_RACE_OPTIONS))
    if unknown:
        raise ConfigError(f"kscope.helion.benchmark_fn takes kscope.tune's {', '.join(_RACE_OPTIONS)}; not "
                          f"{', '.join(unknown)} (the runs are Helion's repeat)")
    options = dict(race_options)

    def benchmark(fns: Sequence[Callable[[], object]], *, repeat: int, desc: str | None = None) -> list[float]:
        """Helion's autotune_benchmark_fn: each candidate's median time in ms, the race's choice the lowest."""
        candidates = list(fns) if isinstance(fns, Sequence) else None
        if candidates is None or not all(callable(f) for f in candidates):
            raise ConfigError(f"autotune_benchmark_fn takes a list of the candidates' callables (no arguments), "
                              f"not {fns!r}"[:300])
        if isinstance(repeat, bool) or not isinstance(repeat, numbers.Integral) or repeat < 1:
            raise ConfigError(f"autotune_benchmark_fn's repeat is a count of runs >= 1, not {repeat!r}")
        if not candidates:
            return []
        if len(candidates) == 1:
            return [float(do_bench(candidates[0], return_mode="median"))]
        runs = max(int(repeat), int(options.get("first_runs", 10)))
        race = race_callables(candidates, {**options, "runs": runs})
        return reported_ms(race, chosen(race))

    return benchmark


benchmark = benchmark_fn()
