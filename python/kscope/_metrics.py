"""The counter backend's metric database (CUPTI's host API; offline with a chip name such as
"GH100"): the engine's functions, with their arguments checked in Python's terms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _core


def _text(function: str, parameter: str, value: object, example: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{function}() takes {parameter} as a string, e.g. {example}, not {value!r}")
    return value


def list_metrics(chip: str = "") -> list[dict[str, Any]]:
    """The chip's base metrics (name, type, unit, hw_unit, description, suffixes); the current GPU's
    without a chip. The command ``kscope metrics --chip GH100`` lists the same."""
    return _core.list_metrics(_text("list_metrics", "chip", chip, "'GH100'"))


def describe_metric(name: str, chip: str = "") -> dict[str, str]:
    """Type, unit, hardware unit and description of one metric name (with its suffix)."""
    return _core.describe_metric(_text("describe_metric", "name", name, "'dram__bytes_read.sum'"),
                                 _text("describe_metric", "chip", chip, "'GH100'"))


def count_passes(metrics: Sequence[str], chip: str = "") -> int:
    """How many replay passes the counter backend needs to collect these metrics together."""
    names = isinstance(metrics, Sequence) and not isinstance(metrics, str)
    if not names or not all(isinstance(m, str) for m in metrics):
        raise TypeError(f"count_passes() takes a list of metric names, e.g. ['dram__bytes_read.sum'], not {metrics!r}")
    return _core.count_passes(list(metrics), _text("count_passes", "chip", chip, "'GH100'"))
