"""kscope.doctor(): what kscope can measure on this machine, and why not."""

from __future__ import annotations

from typing import Any

import json

from . import _core


def doctor(verbose: bool = True) -> dict[str, Any]:
    """Runs the environment checks (driver, devices, CUPTI and its owner, counter permission,
    NVML, clock-lock permission, each GPU's energy counter, ncu, whether CUDA is initialised)
    without changing anything.
    Prints the readable report when `verbose`, and returns it as a dict; its "exit_code" is
    0 (every backend works), 1 (some do not: the report says why) or 2 (nothing can measure)."""
    as_json, as_text = _core.doctor()
    if verbose:
        print(as_text)
    return json.loads(as_json)
