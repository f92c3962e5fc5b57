"""The user's callbacks of analyze.kernel's options as the engine calls them: combine_kernel_metrics
and derive_metric, each wrapped so that what it returns is checked and a mistake named in the
user's terms."""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Mapping

import numpy as np

from ._roofline import _accepts
from .errors import ConfigError, ProfilerWarning


def combine_adapter(fn):
    """combine_kernel_metrics as the engine calls it: (a, b) -> float, its result checked."""
    if fn is None:
        return None

    def combine(a, b):
        out = fn(a, b)
        if not isinstance(out, (str, bytes, bool)) and out is not None:
            try:
                return float(out)
            except (TypeError, ValueError):
                pass
        raise ConfigError(
            f"combine_kernel_metrics returned {out!r} for the kernel values {a} and {b}: it must return one "
            f"number, e.g. combine_kernel_metrics=lambda a, b: a + b"
        )

    return combine


def derive_adapter(fn, metrics, configs, n_params):
    """derive_metric as the engine calls it: (values, config index) -> [(name, value, unit)].
    The user's function gets (*metric_values, *config_values) and may return a value, a
    (value, unit) tuple, or a mapping of names to either."""
    if fn is None:
        return None
    n = len(metrics) + n_params
    if not _accepts(fn, n):
        signature = inspect.signature(fn)  # _accepts found one
        raise ConfigError(
            f"derive_metric expects {n} parameters ({len(metrics)} metric values + {n_params} configs), but "
            f"has {len(signature.parameters)} parameters: it is called with the value(s) of {metrics}, then "
            f"the {n_params} config values, which {getattr(fn, '__name__', fn)!s}{signature} does not accept; "
            f"give it {n} parameters, or *args"
        )
    name = getattr(fn, "__name__", "derived")
    unitless = set()
    shapes = "return a number, a (value, unit) tuple, or a dict of them"

    def number(key, value, values):
        what = f"derive_metric {name}() returned {value!r}" + ("" if key == name else f" for {key!r}")
        if value is None:
            if all(math.isnan(v) for v in values):  # a failed run (ignore_failures): NaN whatever it returns
                return math.nan
            raise ConfigError(
                f"{what} (measured values {list(values)}): {shapes}; float('nan') for a value that does "
                f"not exist. Is a return statement missing?"
            )
        if isinstance(value, (tuple, list)):
            raise ConfigError(f"{what}, a {len(value)}-element {type(value).__name__}: {shapes}")
        if isinstance(value, (str, bytes)):
            raise ConfigError(f"{what}, text rather than a number: {shapes}")
        if isinstance(value, (bool, np.bool_)):
            raise ConfigError(f"{what}, a truth value rather than a number: {shapes} (float(...) of a flag "
                              f"that should count as 0 or 1)")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{what}, of type {type(value).__name__}, not a number: {shapes}") from None

    def entry(key, out, values):
        pair = isinstance(out, (tuple, list)) and len(out) == 2
        value, unit = (out[0], out[1]) if pair else (out, None)
        if unit is not None and not isinstance(unit, str):
            raise ConfigError(f"derive_metric {name}() returned the unit {unit!r} for {key!r}, of type "
                              f"{type(unit).__name__}: a unit is a string such as 'GB/s'; {shapes}")
        derived = key, number(key, value, values), "" if unit is None else str(unit)
        if not pair and key not in unitless:
            unitless.add(key)
            warnings.warn(
                f"Derived metric '{key}' does not have a unit specified. Return a tuple (value, unit) "
                f"instead of just the value. np.nan will be added to the 'Unit' column in the dataframe "
                f"(files written by the engine leave it empty).",
                ProfilerWarning,
                stacklevel=2,
            )
        return derived

    def adapter(values, config_index):
        out = fn(*values, *configs[config_index])
        if isinstance(out, Mapping):
            for k in out:
                if not isinstance(k, str):
                    raise ConfigError(f"derive_metric {name}() returned a dict with the key {k!r}, of type "
                                      f"{type(k).__name__}: each derived metric is named by a string key, "
                                      f"e.g. {{'bandwidth': (value, 'GB/s')}}")
            return [entry(k, v, values) for k, v in out.items()]
        return [entry(name, out, values)]

    return adapter
