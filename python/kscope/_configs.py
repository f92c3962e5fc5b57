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
import warnings
from collections.abc import Iterator, Sequence

import numpy as np

from .errors import ConfigError, SweepWarning, also_builtin

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
        given_once = isinstance(configs, Iterator)
        configs = list(configs)  # once: a generator would be empty on the next call
        if not configs and given_once:
            raise ConfigError(
                "configs is an iterator that gave no configs: it is used up (a generator gives its values once, "
                "so a second call with it gets none); pass a list, e.g. configs=list(...), to sweep the same "
                "configs at every call"
            )
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
    # An object whose class says what it is only through __str__ (triton.Config) is shown by it, not
    # by the default repr's address.
    own_str = type(v).__repr__ is object.__repr__ and type(v).__str__ is not object.__str__
    text = " ".join((str(v) if own_str else repr(v)).split())
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"


def _same(a, b):
    """Whether two config values are one value: the same object, or equal as Python's == says where it
    answers True or False (1, 1.0 and True are one value, as in a set; 0.0 and -0.0 too). A tensor's
    elementwise == is no answer: two tensors are one value only as one object."""
    if a is b:
        return True
    try:
        equal = a == b
    except Exception:
        return False
    return isinstance(equal, (bool, np.bool_)) and bool(equal)


def _group(value, label):
    """Where to look for a value's repeats: values equal by == share it (numbers and strings hash
    as they compare); other objects are compared with those of the same label."""
    if isinstance(value, (numbers.Number, str, np.generic)):
        return ("value", value)
    return ("label", label)


def _warn_of_wide_integers(names, columns, configs):
    """A parameter of integers one of which the engine cannot hold (beyond int64) is saved as labels."""
    for p, name in enumerate(names):
        values = [c[p] for c in configs]
        if all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in values) and any(
            _engine_type(v) is None for v in values
        ):
            wide = next(v for v in values if _engine_type(v) is None)
            warnings.warn(
                f"parameter {name!r} has the integer {_label(wide)}, beyond the 64-bit integers the engine holds, "
                f"so its values are kept as text labels ({', '.join(map(repr, columns[p][:3]))}...): the "
                f"DataFrames show your values, but a saved file (kscope.load, kscope compare) has the labels. "
                f"Keep the values within -2**63 .. 2**63 - 1 to have them saved as integers",
                SweepWarning,
                stacklevel=4,
            )


def engine_rows(configs, names):
    """The configs as the engine's sweep rows: native values where a whole parameter has one
    engine type, repr() labels otherwise (see the module docstring). A config given twice (each
    value equal by ==, see _same) is a ConfigError; configs of objects that only look alike (one
    label) get labels told apart by their position, "#2", "#3", ... after the first."""
    n_params = len(names)
    columns, labelled = [], []
    for p in range(n_params):
        values = [c[p] for c in configs]
        types = {_engine_type(v) for v in values}
        kind = types.pop() if len(types) == 1 else None
        columns.append([kind(v) for v in values] if kind else [_label(v) for v in values])
        if not kind:
            labelled.append(p)
    _warn_of_wide_integers(names, columns, configs)
    rows = [list(row) for row in zip(*columns)] if n_params else [[] for _ in configs]
    alike: dict[tuple, list[int]] = {}  # configs by where their repeats would be
    labels: dict[tuple, int] = {}  # how many configs have each engine row
    for i, row in enumerate(rows):
        key = tuple(_group(configs[i][p], row[p]) for p in range(n_params))
        try:
            earlier = alike.setdefault(key, [])
        except TypeError:  # a number type that does not hash: by its labels
            earlier = alike.setdefault(tuple(("label", v) for v in row), [])
        for j in earlier:
            if all(_same(configs[i][p], configs[j][p]) for p in range(n_params)):
                first, again = (", ".join(f"{name}={_label(configs[k][p])}" for p, name in enumerate(names))
                                for k in (j, i))
                given = first if first == again else f"{first} and {again}, equal by == as in a Python set"
                raise ConfigError(
                    f"configs {j + 1} and {i + 1} are the same ({given}): each config is measured once; "
                    f"remove the repeat"
                )
        earlier.append(i)
        labels[tuple(row)] = labels.get(tuple(row), 0) + 1
        if labels[tuple(row)] > 1 and labelled:
            rows[i][labelled[0]] += f" #{labels[tuple(row)]}"
    return rows
