"""The exceptions kscope raises. Every message names the problem and the fix.

The engine's C++ errors arrive as these classes (kscope._core translates them): ConfigError for
bad configs or options, AnnotationError for a broken region rule, BackendError when nothing can
measure here, ThermalError when the GPU did not cool down in time, InternalError for a kscope bug,
SweepError when a config failed mid-sweep. SweepInterrupted (Ctrl-C, a Jupyter interrupt) is a
KeyboardInterrupt, not one of these: code that catches Exception does not swallow it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._results import ProfileResults

__all__ = [
    "AnnotationError",
    "BackendError",
    "ConfigError",
    "CudaError",
    "InternalError",
    "ProfilerException",
    "SweepError",
    "SweepInterrupted",
    "ThermalError",
]


class ProfilerException(Exception):
    """Base class of every kscope error (the name Nsight Python uses)."""


class ConfigError(ProfilerException, ValueError):
    """Bad configs, options or sweep; raised before anything is measured."""


class AnnotationError(ProfilerException):
    """A region broke a rule: nested, repeated in one run, no kernel, or several kernels."""


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

    ``__cause__`` is the original exception (the body's own, or an AnnotationError...),
    ``failed_config`` names the config, and ``partial_results`` holds every row measured before it
    (a ProfileResults, like a successful call returns).
    """

    def __init__(self, message: str, failed_config: str = "", partial_results: ProfileResults | None = None) -> None:
        super().__init__(message)
        self.failed_config = failed_config
        self.partial_results = partial_results


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT, a Jupyter interrupt) stopped a sweep at the end of the run in progress.

    The clocks are restored, ``partial_results`` holds every row measured before it (a
    ProfileResults) and, with output_prefix, the files are written: call again with resume=True to
    measure only the rest. A KeyboardInterrupt, so ``except Exception`` does not swallow it.
    """

    def __init__(self, message: str, interrupted_config: str = "", partial_results: ProfileResults | None = None) -> None:
        super().__init__(message)
        self.interrupted_config = interrupted_config
        self.partial_results = partial_results
