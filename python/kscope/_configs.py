"""Configs: from what the user gave (Nsight Python's rules) to one tuple per config, and from those
tuples to what the engine's sweep can hold.

The engine's values are int64, double, string or bool. A parameter whose values are all of one of
those types reaches the engine as they are; any other parameter (a torch dtype, a tuple, a tensor,
or a mix of types) reaches it as short repr() labels, which the engine only shows in messages and
progress lines. The DataFrames put the user's original objects back, row by row, through the
config index the engine keeps with every row.
"""

import inspect
import numbers
from collections.abc import Sequence

import numpy as np

from .errors import ConfigError, also_builtin

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_LABEL_CHARS = 48


class Signature:
    """The parameters of a profiled function that configs bind to, in declaration order
    (positional, then keyword-only; *args and **kwargs are left empty)."""

    def __init__(self, func):
        self.func_name = func.__name__
        self.params = [
            p
            for p in inspect.signature(func).parameters.values()
            if p.kind in _POSITIONAL or p.kind is inspect.Parameter.KEYWORD_ONLY
        ]
        self.names = [p.name for p in self.params]
        self.required = sum(p.default is inspect.Parameter.empty for p in self.params)

    def call(self, func, config):
        """Calls func with one config: keyword-only parameters as keywords."""
        args = [v for p, v in zip(self.params, config) if p.kind in _POSITIONAL]
        kwargs = {p.name: v for p, v in zip(self.params, config) if p.kind not in _POSITIONAL}
        return func(*args, **kwargs)

    def from_call(self, args, kwargs):
        """The single config of a direct call f(*args, **kwargs), defaults filled in."""
        try:
            bound = inspect.Signature(self.params).bind(*args, **kwargs)
        except TypeError as e:
            raise ConfigError(
                f"{self.func_name}() was called with arguments that do not fit its parameters "
                f"({e}); call it with the values of one configuration, or with configs=[...]"
            ) from None
        bound.apply_defaults()
        return [tuple(bound.arguments[n] for n in self.names)]

    def configs(self, configs):
        """Nsight Python's config rules: a list of configs, each a sequence of parameter values
        (a bare value for a one-parameter function), short ones padded with the defaults."""
        if configs is None:
            if self.required:
                raise ConfigError(
                    f"You have provided no configs. Provide configs at decoration time or at runtime: "
                    f"{self.func_name}() has required parameters {self._required_names()}, so give "
                    f"@kscope.analyze.kernel(configs=[...]), or call {self.func_name}(configs=[...]) or "
                    f"{self.func_name}(<values>)."
                )
            configs = [()]
        if isinstance(configs, (str, bytes)) or not hasattr(configs, "__iter__"):
            # Nsight Python asserts that configs is iterable: also an AssertionError.
            raise also_builtin(ConfigError, AssertionError)(
                f"configs must be a list of configurations, not {type(configs).__name__}: "
                f"e.g. configs=[(1024,), (2048,)]"
            )
        configs = list(configs)  # once: a generator would be empty on the next call
        if not configs:
            raise ConfigError("configs cannot be empty: give at least one configuration")
        if not self.params and len(configs) > 1:
            raise ConfigError(
                f"{self.func_name}() has no parameters, so it has exactly one configuration; "
                f"drop configs= (or give the function a parameter to sweep)"
            )
        if len(self.params) == 1:
            configs = [(c,) if _is_scalar(c) else c for c in configs]
        for i, c in enumerate(configs):
            if _is_scalar(c):
                raise ConfigError(
                    f"config {i} ({c!r}) is not a sequence: {self.func_name}() has "
                    f"{len(self.params)} parameters {self.names}, so each config gives a tuple of "
                    f"their values"
                )
        lengths = [len(c) for c in configs]
        if len(set(lengths)) > 1:
            raise ConfigError(
                f"All configs must have the same number of arguments. Found lengths: {lengths}"
            )
        n = lengths[0]
        if not self.required <= n <= len(self.params):
            expects = (
                f"{len(self.params)}"
                if self.required == len(self.params)
                else f"between {self.required} and {len(self.params)}"
            )
            raise ConfigError(
                f"Configs have {n} arguments, but function expects {expects}: {self.func_name}() has the "
                f"parameters {self.names}; give one value per parameter, in that order"
            )
        defaults = tuple(p.default for p in self.params[n:])
        return [tuple(c) + defaults for c in configs]

    def _required_names(self):
        return [p.name for p in self.params if p.default is inspect.Parameter.empty]


def _is_scalar(x):
    return isinstance(x, str) or not isinstance(x, Sequence)


def _engine_type(v):
    if isinstance(v, (bool, np.bool_)):  # numpy's bool is no Python bool (nor an Integral)
        return bool
    if isinstance(v, numbers.Integral):
        return int if -(2**63) <= v < 2**63 else None  # type: ignore[operator]  # numbers.Integral is untyped
    if isinstance(v, numbers.Real):
        return float
    if isinstance(v, str):
        return str
    return None


def _label(v):
    text = " ".join(repr(v).split())
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"


def _same(a, b):
    """Whether two config values are one value: the same object, or of one type and equal (a
    tensor's elementwise == is no answer: two tensors are one value only as one object)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    try:
        equal = a == b
    except Exception:
        return False
    return isinstance(equal, (bool, np.bool_)) and bool(equal)


def engine_rows(configs, names):
    """The configs as the engine's sweep rows: native values where a whole parameter has one
    engine type, repr() labels otherwise (see the module docstring). A config given twice is a
    ConfigError; configs of objects that only look alike (one label) get labels told apart by
    their position, "#2", "#3", ... after the first."""
    n_params = len(names)
    columns, labelled = [], []
    for p in range(n_params):
        values = [c[p] for c in configs]
        types = {_engine_type(v) for v in values}
        kind = types.pop() if len(types) == 1 else None
        columns.append([kind(v) for v in values] if kind else [_label(v) for v in values])
        if not kind:
            labelled.append(p)
    rows = [list(row) for row in zip(*columns)] if n_params else [[] for _ in configs]
    alike: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        earlier = alike.setdefault(tuple(row), [])
        for j in earlier:
            if all(_same(configs[i][p], configs[j][p]) for p in range(n_params)):
                given = ", ".join(f"{name}={configs[i][p]!r}" for p, name in enumerate(names))
                raise ConfigError(
                    f"configs {j + 1} and {i + 1} are the same ({given}): each config is measured once; "
                    f"remove the repeat"
                )
        earlier.append(i)
        if len(earlier) > 1 and labelled:
            rows[i][labelled[0]] += f" #{len(earlier)}"
    return rows
