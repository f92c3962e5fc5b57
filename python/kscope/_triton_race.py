"""Racing a Triton autotuner's configs (kscope.triton.race and kscope.triton.autotune): each config
called exactly as Triton 3.6's Autotuner benchmarks it, those Triton cannot run here left out, the
others raced with kscope.tune."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._tune import RaceResults, tune
from .annotation import annotate
from .errors import ConfigError


def shown(value: Any) -> str:
    """A value as a message shows it: its repr, cut to a line."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({type(value).__name__}, {len(text)} characters)"


def race_configs(autotuner: Any, configs: list[Any], args: Sequence[Any], call_kwargs: dict[str, Any],
                 options: Mapping[str, Any]) -> RaceResults:
    """kscope.tune over the configs that compile, each called as the autotuner's _bench calls it
    (autotuner.nargs set). The RaceResults' configs are 1-tuples of the triton.Config objects."""
    _check_configs(autotuner, configs)
    calls = _kernel_calls(autotuner, configs, args, call_kwargs)
    runnable = [(config, call) for config, call in zip(configs, calls) if _compiles(call)]
    if not runnable:
        raise ConfigError(f"none of the {len(configs)} configs of {_name(autotuner)} compiles for this GPU")
    call_of = {id(config): call for config, call in runnable}

    def launch(config: Any) -> None:
        with annotate("kernel"):
            call_of[id(config)]()

    chosen: dict[str, Any] = {"verbosity": "silent", **options}
    return tune(launch, [(config,) for config, _ in runnable], **chosen)


def checked_autotuner(kernel: Any) -> Any:
    needed = ("configs", "keys", "arg_names", "cache", "prune_configs", "_bench", "pre_hook")
    missing = [name for name in needed if not hasattr(kernel, name)]
    if missing:
        raise ConfigError(
            f"race takes a @triton.autotune kernel (triton.runtime.Autotuner, as in Triton 3.6), not "
            f"{type(kernel).__name__}: it has no {', '.join(missing)}")
    return kernel


def _check_configs(autotuner: Any, configs: list[Any]) -> None:
    """Every config a triton.Config (its kwargs and all_kwargs()), before anything is measured."""
    for i, config in enumerate(configs):
        if not isinstance(getattr(config, "kwargs", None), dict) or not callable(getattr(config, "all_kwargs", None)):
            raise ConfigError(
                f"config {i + 1}/{len(configs)} of {_name(autotuner)} is {shown(config)} "
                f"({type(config).__name__}), not a triton.Config: give configs=[triton.Config({{'BLOCK': 64}}, "
                f"num_warps=4), ...] (or have prune_configs_by return them)")


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


SKIPPED_BY_THE_AUTOTUNER = ("OutOfResources", "CompileTimeAssertionFailure", "PTXASError")


def _compiles(call: Callable[[], None]) -> bool:
    """Calls it once (compiling it); False where Triton says the config cannot run here."""
    try:
        call()
    except Exception as e:
        if type(e).__name__ in SKIPPED_BY_THE_AUTOTUNER:
            return False
        raise
    return True


def tuning_key(autotuner: Any, call_kwargs: Mapping[str, Any]) -> tuple[Any, ...]:
    """The key Triton 3.6's Autotuner.run caches a choice under: the key arguments' values, then the
    dtype of every argument that has one."""
    named = {k: v for k, v in {**autotuner.nargs, **call_kwargs}.items() if k in autotuner.arg_names}
    key = [named[k] for k in autotuner.keys if k in named]
    key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
    return tuple(key)
