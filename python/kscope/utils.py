"""The names of Nsight Python's ``nsight.utils`` that user code and tests import.

``row_panel`` and ``col_panel`` are empty placeholder classes in Nsight Python; here they hold
the config parameters that split an @kscope.analyze.plot figure into a grid of panels, so
``row_panels=kscope.row_panel("dtype")`` is ``row_panels=["dtype"]``. Nsight Python's other
utils are internal helpers of its ncu pipeline, absent here (docs/from-nsight-python.md).
"""

from __future__ import annotations

from ._options import VerbosityLevel
from .errors import ConfigError

__all__ = ["CUDA_CORE_AVAILABLE", "VerbosityLevel", "col_panel", "row_panel"]

# Nsight Python sets this when cuda-core is importable, which its annotate(ignore_failures=True)
# needs to launch a placeholder kernel for a failed run; its tests skip those cases without it.
# kscope records the failed run as NaN itself, so ignore_failures always works.
CUDA_CORE_AVAILABLE = True


class _Panels(list[str]):
    """Config parameter names, given as arguments: ``row_panel("dtype", "transpose")``."""

    def __init__(self, *fields: str) -> None:
        for field in fields:
            if not isinstance(field, str) or not field:
                raise ConfigError(
                    f"{type(self).__name__} takes config parameter names as arguments, e.g. "
                    f"{type(self).__name__}('dtype', 'transpose'), not {field!r}"
                )
        super().__init__(fields)

    def __repr__(self) -> str:
        return f"kscope.{type(self).__name__}({', '.join(map(repr, self))})"


class row_panel(_Panels):
    """Config parameters whose values give the rows of a plot's panel grid (``row_panels=``)."""


class col_panel(_Panels):
    """Config parameters whose values give the columns of a plot's panel grid (``col_panels=``)."""
