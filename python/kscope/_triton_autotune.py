"""``@kscope.triton.autotune``'s kernel: Triton's own Autotuner, whose first call for a tuning key
races the configs with kscope.tune instead of timing them one by one, settles a declared tie by
the stable rule, and keeps the choice on disk for later processes (_autotune_cache)."""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Sequence
from typing import Any

import pandas as pd

from . import _autotune_cache
from ._race_choice import TIE_RULE, chosen
from ._tune import RaceResults
from .errors import ConfigError
from ._triton_race import race_configs, tuning_key

# kscope.tune's options that a race of configs takes (annotation, output and shard are its own).
RACE_OPTIONS = ("runs", "warmup_runs", "threshold_pct", "alpha", "first_runs", "final_runs", "max_finalists",
                "backend", "cache_control", "clock_control", "thermal_mode", "verbosity")


@dataclasses.dataclass
class Choice:
    """The config chosen for one tuning key, and why.

    ``config``: the triton.Config; ``rule``: how a declared tie was settled; ``race``: the
    RaceResults when this process raced (None when the choice was read from disk); ``evidence``:
    the race's table (one row per config raced: Outcome, Runs, MedianNs, RatioToWinner, Reason...,
    the config column as text), also what the disk holds; ``path``: the file that holds it (None
    without cache_results); ``from_cache``: read from that file; ``tuning_s``: the wall time the
    choice took in this process.
    """

    config: Any
    rule: str
    race: RaceResults | None
    evidence: pd.DataFrame
    path: str | None
    from_cache: bool
    tuning_s: float


def checked_race_options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(RACE_OPTIONS))
    if unknown:
        raise ConfigError(f"kscope.triton.autotune takes triton.autotune's arguments and these of kscope.tune: "
                          f"{', '.join(RACE_OPTIONS)}; not {', '.join(unknown)}")
    return dict(options)


def make(fn: Any, configs: Sequence[Any], key: Sequence[str], triton_options: dict[str, Any],
         race_options: dict[str, Any], cache_results: bool) -> Any:
    from triton.runtime.autotuner import Autotuner

    return _racing_class(Autotuner)(fn, fn.arg_names, configs, key, triton_options, race_options, cache_results)


@functools.cache
def _racing_class(base: type) -> type:
    class RacingAutotuner(base):
        """A @kscope.triton.autotune kernel: triton.runtime.Autotuner whose first call for a tuning key
        races the configs (kscope.tune) and runs the choice; ``choices`` maps each key to its Choice."""

        def __init__(self, fn: Any, arg_names: list[str], configs: Sequence[Any], key: Sequence[str],
                     triton_options: dict[str, Any], race_options: dict[str, Any], cache_results: bool) -> None:
            super().__init__(fn, arg_names, configs, key, triton_options.pop("reset_to_zero", None),
                             triton_options.pop("restore_value", None), **triton_options)
            self.cache_results = False  # Triton's own disk cache of timings: the choices' file replaces it
            self.nargs: dict[str, Any] | None = None
            self.race_options = race_options
            self.keeps_choices = cache_results
            self.choices: dict[tuple[Any, ...], Choice] = {}

        def run(self, *args: Any, **kwargs: Any) -> Any:
            if len(self.configs) > 1:
                self.nargs = dict(zip(self.arg_names, args))
                try:
                    choose(self, args, kwargs)
                finally:
                    self.nargs = None
            return super().run(*args, **kwargs)

    RacingAutotuner.__qualname__ = RacingAutotuner.__name__ = "Autotuner"
    RacingAutotuner.__module__ = __name__
    return RacingAutotuner


def choose(autotuner: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
    """Puts the key's choice in the autotuner's cache (where Triton's run takes it from): read from
    disk, or raced here and kept there."""
    key = tuning_key(autotuner, kwargs)
    if key in autotuner.cache:
        return
    configs = list(autotuner.prune_configs(kwargs))
    if len(configs) == 1:
        return  # Triton's run takes the one config without benchmarking
    started = time.perf_counter()
    store = path = None
    if autotuner.keeps_choices:
        store = _autotune_cache.ChoiceCache(
            _autotune_cache.triton_cache_dir(), _name(autotuner),
            _autotune_cache.triton_fingerprint(_jit_function(autotuner)) + _autotune_cache.gpu_identity())
        path = store.path(key, configs, autotuner.race_options)
        entry = store.load(path, configs)
        if entry is not None:
            config = configs[entry["config_index"]]
            _settle(autotuner, key, Choice(config, entry["rule"], None, pd.DataFrame(entry["evidence"]), path, True,
                                           time.perf_counter() - started))
            return
    race = race_configs(autotuner, configs, args, kwargs, autotuner.race_options)
    table = race.to_dataframe()
    config = table["config"][chosen(race)]
    autotuner.pre_hook({**autotuner.nargs, **kwargs, **config.all_kwargs()}, reset_only=True)
    evidence = table.assign(config=[_autotune_cache.config_text(c) for c in table["config"]])
    tuning_s = time.perf_counter() - started
    if store is not None and path is not None:
        path = store.store(path, {
            "config_index": next(i for i, c in enumerate(configs) if c is config),
            "config": _autotune_cache.config_text(config), "rule": TIE_RULE, "kernel": _name(autotuner),
            "key": [str(k) for k in key], "machine": store.fingerprint[-4:], "race_options": autotuner.race_options,
            "tuning_s": tuning_s, "evidence": _records(evidence)})
    _settle(autotuner, key, Choice(config, TIE_RULE, race, evidence, path, False, tuning_s))


def _settle(autotuner: Any, key: tuple[Any, ...], choice: Choice) -> None:
    autotuner.cache[key] = choice.config
    autotuner.choices[key] = choice
    autotuner.bench_time = choice.tuning_s


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The table's rows for JSON: NaN as null."""
    return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
            for row in table.to_dict(orient="records")]


def _jit_function(autotuner: Any) -> Any:
    """The JITFunction under the autotuner (through heuristics), whose cache_key covers its source."""
    fn = autotuner.fn
    while not hasattr(fn, "cache_key") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def _name(autotuner: Any) -> str:
    return getattr(getattr(autotuner, "base_fn", None), "__name__", "kernel")

