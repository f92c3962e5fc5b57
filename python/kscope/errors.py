"""The exceptions kscope raises, and its warnings. Every message names the problem and the fix.

The engine's C++ errors arrive as these classes (kscope._core translates them): ConfigError for
bad configs or options, AnnotationError for a broken region rule (AnnotationUseError for how an
annotation was used, KernelCountError for what a region launched), BackendError when nothing can
measure here, ThermalError when the GPU did not cool down in time, InternalError for a kscope bug,
SweepError when a config failed mid-sweep. SweepInterrupted (Ctrl-C, a Jupyter interrupt) is a
KeyboardInterrupt, not one of these: code that catches Exception does not swallow it.

Where Nsight Python raises a built-in exception for a situation, kscope's is also an instance of
it: ConfigError is a ValueError, AnnotationUseError a ValueError, KernelCountError and BackendError
RuntimeErrors, and a SweepError is also an instance of its cause's built-in class (a body's
ValueError, a KernelCountError's RuntimeError), so Nsight Python's ``except`` clauses still catch.

Warnings: ProfilerWarning (a UserWarning) for how a call is set up or what happens to its files,
SweepWarning (also a RuntimeWarning) for what happened while measuring; the engine's warnings
arrive through Python's warnings module in these categories.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._measured import MeasuredResults

__all__ = [
    "AnnotationError",
    "AnnotationUseError",
    "BackendError",
    "ConfigError",
    "CudaError",
    "InternalError",
    "KernelCountError",
    "ProfilerException",
    "ProfilerWarning",
    "SweepError",
    "SweepInterrupted",
    "SweepWarning",
    "ThermalError",
]


class ProfilerException(Exception):
    """Base class of every kscope error (the name Nsight Python uses)."""


class ConfigError(ProfilerException, ValueError):
    """Bad configs, options or sweep; raised before anything is measured."""


class AnnotationError(ProfilerException):
    """A region broke a rule: how it was used (AnnotationUseError) or what it launched
    (KernelCountError)."""


class AnnotationUseError(AnnotationError, ValueError):
    """An annotation used against the rules: opened inside another one, its name repeated in one
    run, left open when the body returns. Raised where the annotation opens, so a body that catches
    it (``except ValueError``, as under Nsight Python) goes on and the sweep with it."""


class KernelCountError(AnnotationError, RuntimeError):
    """A region's kernels broke the one-kernel rule: none, several without combine_kernel_metrics,
    or other kernels in a replay pass than in the first (a RuntimeError, as in Nsight Python)."""


class BackendError(ProfilerException, RuntimeError):
    """The measurement backend cannot work here (no GPU, CUPTI taken, built without CUDA...)."""


class CudaError(BackendError):
    """A CUDA call failed."""


class ThermalError(ProfilerException):
    """The GPU did not cool down to thermal_cont within thermal_timeout (thermal_mode='manual')."""


class InternalError(ProfilerException):
    """A kscope invariant failed: a bug in kscope (please report it with the message)."""


class SweepError(ProfilerException):
    """A config failed mid-sweep.

    ``__cause__`` is the original exception (the body's own, or a KernelCountError...),
    ``failed_config`` names the config, and ``partial_results`` holds every row measured before it
    (a ProfileResults, like a successful call returns; kscope.evaluate's: an EvaluationResults). The
    error is also an instance of the cause's built-in class (ValueError, RuntimeError, ...), as
    Nsight Python lets that exception through.
    """

    def __init__(self, message: str, failed_config: str = "", partial_results: MeasuredResults | None = None) -> None:
        super().__init__(message)
        self.failed_config = failed_config
        self.partial_results = partial_results


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT, a Jupyter interrupt) stopped a sweep at the end of the run in progress.

    The clocks are restored, ``partial_results`` holds every row measured before it (a
    ProfileResults) and, with output_prefix, the files are written: call again with resume=True to
    measure only the rest. A KeyboardInterrupt, so ``except Exception`` does not swallow it.
    """

    def __init__(self, message: str, interrupted_config: str = "", partial_results: MeasuredResults | None = None) -> None:
        super().__init__(message)
        self.interrupted_config = interrupted_config
        self.partial_results = partial_results


_uncaught_interrupts: list[SweepInterrupted] = []


def _note_uncaught_interrupt(previous: Any) -> Any:
    def excepthook(kind: type[BaseException], value: BaseException, traceback: Any) -> None:
        previous(kind, value, traceback)
        if isinstance(value, SweepInterrupted):
            _uncaught_interrupts.append(value)

    return excepthook


def _end_as_interrupted() -> None:
    """A program ended by an uncaught SweepInterrupted ends as Python ends one by an uncaught
    KeyboardInterrupt, which it does for that class alone: killed by SIGINT, status 130 in a shell, so
    that the shell or the job scheduler sees a Ctrl-C rather than a failure (status 1). Registered
    when kscope is imported, so it runs after the atexit handlers registered later."""
    if not _uncaught_interrupts:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


sys.excepthook = _note_uncaught_interrupt(sys.excepthook)
atexit.register(_end_as_interrupted)


class ProfilerWarning(UserWarning):
    """Base class of kscope's warnings: how a call is set up (a backend fallback, an option not
    applied, a derived metric without a unit) or what happens to its files."""


class SweepWarning(ProfilerWarning, RuntimeWarning):
    """Something that happened while measuring and was recorded rather than raised: a failure
    swallowed by annotate(ignore_failures=True), an info collector that raised, a return value
    ignored (RuntimeWarnings in Nsight Python)."""


_combined: dict[tuple[type, type], type] = {}


def also_builtin(cls: type[Any], builtin: type[BaseException] | None) -> type[Any]:
    """A subclass of the kscope class `cls` that is also a `builtin` exception (the type Nsight
    Python raises for the same situation): `cls` itself when it already is one, when `builtin` is
    None, or when the two cannot be combined."""
    if builtin is None or issubclass(cls, builtin):
        return cls
    key = (cls, builtin)
    if key not in _combined:
        try:
            _combined[key] = type(cls.__name__, (cls, builtin), {
                "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__})
        except TypeError:  # instance layouts that do not combine
            _combined[key] = cls
    return _combined[key]


def builtin_class(error: BaseException) -> type[BaseException] | None:
    """The nearest built-in exception class of `error` (ValueError for a ConfigError, RuntimeError
    for a torch OutOfMemoryError), None when there is none below Exception."""
    for c in type(error).__mro__:
        if c.__module__ == "builtins" and c not in (Exception, BaseException, object):
            return c
    return None


def sweep_error_for(cause: BaseException) -> type[SweepError]:
    """The SweepError class raised for `cause`: also an instance of its built-in class."""
    return also_builtin(SweepError, builtin_class(cause))
