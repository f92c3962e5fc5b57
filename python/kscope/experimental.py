"""Nsight Python's experimental API: custom information collectors (kscope.info_collector says
when each scope is called and which columns it gives)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from .errors import ConfigError
from .info_collector import CollectionScope

__all__ = ["collect"]

_F = TypeVar("_F", bound=Callable[..., Any])


def collect(
    _func: _F | None = None, *, scope: CollectionScope | Literal["once", "config", "run", "annotation"]
) -> Any:
    """Marks a function as an information collector for ``info_collectors=[...]`` of
    kscope.analyze.kernel; its name becomes its column. ``scope``: a kscope.CollectionScope or its
    value ('once', 'config', 'run', 'annotation'). Works as a decorator and as a direct call::

        @kscope.experimental.collect(scope=kscope.CollectionScope.RUN)
        def gpu_temp_c(*config): ...

        gpu_temp_c = kscope.experimental.collect(read_temperature, scope="run")

    Returns the function itself, marked.
    """
    try:
        value = CollectionScope(scope).value
    except (TypeError, ValueError):
        valid = ", ".join(repr(s.value) for s in CollectionScope)
        raise ConfigError(f"Invalid collection scope {scope!r}. Expected one of {valid} or a "
                          f"kscope.CollectionScope.") from None

    def mark(func: _F) -> _F:
        if not callable(func):
            raise TypeError("collect can only decorate a callable")
        func._kscope_collector_scope = value  # type: ignore[attr-defined]
        func._kscope_collector_name = func.__name__  # type: ignore[attr-defined]
        return func

    return mark if _func is None else mark(_func)
