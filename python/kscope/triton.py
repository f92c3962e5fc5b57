"""kscope for Triton's autotuner: ``do_bench``, a drop-in for ``triton.testing.do_bench`` measured by
kscope (cold L2 before every run, CUPTI's kernel durations), and ``race``, which lets kscope.tune
choose among an autotuner's configs.

    import kscope.triton

    @triton.autotune(configs=configs, key=["M", "N", "K"], do_bench=kscope.triton.do_bench)
    @triton.jit
    def matmul_kernel(...): ...

    # or: race the configs once, with confidence, and let the autotuner use the winner from then on
    race = kscope.triton.race(matmul_kernel, grid, (a, b, c, M, N, K, ...))

Triton itself is imported only by ``race`` (``do_bench`` needs nothing of it), so importing this
module never imports Triton.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from . import analyze
from ._tune import RaceResults, tune
from .annotation import annotate
from .errors import ConfigError, also_builtin

__all__ = ["do_bench", "race"]

_RETURN_MODES = ("min", "max", "mean", "median", "all")
_ESTIMATE_RUNS = 5


def do_bench(
    fn: Callable[[], Any],
    warmup: float = 25,
    rep: float = 100,
    grad_to_none: Sequence[Any] | None = None,
    quantiles: Sequence[float] | None = None,
    return_mode: Literal["min", "max", "mean", "median", "all"] = "mean",
) -> float | list[float]:
    """``triton.testing.do_bench`` (Triton 3.6) with kscope's measurement underneath: the same
    arguments and return values, in milliseconds.

    fn is called once and then 5 times to estimate the time a run takes (the slower of the host's
    pace, kscope's work between runs included, and fn's GPU time), then ``warmup`` ms worth of
    unrecorded runs and ``rep`` ms worth of recorded ones (at least one of each), as Triton counts them. Each run flushes the L2
    before fn, and its time is the span of the GPU work fn launched, from CUPTI's kernel records
    (kscope's 'cupti' backend, replay_mode 'range'): no CUDA events, no host launch overhead, no
    flush inside the time. ``grad_to_none``: tensors whose .grad is set to None before each run.

    Returns as Triton does: with ``quantiles``, their values (linear interpolation), a single one
    as a float; otherwise the runs' ``return_mode``: 'min', 'max', 'mean' (the default), 'median',
    or 'all' (the list). ``triton.autotune(..., do_bench=kscope.triton.do_bench)`` calls it as
    ``do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))``.
    """
    if return_mode not in _RETURN_MODES:
        # Triton asserts it: also an AssertionError.
        raise also_builtin(ConfigError, AssertionError)(
            f"return_mode must be one of {', '.join(repr(m) for m in _RETURN_MODES)}, not {return_mode!r}")
    for name, value in (("warmup", warmup), ("rep", rep)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ConfigError(f"do_bench's {name} is a time in milliseconds >= 0, not {value!r}")
    started: list[float] = []

    def timed() -> None:
        started.append(time.perf_counter())
        fn()

    durations = _measure(timed, runs=_ESTIMATE_RUNS, warmup_runs=1, grad_to_none=grad_to_none)
    # A run takes what the slower of the host (its calls' pace, kscope's work between them included)
    # and the GPU (fn's time) takes.
    recorded = started[1:]
    host_ms = (recorded[-1] - recorded[0]) * 1e3 / (len(recorded) - 1)
    estimate_ms = max(host_ms, statistics.median(durations) if durations else 0.0, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    times = _measure(fn, runs=n_repeat, warmup_runs=n_warmup, grad_to_none=grad_to_none)
    return _summarize(times, quantiles, return_mode)


def _measure(fn: Callable[[], Any], runs: int, warmup_runs: int, grad_to_none: Sequence[Any] | None) -> list[float]:
    """fn's time per recorded run, in ms, from a kscope profile of it."""

    @analyze.kernel(runs=runs, warmup_runs=warmup_runs, backend="cupti", replay_mode="range", verbosity="silent")
    def do_bench() -> None:
        for x in grad_to_none or ():
            x.grad = None
        with annotate("do_bench"):
            fn()

    samples = do_bench().raw_dataframe()
    return [v / 1e6 for v in samples["Value"] if not math.isnan(v)]


def _quantile(values: list[float], q: float) -> float:
    if not 0 <= q <= 1:
        raise ConfigError(f"quantiles must lie in [0, 1], not {q!r}")
    point = q * (len(values) - 1)
    lower, upper = math.floor(point), math.ceil(point)
    return (1 - (point - lower)) * values[lower] + (point - lower) * values[upper]


def _summarize(times: list[float], quantiles: Sequence[float] | None, return_mode: str) -> float | list[float]:
    if not times:
        raise ConfigError("do_bench measured no run of fn: it launched no GPU work, or every run failed")
    if quantiles is not None:
        ordered = sorted(times)
        values = [_quantile(ordered, q) for q in quantiles]
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return times
    summary: dict[str, Callable[[list[float]], float]] = {
        "min": min, "max": max, "mean": statistics.mean, "median": statistics.median}
    return summary[return_mode](times)


def race(kernel: Any, grid: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None = None,
         **options: Any) -> RaceResults:
    """Races the configs of a ``@triton.autotune`` kernel on these arguments with kscope.tune, and
    makes the winner the autotuner's choice for them: the next ``kernel[grid](*args, **kwargs)``
    with the same tuning key runs the winner without benchmarking.

    Each config is called exactly as the autotuner benchmarks it (its pre_hook, the autotuner's
    pre_hook and post_hook, reset_to_zero and restore_value included), after the autotuner's
    pruning (prune_configs_by). A config that does not compile for this GPU (Triton's
    OutOfResources, CompileTimeAssertionFailure, PTXASError) is left out, as the autotuner leaves it
    out. ``options`` are kscope.tune's (runs, threshold_pct, alpha, first_runs, ...; verbosity
    'silent' unless given). Returns its RaceResults, whose config column holds the triton.Config
    objects.
    """
    autotuner = _checked_autotuner(kernel)
    call_kwargs = dict(kwargs or {}, grid=grid)
    autotuner.nargs = dict(zip(autotuner.arg_names, args))
    try:
        configs = list(autotuner.prune_configs(call_kwargs))
        # As kernel[grid](...) calls JITFunction.run: Triton 3.6's run requires warmup, keyword-only.
        calls = _kernel_calls(autotuner, configs, args, dict(call_kwargs, warmup=False))
        runnable = [(config, call) for config, call in zip(configs, calls) if _compiles(call)]
        if not runnable:
            raise ConfigError(f"none of the {len(configs)} configs of {_name(autotuner)} compiles for this GPU")

        call_of = {id(config): call for config, call in runnable}

        def launch(config: Any) -> None:
            with annotate("kernel"):
                call_of[id(config)]()

        chosen: dict[str, Any] = {"verbosity": "silent", **options}
        result = tune(launch, [(config,) for config, _ in runnable], **chosen)
        winner = result.winner[0]
        autotuner.cache[_tuning_key(autotuner, call_kwargs)] = winner
        autotuner.best_config = winner
        autotuner.pre_hook({**autotuner.nargs, **call_kwargs, **winner.all_kwargs()}, reset_only=True)
    finally:
        autotuner.nargs = None
    return result


def _checked_autotuner(kernel: Any) -> Any:
    needed = ("configs", "keys", "arg_names", "cache", "prune_configs", "_bench", "pre_hook")
    missing = [name for name in needed if not hasattr(kernel, name)]
    if missing:
        raise ConfigError(
            f"race takes a @triton.autotune kernel (triton.runtime.Autotuner, as in Triton 3.6), not "
            f"{type(kernel).__name__}: it has no {', '.join(missing)}")
    return kernel


def _name(autotuner: Any) -> str:
    return getattr(getattr(autotuner, "base_fn", None), "__name__", type(autotuner).__name__)


def _kernel_calls(autotuner: Any, configs: list[Any], args: Sequence[Any],
                  call_kwargs: dict[str, Any]) -> list[Callable[[], None]]:
    """Each config's call as the autotuner's own benchmark makes it: its _bench, handed a do_bench
    that keeps the call instead of timing it (do_bench is a cached property: the instance's value wins)."""
    calls: list[Callable[[], None]] = []

    def keep(kernel_call: Callable[[], None], quantiles: Any = None, **_: Any) -> list[float]:
        calls.append(kernel_call)
        return [0.0, 0.0, 0.0]

    had = "do_bench" in vars(autotuner)
    saved = vars(autotuner).get("do_bench")
    autotuner.__dict__["do_bench"] = keep
    try:
        for config in configs:
            autotuner._bench(*args, config=config, **call_kwargs)
    finally:
        if had:
            autotuner.__dict__["do_bench"] = saved
        else:
            del autotuner.__dict__["do_bench"]
    return calls


def _compiles(call: Callable[[], None]) -> bool:
    """Calls it once (compiling it); False where Triton says the config cannot run here."""
    try:
        call()
    except Exception as e:
        if type(e).__name__ in ("OutOfResources", "CompileTimeAssertionFailure", "PTXASError"):
            return False
        raise
    return True


def _tuning_key(autotuner: Any, call_kwargs: Mapping[str, Any]) -> tuple[Any, ...]:
    """The key Triton 3.6's Autotuner.run caches a choice under: the key arguments' values, then the
    dtype of every argument that has one."""
    named = {k: v for k, v in {**autotuner.nargs, **call_kwargs}.items() if k in autotuner.arg_names}
    key = [named[k] for k in autotuner.keys if k in named]
    key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
    return tuple(key)
