"""kscope: profiling as code for GPU kernels, on the kscope C++ engine.

The surface is Nsight Python's: decorate a function with ``@kscope.analyze.kernel``, mark the
measured code with ``kscope.annotate``, optionally plot with ``@kscope.analyze.plot``; calling the
function sweeps its configs and returns a ProfileResults (``.to_dataframe()``).

Importing kscope has no side effects: nothing touches CUDA until the first profiled call, so it
may come before or after torch/CUDA initialisation.
"""

from . import analyze, exceptions, experimental, info_collector, testing, tools, utils
from ._core import __version__, bottleneck_rule, sol_metrics
from ._metrics import count_passes, describe_metric, list_metrics
from ._compare import CompareWarning, compare, load, load_evaluation
from ._evaluate import evaluate
from ._evaluate_many import evaluate_many
from ._evaluation import EvaluationResults
from ._options import VerbosityLevel
from ._results import ProfileResults
from ._lines import LineResults, load_lines, stall_reasons
from ._shard import MergeWarning, merge
from ._tune import RaceResults, tune
from ._doctor import doctor
from .energy import energy_efficiency, energy_metrics
from ._results import speed_of_light
from ._roofline import Work
from .annotation import annotate
from .info_collector import CollectionScope, InfoCollector
from .errors import (
    AnnotationError,
    AnnotationUseError,
    BackendError,
    ConfigError,
    CudaError,
    InternalError,
    KernelCountError,
    ProfilerException,
    ProfilerWarning,
    SweepError,
    SweepInterrupted,
    SweepWarning,
    ThermalError,
)
from .tools import Tool, activate, deactivate, get_active_tool
from .utils import col_panel, row_panel

__all__ = [
    "AnnotationError",
    "AnnotationUseError",
    "BackendError",
    "CollectionScope",
    "ConfigError",
    "CompareWarning",
    "CudaError",
    "EvaluationResults",
    "InfoCollector",
    "InternalError",
    "KernelCountError",
    "LineResults",
    "MergeWarning",
    "ProfileResults",
    "ProfilerException",
    "ProfilerWarning",
    "RaceResults",
    "SweepError",
    "SweepInterrupted",
    "SweepWarning",
    "ThermalError",
    "Tool",
    "VerbosityLevel",
    "Work",
    "activate",
    "analyze",
    "annotate",
    "bottleneck_rule",
    "col_panel",
    "compare",
    "count_passes",
    "deactivate",
    "describe_metric",
    "doctor",
    "energy_efficiency",
    "energy_metrics",
    "evaluate",
    "evaluate_many",
    "exceptions",
    "experimental",
    "get_active_tool",
    "info_collector",
    "list_metrics",
    "load",
    "load_evaluation",
    "load_lines",
    "merge",
    "row_panel",
    "sol_metrics",
    "speed_of_light",
    "stall_reasons",
    "testing",
    "tools",
    "tune",
    "utils",
]
