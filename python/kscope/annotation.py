"""kscope.annotate: marks the code whose kernels are measured (kscope::Annotation underneath)."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import ParamSpec, TypeVar

import functools

from . import _core
from .errors import AnnotationUseError

_P = ParamSpec("_P")
_R = TypeVar("_R")


class annotate:
    """A measured region, as a context manager or a decorator::

        with kscope.annotate("matmul"):
            c = a @ b

        @kscope.annotate("softmax")
        def softmax(x): ...

    Every kernel launched between the region's start and end, from any thread, belongs to it.
    Regions cannot be nested and a name may appear once per run. Outside a profiled call the
    region does nothing, so annotated code runs unchanged in production.

    ignore_failures=True swallows an exception raised inside the region: that run of the
    annotation is recorded as NaN (excluded from NumRuns) and the engine warns, naming the
    exception, instead of the whole sweep stopping.
    """

    def __init__(self, name: str, ignore_failures: bool = False) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"annotate needs a non-empty name string, not {name!r}")
        self.name = name
        self.ignore_failures = bool(ignore_failures)
        self._open: list[_core.Region] = []  # one Region per active entry; a second one is refused as nesting

    def __enter__(self) -> annotate:
        self._open.append(_core.Region(self.name))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if not self._open:
            raise AnnotationUseError(
                f"annotate({self.name!r}).__exit__() was called without a matching __enter__(): this object has "
                f"no open region to close. Use it as 'with kscope.annotate({self.name!r}):'"
            )
        region = self._open.pop()
        swallow = exc is not None and self.ignore_failures and isinstance(exc, Exception)
        if swallow:
            region.mark_failed(f"{type(exc).__name__}: {exc}")
        region.close()
        return swallow

    def __call__(self, func: Callable[_P, _R]) -> Callable[_P, _R | None]:  # None: a failure ignored
        @functools.wraps(func)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R | None:
            with self:
                return func(*args, **kwargs)
            return None  # the region swallowed a failure (ignore_failures=True)

        return wrapper
