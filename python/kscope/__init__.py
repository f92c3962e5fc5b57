"""kscope: profiling as code for GPU kernels, on the kscope C++ engine.

The surface is Nsight Python's: decorate a function with ``@kscope.analyze.kernel``, mark the
measured code with ``kscope.annotate``, optionally plot with ``@kscope.analyze.plot``; calling the
function sweeps its configs and returns a ProfileResults (``.to_dataframe()``).

Importing kscope has no side effects: nothing touches CUDA until the first profiled call, so it
may come before or after torch/CUDA initialisation.
"""

from . import analyze, testing
from ._core import __version__, bottleneck_rule, count_passes, describe_metric, list_metrics, sol_metrics
from ._options import VerbosityLevel
from ._results import ProfileResults
from ._doctor import doctor
from ._results import speed_of_light
from .annotation import annotate
from .errors import (
    AnnotationError,
    BackendError,
    ConfigError,
    CudaError,
    InternalError,
    ProfilerException,
    SweepError,
    ThermalError,
)

__all__ = [
    "AnnotationError",
    "BackendError",
    "ConfigError",
    "CudaError",
    "InternalError",
    "ProfileResults",
    "ProfilerException",
    "SweepError",
    "ThermalError",
    "VerbosityLevel",
    "analyze",
    "annotate",
    "bottleneck_rule",
    "count_passes",
    "describe_metric",
    "doctor",
    "list_metrics",
    "sol_metrics",
    "speed_of_light",
    "testing",
]
