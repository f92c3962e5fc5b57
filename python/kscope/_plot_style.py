"""The options of a plot (kscope.analyze.plot, ProfileResults.plot_roofline, kscope.compare's
plot=) and the checks of its file, made before the work whose result it draws."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from .errors import ConfigError

# Options of kscope.analyze.plot that the roofline does not use, with why.
_NOT_FOR_ROOFLINE = {
    "metric": "it plots each duration row with declared work",
    "show_aggregate": "a roofline has no aggregate point",
    "row_panels": "it draws one panel",
    "col_panels": "it draws one panel",
    "variant_fields": "every annotation and config is a point already",
    "variant_annotations": "every annotation and config is a point already",
}


@dataclass
class Style:
    filename: str | os.PathLike[str] | None  # None: not written (ProfileResults.plot_roofline)
    metric: Optional[str]
    title: str
    ylabel: Optional[str]
    annotate_points: bool
    show_aggregate: Optional[str]
    plot_type: str
    plot_width: float
    plot_height: float
    row_panels: Optional[Sequence[str]]
    col_panels: Optional[Sequence[str]]
    x_keys: Optional[Sequence[str]]
    print_data: bool
    variant_fields: Optional[Sequence[str]]
    variant_annotations: Optional[Sequence[str]]
    plot_callback: Optional[Callable[[Any], None]]

    def __post_init__(self):
        if self.plot_type not in ("line", "bar", "roofline"):
            raise ConfigError(f"plot_type must be 'line', 'bar' or 'roofline', not {self.plot_type!r}")
        if self.show_aggregate not in (None, "avg", "geomean"):
            raise ConfigError(f"show_aggregate must be None, 'avg' or 'geomean', not {self.show_aggregate!r}")
        if self.plot_callback is not None and not callable(self.plot_callback):
            raise ConfigError("plot_callback must be a function taking the matplotlib Figure")
        if self.filename is not None:
            if not isinstance(self.filename, (str, os.PathLike)) or not str(self.filename):
                raise ConfigError(f"filename must be a path such as 'plot.png', not {self.filename!r}")
            check_type(self.filename)
        for name in ("row_panels", "col_panels", "x_keys", "variant_fields", "variant_annotations"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ConfigError(f"{name} must be a list of names, e.g. [{value!r}], not {value!r}")
            setattr(self, name, None if value is None else list(value))
        if self.plot_type == "roofline":
            for option, why in _NOT_FOR_ROOFLINE.items():
                if getattr(self, option) is not None:
                    raise ConfigError(f"plot_type='roofline' does not take {option}= ({why}); leave it out")


def _supported_formats():
    from matplotlib.figure import Figure

    return Figure().canvas.get_supported_filetypes()


def check_type(filename):
    """ConfigError unless matplotlib can write a file of this name's type."""
    extension = os.path.splitext(str(filename))[1][1:].lower()
    supported = _supported_formats()
    if extension and extension not in supported:
        raise ConfigError(
            f"filename {str(filename)!r}: matplotlib cannot write '.{extension}' files; use one of "
            f"{', '.join('.' + e for e in sorted(supported))}"
        )


def check_filename(filename, owner="@kscope.analyze.plot"):
    """ConfigError unless the plot's type can be written and its directory exists and is writable:
    checked before the work whose result it draws (a sweep, a comparison), so a bad path never
    costs it."""
    check_type(filename)
    directory = os.path.dirname(os.path.abspath(filename))
    if not os.path.isdir(directory):
        raise ConfigError(
            f"filename {str(filename)!r} of {owner}: its directory {directory!r} does not exist; "
            f"create it, or give a path in an existing directory"
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ConfigError(
            f"filename {str(filename)!r} of {owner}: its directory {directory!r} is not writable; "
            f"give a path in a writable directory"
        )
