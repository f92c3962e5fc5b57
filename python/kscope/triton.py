"""kscope for Triton's autotuner: ``autotune``, a drop-in for ``@triton.autotune`` that races the
configs and keeps the choice for later processes; ``do_bench``, a drop-in for
``triton.testing.do_bench`` measured by kscope (cold L2 before every run, CUPTI's kernel
durations); and ``race``, which lets kscope.tune choose among a Triton autotuner's configs once.

    import kscope.triton

    @kscope.triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def matmul_kernel(...): ...

    # or keep triton.autotune and time each config with kscope
    @triton.autotune(configs=configs, key=["M", "N", "K"], do_bench=kscope.triton.do_bench)

Triton itself is imported only where a kernel is decorated or raced (``do_bench`` needs nothing of
it), so importing this module never imports Triton.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, cast

from . import _console, analyze
from ._triton_race import checked_autotuner, race_configs, shown, tuning_key
from ._tune import RaceResults
from .annotation import annotate
from .errors import ConfigError, KernelCountError, ProfilerException, SweepError, also_builtin

__all__ = ["autotune", "do_bench", "race"]

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

    fn is called once (compiling it, as Triton's does), then 5 times to estimate the time a run takes
    (the slower of the host's pace, kscope's work between runs included, and fn's GPU time), then
    ``warmup`` ms worth of unrecorded runs and ``rep`` ms worth of recorded ones (at least one of
    each), as Triton counts them. Each run flushes the L2 before fn, and its time is the span of the
    GPU work fn launched, from CUPTI's kernel records (kscope's 'cupti' backend, replay_mode
    'range'): no CUDA events, no host launch overhead, no flush inside the time. ``grad_to_none``:
    tensors whose .grad is set to None before each run.

    An exception fn raises reaches the caller as itself, as from Triton's do_bench: the autotuner
    skips a config whose call raises OutOfResources, CompileTimeAssertionFailure or PTXASError.

    Returns as Triton does: with ``quantiles``, their values (linear interpolation), a single one
    as a float; otherwise the runs' ``return_mode``: 'min', 'max', 'mean' (the default), 'median',
    or 'all' (the list). ``triton.autotune(..., do_bench=kscope.triton.do_bench)`` calls it as
    ``do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))``.
    """
    _check_do_bench(fn, warmup, rep, grad_to_none, quantiles, return_mode)
    fn()
    started: list[float] = []

    def timed() -> None:
        started.append(time.perf_counter())
        fn()

    durations = _measure(timed, runs=_ESTIMATE_RUNS, warmup_runs=1, grad_to_none=grad_to_none)
    # A run takes what the slower of the host (its calls' pace, kscope's work between them included)
    # and the GPU (fn's time) takes.
    recorded = started[1:]
    host_ms = (recorded[-1] - recorded[0]) * 1e3 / (len(recorded) - 1)
    estimate_ms = max(host_ms, statistics.median(durations), 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    times = _measure(fn, runs=n_repeat, warmup_runs=n_warmup, grad_to_none=grad_to_none)
    return _summarize(times, quantiles, return_mode)


def _check_do_bench(fn: Any, warmup: Any, rep: Any, grad_to_none: Any, quantiles: Any, return_mode: Any) -> None:
    """Every argument as Triton's do_bench takes it, refused in its words before anything runs."""
    if not callable(fn):
        raise ConfigError(f"do_bench's fn is the function to time, called with no arguments, not {shown(fn)}")
    if return_mode not in _RETURN_MODES:
        # Triton asserts it: also an AssertionError.
        raise also_builtin(ConfigError, AssertionError)(
            f"return_mode must be one of {', '.join(repr(m) for m in _RETURN_MODES)}, not {shown(return_mode)}")
    for name, value in (("warmup", warmup), ("rep", rep)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise ConfigError(f"do_bench's {name} is a time in milliseconds, finite and >= 0, not {shown(value)}")
    if quantiles is not None:
        if isinstance(quantiles, (str, bytes)) or not isinstance(quantiles, Sequence) or not quantiles:
            raise ConfigError(f"do_bench's quantiles are a list of numbers in [0, 1], such as (0.5, 0.2, 0.8), "
                              f"not {shown(quantiles)}")
        for q in quantiles:
            if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 <= q <= 1:
                raise ConfigError(f"do_bench's quantiles must lie in [0, 1], not {shown(q)} (of {shown(quantiles)})")
    if grad_to_none is not None:
        if hasattr(grad_to_none, "grad") or isinstance(grad_to_none, (str, bytes)) or \
                not isinstance(grad_to_none, Iterable):
            raise ConfigError(f"do_bench's grad_to_none is a list of the tensors whose .grad is set to None before "
                              f"each run ([x] for one tensor), not {shown(grad_to_none)}")
        for x in grad_to_none:
            try:
                x.grad = None
            except (AttributeError, TypeError) as e:
                raise ConfigError(f"do_bench's grad_to_none holds {shown(x)}, whose .grad cannot be set to None "
                                  f"({e}): give the tensors whose gradients fn accumulates") from None


def _measure(fn: Callable[[], Any], runs: int, warmup_runs: int, grad_to_none: Sequence[Any] | None) -> list[float]:
    """fn's time per recorded run, in ms, from a kscope profile of it. fn's own exception is raised
    as itself; kscope's, in do_bench's words."""

    @analyze.kernel(runs=runs, warmup_runs=warmup_runs, backend="cupti", replay_mode="range", verbosity="silent")
    def do_bench() -> None:
        for x in grad_to_none or ():
            x.grad = None
        with annotate("do_bench"):
            fn()

    try:
        samples = do_bench().raw_dataframe()
    except SweepError as e:
        failure: BaseException = e
    else:
        times = [v / 1e6 for v in samples["Value"] if not math.isnan(v)]
        if times:
            return times
        failure = NoGpuWork()  # each run's span of GPU work is empty
    # Outside the except clause, so that the exception raised keeps its own context.
    raise _as_do_bench_error(failure)


class NoGpuWork(ConfigError):
    """do_bench's fn launched no GPU work: a mistake for a user's do_bench, a time of 0 for a tuner
    that asks what a step costs (Inductor times the copies of a kernel's inputs, which may be none)."""

    def __init__(self) -> None:
        super().__init__("do_bench's fn launched no GPU work to time: give a function that launches the kernels, "
                         "such as lambda: kernel[grid](...)")


def _as_do_bench_error(failure: BaseException) -> BaseException:
    cause = failure.__cause__
    if not isinstance(failure, SweepError) or cause is None:
        return failure
    if not isinstance(cause, ProfilerException):
        return cause  # fn's own: the autotuner skips Triton's OutOfResources and its kin by their class
    message = str(cause)
    if isinstance(cause, KernelCountError) and "no kernels" in message.lower():
        return NoGpuWork()
    return type(cause)(f"do_bench: {message}")


def _quantile(values: list[float], q: float) -> float:
    point = q * (len(values) - 1)
    lower, upper = math.floor(point), math.ceil(point)
    return (1 - (point - lower)) * values[lower] + (point - lower) * values[upper]


def _summarize(times: list[float], quantiles: Sequence[float] | None, return_mode: str) -> float | list[float]:
    if quantiles is not None:
        ordered = sorted(times)
        values = [_quantile(ordered, q) for q in quantiles]
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return times
    summary: dict[str, Callable[[list[float]], float]] = {
        "min": min, "max": max, "mean": statistics.mean, "median": statistics.median}
    return summary[return_mode](times)


def autotune(configs: Sequence[Any], key: Sequence[str], prune_configs_by: Mapping[str, Any] | None = None,
             reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
             pre_hook: Callable[..., Any] | None = None, post_hook: Callable[..., Any] | None = None,
             warmup: float | None = None, rep: float | None = None, use_cuda_graph: bool = False,
             do_bench: Callable[..., Any] | None = None, cache_results: bool = True,
             **race_options: Any) -> Callable[[Any], Any]:
    """A drop-in for ``@triton.autotune`` (Triton 3.6's arguments) that races the configs.

    The first call for a tuning key (the ``key`` arguments' values and the arguments' dtypes, as
    Triton's) races the configs that survive ``prune_configs_by`` with kscope.tune, each called as
    Triton's autotuner benchmarks it (``reset_to_zero``, ``restore_value``, ``pre_hook``,
    ``post_hook`` and the configs' pre_hooks included; configs that raise OutOfResources,
    CompileTimeAssertionFailure or PTXASError left out). A tie the race declares is settled by a
    stable rule: among the winner and the configs tied with it, the one listed first in ``configs``,
    so that every process that sees the same tie chooses the same config. Later calls with that key
    run the choice.

    ``cache_results`` (on by default, unlike Triton's): the choice and its evidence (the race's
    table) are kept in a file of Triton's cache folder (``TRITON_CACHE_DIR``, ~/.triton/cache), which
    later processes read instead of racing; a change of the kernel's source, the configs, the GPU,
    the driver, Triton, kscope or the race's options reads no old choice. False: every process races.

    ``race_options``: kscope.tune's runs, warmup_runs, threshold_pct, alpha, first_runs, final_runs,
    max_finalists, backend, cache_control, clock_control, thermal_mode, verbosity ('silent' unless
    given). ``warmup``, ``rep``, ``use_cuda_graph`` and ``do_bench`` are Triton's ways of timing one
    config: the race does not use them (a ProfilerWarning says so).

    The kernel is a triton.runtime.Autotuner; ``kernel.choices`` maps each tuning key to its Choice
    (config, rule, race, evidence, path, from_cache, tuning_s), and ``kernel.bench_time`` is the last
    choice's tuning time, as Triton's.
    """
    from . import _triton_autotune

    options = _triton_autotune.checked_race_options(race_options)
    unused = [name for name, value in (("warmup", warmup), ("rep", rep), ("use_cuda_graph", use_cuda_graph),
                                       ("do_bench", do_bench)) if value not in (None, False)]
    if unused:
        _console.warn("setup", f"kscope.triton.autotune races the configs with kscope.tune and does not use "
                               f"{', '.join(unused)} (Triton's ways of timing one config at a time): drop "
                               f"{'it' if len(unused) == 1 else 'them'}; the race's options are runs, "
                               f"threshold_pct, ...")
    if not isinstance(cache_results, bool):
        raise ConfigError(f"cache_results must be True or False, not {shown(cache_results)}")
    triton_options = {"reset_to_zero": reset_to_zero, "restore_value": restore_value, "pre_hook": pre_hook,
                      "post_hook": post_hook, "prune_configs_by": prune_configs_by}

    def decorator(fn: Any) -> Any:
        return _triton_autotune.make(fn, configs, key, dict(triton_options), options, cache_results)

    return decorator


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
    autotuner = checked_autotuner(kernel)
    # As kernel[grid](...) calls the autotuner's run: Triton 3.6's JITFunction.run requires warmup.
    call_kwargs = dict(kwargs or {}, grid=grid, warmup=False)
    autotuner.nargs = dict(zip(autotuner.arg_names, args))
    try:
        result = race_configs(autotuner, list(autotuner.prune_configs(call_kwargs)), args, call_kwargs, options)
        winner = cast(tuple[Any, ...], result.winner)[0]  # race_configs races at least one config
        autotuner.cache[tuning_key(autotuner, call_kwargs)] = winner
        autotuner.best_config = winner
        autotuner.pre_hook({**autotuner.nargs, **call_kwargs, **winner.all_kwargs()}, reset_only=True)
    finally:
        autotuner.nargs = None
    return result
