"""Custom information collectors: callbacks whose values become DataFrame columns (Nsight Python's,
experimental there; kscope.experimental.collect marks a function as one)::

    @kscope.experimental.collect(scope=kscope.CollectionScope.RUN)
    def gpu_temp_c(*config):
        return read_temperature()

    @kscope.analyze.kernel(configs=[(1024,), (2048,)], runs=10, info_collectors=[gpu_temp_c])
    def f(n): ...

When each scope's callback runs, and with what (as in Nsight Python; never for warm-up runs, and
once per run when counter metrics replay the body):
    ONCE        once per call of the profiled function, before the first config: callback()
    CONFIG      once per config, before its first run: callback(*config)
    RUN         before each recorded run: callback(*config)
    ANNOTATION  each time a recorded run enters an annotation: callback(annotation_name, *config)
A callback with a fixed number of parameters gets only that many config values. A collector that
raises stops the sweep with a SweepError naming it (its exception as __cause__, the rows measured
before it in .partial_results); Nsight Python records None instead.

Columns: ONCE collectors, and those whose values are not numbers, give one column named after the
collector (for the summary, the first value of the row's runs); numeric CONFIG, RUN and ANNOTATION
collectors give <name>_Avg, <name>_Std, <name>_Min and <name>_Max over the runs behind each summary
row. raw_dataframe() has one column per collector with each run's value. Values that are not None,
a bool, a number or a str are stored as their str().
"""

from __future__ import annotations

import enum
import inspect
import numbers
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any, Callable, Union

import numpy as np

from .errors import ConfigError

__all__ = ["CollectionScope", "InfoCollector"]

# A table cell as the engine holds it.
_Cell = Union[bool, int, float, str, None]


class CollectionScope(enum.Enum):
    """When a collector is called: ONCE per profiled call, per CONFIG, per recorded RUN, or at
    each ANNOTATION a recorded run enters."""

    ONCE = "once"
    CONFIG = "config"
    RUN = "run"
    ANNOTATION = "annotation"


@dataclass
class InfoCollector:
    """A collector given by name: its column is ``name``, ``callback`` is called at ``scope``."""

    name: str
    callback: Callable[..., Any]
    scope: CollectionScope

    def collect(self, *args: Any) -> Any:
        """Calls the callback: without arguments for the ONCE scope, with ``args`` otherwise."""
        if scope_value(self.scope, repr(self.name)) == CollectionScope.ONCE.value:
            return self.callback()
        return self.callback(*args)


_SCOPES = sorted(s.value for s in CollectionScope)


def scope_value(scope: CollectionScope | str, label: str) -> str:
    """The scope's string value; ConfigError (a ValueError) for anything else."""
    if isinstance(scope, CollectionScope):
        return scope.value
    if isinstance(scope, str) and scope in _SCOPES:
        return scope
    raise ConfigError(f"Invalid scope {scope!r} for collector {label}. Expected one of {_SCOPES} or a "
                      f"kscope.CollectionScope.")


def normalize(info_collectors: Any) -> list[tuple[str, Callable[..., Any], str]]:
    """info_collectors= as [(name, callback, scope value)]: decorated functions, InfoCollector
    objects and (name, callback, scope) tuples, with Nsight Python's errors for anything else."""
    if info_collectors is None:
        return []
    if isinstance(info_collectors, (str, bytes)) or not hasattr(info_collectors, "__iter__"):
        raise ConfigError(f"info_collectors must be a list of collectors, not {info_collectors!r}")
    out = []
    for c in info_collectors:
        if isinstance(c, InfoCollector):
            out.append((c.name, c.callback, scope_value(c.scope, repr(c.name))))
        elif isinstance(c, tuple):
            if len(c) != 3:
                raise ConfigError(f"Tuple-format info collector must be (name, callback, scope); got {c!r}.")
            name, callback, scope = c
            if not isinstance(name, str) or not callable(callback):
                raise TypeError(f"Tuple-format info collector must be (str name, callable callback, scope); "
                                f"got {c!r}.")
            out.append((name, callback, scope_value(scope, repr(name))))
        elif callable(c):
            if not hasattr(c, "_kscope_collector_scope"):
                raise ConfigError(f"Collector function {getattr(c, '__name__', c)} is missing "
                                  f"@kscope.experimental.collect(scope=...) decorator")
            name = c._kscope_collector_name
            out.append((name, c, scope_value(c._kscope_collector_scope, repr(name))))
        else:
            raise TypeError(f"Invalid collector type: {type(c)}. Expected a function decorated with "
                            f"@kscope.experimental.collect, an InfoCollector, or a tuple (name, callback, scope).")
    return out


def bind_args(callback: Callable[..., Any], leading: tuple[Any, ...], config: Sequence[Any]) -> list[Any]:
    """The arguments of a callback: ``leading`` (the annotation name), then the config values, of
    which a callback with a fixed number of parameters gets only as many as it takes (so defaults
    padding a config do not break it)."""
    try:
        params = list(inspect.signature(callback).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: everything
        return [*leading, *config]
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return [*leading, *config]
    positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    return [*leading, *config[: max(0, len(positional) - len(leading))]]


def check_arguments(collectors: Sequence[tuple[str, Callable[..., Any], str]], n_params: int) -> None:
    """Each collector against the arguments its scope calls it with, for a profiled function of
    `n_params` parameters: checked when the function is decorated, as derive_metric and work are."""
    for name, callback, scope in collectors:
        if scope == CollectionScope.ONCE.value:
            args, given = [], "no arguments"
        else:
            leading = ("annotation",) if scope == CollectionScope.ANNOTATION.value else ()
            args = bind_args(callback, leading, list(range(n_params)))
            given = ("the annotation's name, then " if leading else "") + f"the {n_params} config values"
        try:
            inspect.signature(callback).bind(*args)
        except ValueError:  # a builtin without a signature: the call tells
            continue
        except TypeError:
            label = f"{getattr(callback, '__name__', callback)!s}{inspect.signature(callback)}"
            raise ConfigError(
                f"info collector {name!r} of scope {scope.upper()} is called with {given}, which {label} does not "
                f"accept: give it parameters for them (a callback with fewer gets only as many config values), or "
                f"*config"
            ) from None


def _cell(value: Any) -> _Cell:
    """A value as the engine's tables hold it: None, bool, int, float or str."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value) if -(2**63) <= value < 2**63 else float(value)  # type: ignore[operator]  # numbers.Integral is untyped
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


def engine_collectors(
    collectors: Sequence[tuple[str, Callable[..., Any], str]], configs: Sequence[Sequence[Any]]
) -> list[tuple[str, str, Callable[[int, str], _Cell]]]:
    """[(name, scope, call)] for the engine: call(config_index, annotation) calls the user's
    callback with the arguments of its scope and returns its value as a table cell."""

    def caller(callback: Callable[..., Any], scope: str) -> Callable[[int, str], _Cell]:
        def call(config_index: int, annotation: str) -> _Cell:
            if scope == CollectionScope.ONCE.value:
                return _cell(callback())
            leading = (annotation,) if scope == CollectionScope.ANNOTATION.value else ()
            return _cell(callback(*bind_args(callback, leading, configs[config_index])))

        return call

    return [(name, scope, caller(callback, scope)) for name, callback, scope in collectors]
