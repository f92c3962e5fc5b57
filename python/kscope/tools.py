"""Nsight Python 1.1's tool API: choose the process's default measurement backend.

    kscope.activate(kscope.Tool.CUPTI)   # every @kscope.analyze.kernel without backend= times
    ...                                  # kernels with CUPTI from now on
    kscope.deactivate()

The environment can choose too, without touching the code: KSCOPE_TOOL=ncu makes every call
without backend= measure as Tool.NCU does (Nsight Compute's gpu__time_duration.sum by default,
with the in-process counters backend: Nsight Python's default measurement), KSCOPE_TOOL=cupti as
Tool.CUPTI. activate() wins over the environment, and deactivate() gives it back.

As in Nsight Python 1.1, one tool is activated at a time: activating the active tool again does
nothing, activating another one while one is activated is refused, and deactivate() ends the
selection. Unlike 1.1, activation loads nothing (kscope's backends live in process and start
with each profiled call), so:
  - importing kscope activates no tool (NSPY_NCU_INIT_AT_IMPORT is not read; KSCOPE_TOOL is);
  - activate() works before or after CUDA is initialised, and before or after any NVTX use;
  - deactivate() ends either tool, Tool.NCU included (1.1 keeps its injection library loaded).
A backend= given to @kscope.analyze.kernel overrides the active tool.
"""

from __future__ import annotations

from collections.abc import Sequence

import enum
import os
import threading

from . import _core
from ._roofline import _shown
from .errors import BackendError, ConfigError

__all__ = ["ENVIRONMENT", "Tool", "activate", "deactivate", "get_active_tool"]

# The environment variable that chooses a tool for the whole process: 'ncu' or 'cupti'.
ENVIRONMENT = "KSCOPE_TOOL"


class Tool(str, enum.Enum):
    """The tools of Nsight Python 1.1, as the kscope backends that measure what they measure.

    NCU: Nsight Compute metrics, measured in process by the 'counters' backend (same names, same
        meaning as ncu's; no ncu CLI involved). Without metrics= a call measures Nsight Python's
        default, gpu__time_duration.sum.
    CUPTI: kernel durations from CUPTI's activity records, the 'cupti' backend.
    """

    NCU = "ncu"
    CUPTI = "cupti"

    @classmethod
    def _missing_(cls, value: object) -> Tool:
        """A tool's name in any case, as KSCOPE_TOOL takes it; ConfigError (a ValueError, as Enum's
        own refusal) naming the tools for anything else."""
        if isinstance(value, str):
            for tool in cls:
                if tool.value == value.strip().lower():
                    return tool
        raise ConfigError(f"{_shown(value)} is not a kscope.Tool: the tools are 'ncu' (kscope.Tool.NCU: Nsight Compute's "
                          f"metrics, measured in process) and 'cupti' (kscope.Tool.CUPTI: CUPTI kernel durations)")


_BACKEND = {Tool.NCU: "counters", Tool.CUPTI: "cupti"}

# Nsight Python's default metric, which its NCU tool measures when metrics= is not given.
(_NCU_DEFAULT_METRIC,) = _core.default_metrics(_core.Backend.ncu)  # Nsight Compute's kernel duration

def _named(tool: Tool) -> str:
    return f"kscope.Tool.{tool.name}"


def _from_environment() -> Tool | None:
    """The tool KSCOPE_TOOL names (None when unset or empty); ConfigError for another value."""
    value = os.environ.get(ENVIRONMENT, "").strip()
    if not value:
        return None
    try:
        return Tool(value.lower())
    except ValueError:
        raise ConfigError(
            f"{ENVIRONMENT}={value!r} names no tool: set it to 'ncu' (Nsight Compute's metrics, "
            f"gpu__time_duration.sum by default, measured in process) or 'cupti' (CUPTI kernel "
            f"durations), or unset it"
        ) from None


_lock = threading.Lock()
_active: Tool | None = None


def activate(tool: Tool) -> None:
    """Makes `tool` (kscope.Tool.NCU or kscope.Tool.CUPTI) the process's default backend, over
    the one KSCOPE_TOOL names, if any.

    Activating the active tool again does nothing. Raises ConfigError (a ValueError) for
    anything but a kscope.Tool, and BackendError (a RuntimeError) when another tool is activated.
    Whether the backend can measure here is checked by the first profiled call, which names
    the fix if it cannot (kscope.doctor() tells beforehand).
    """
    global _active
    if not isinstance(tool, Tool):
        raise ConfigError(
            f"activate() takes a kscope.Tool ({' or '.join(map(_named, Tool))}), not {tool!r}"
        )
    with _lock:
        if _active is not None and _active is not tool:
            raise BackendError(
                f"{_named(_active)} is already active; cannot switch to {_named(tool)}: call "
                f"kscope.deactivate() first, or choose the backend of one function with "
                f"@kscope.analyze.kernel(backend='{_BACKEND[tool]}')"
            )
        _active = tool


def deactivate() -> None:
    """Ends the activated tool's selection, if any: KSCOPE_TOOL's tool, if set, is active again,
    else the default backend is chosen as without a tool."""
    global _active
    with _lock:
        _active = None


def get_active_tool() -> Tool | None:
    """The active kscope.Tool: the activated one, else the one KSCOPE_TOOL names, else None."""
    return _active if _active is not None else _from_environment()


def chosen_by() -> str | None:
    """How the active tool was chosen, in the words that undo it: 'kscope.activate(...)' or
    'KSCOPE_TOOL=...'; None when no tool is active."""
    if _active is not None:
        return f"kscope.activate({_named(_active)})"
    tool = _from_environment()
    return None if tool is None else f"{ENVIRONMENT}={tool.value}"


def default_backend() -> str | None:
    """The backend the active tool chooses ('counters' for NCU, 'cupti' for CUPTI), or None
    when no tool is active. For kscope.analyze.kernel: an explicit backend= wins over it, and
    it wins over the choice made from the metrics."""
    tool = get_active_tool()
    return None if tool is None else _BACKEND[tool]


def switch_back(chooser: str) -> str:
    """What a call whose counters the active tool chose may do where counters are not permitted:
    the guidance appended to its BackendError (`chooser`: chosen_by()'s answer)."""
    undo = (f"set {ENVIRONMENT}=cupti (or unset it)" if chooser.startswith(ENVIRONMENT)
            else "call kscope.deactivate() (or activate kscope.Tool.CUPTI)")
    return (f"{chooser} chose the counters backend (Nsight Compute's metrics, measured in this process). To "
            f"measure CUPTI's kernel durations instead (cupti__kernel_duration, a different quantity), {undo}, "
            f"or pass backend='cupti' to the function")


def tool_metrics(metrics: Sequence[str] | None) -> tuple[Sequence[str] | None, str | None]:
    """The metrics a call without backend= measures under the active tool, and a note to show
    the user once (None when there is nothing to say): returns (metrics, note).

    metrics is the call's metrics= (None or a list of names).
      - No tool: metrics unchanged.
      - Tool.NCU: None becomes Nsight Python's default ['gpu__time_duration.sum'].
      - Tool.CUPTI: None becomes ['cupti__kernel_duration'], and 'gpu__time_duration.sum' (the
        one metric 1.1's CUPTI tool accepts) is measured as 'cupti__kernel_duration', with a
        note saying so. Other names are left for the metric check to refuse.
    """
    tool = get_active_tool()
    if tool is None:
        return metrics, None
    if tool is Tool.NCU:
        return ([_NCU_DEFAULT_METRIC] if metrics is None else list(metrics)), None
    (duration,) = _core.default_metrics(_core.Backend.cupti)
    if metrics is None:
        return [duration], None
    if _NCU_DEFAULT_METRIC not in metrics:
        return list(metrics), None
    note = (
        f"{_named(tool)} is active: metrics=['{_NCU_DEFAULT_METRIC}'] is measured as CUPTI's "
        f"kernel duration, and the rows say '{duration}' (ns, GPU end - start of each kernel, which is "
        f"what Nsight Python 1.1's CUPTI tool reports under that name). Nsight Compute's "
        f"{_NCU_DEFAULT_METRIC} is a hardware-counter measurement, a different quantity: for "
        f"it, activate kscope.Tool.NCU or pass backend='counters'. Pass "
        f"metrics=['{duration}'] to drop this note."
    )
    return [duration if m == _NCU_DEFAULT_METRIC else m for m in metrics], note
