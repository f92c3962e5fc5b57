"""ProfileResults: the engine's Results as pandas DataFrames, with the user's config values."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import os

import numpy as np
import pandas as pd

from . import _core, _html, _notebook, _roofline
from ._configs import _engine_type
from ._plot_style import Style, check_filename

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# The engine's column schema: each column's type, and what the readable view shows (str()).
_COLUMN_TYPES = dict(_core.summary_columns() + _core.sample_columns())
# The derived results' tables (evaluation, findings, race, comparison): each column's type, by kind.
DERIVED_COLUMN_TYPES = {kind: dict(columns) for kind, columns in _core.derived_columns().items()}
_CONSOLE = _core.console_columns()
_ROOFLINE_CONSOLE = _core.roofline_console_columns()


class ProfileResults:
    """What a call of a kscope.analyze.kernel function returns.

    ``to_dataframe()`` is the summary: one row per (annotation, config, metric), the columns of
    the C++ summary table (the info collectors' last), in Nsight Python's order: the measured
    metrics' rows, then the derived ones (Unit NaN where derive_metric gave none). ``raw_dataframe()`` holds the raw per-run samples behind it. In both,
    the config columns hold the values the configs gave (a torch dtype stays a torch dtype).
    """

    def __init__(self, core_results: _core.Results, configs: Sequence[tuple[Any, ...]], parameters: Sequence[str]) -> None:
        self._core = core_results
        self._configs = configs
        self.parameters = list(parameters)  # the config columns, in signature order
        self._summary: pd.DataFrame | None = None
        self._samples: pd.DataFrame | None = None
        self.figure: Figure | None = None  # @kscope.analyze.plot: the matplotlib Figure it drew

    def to_dataframe(self) -> pd.DataFrame:
        """The summary: one row per (annotation, config, metric), measured metrics first, then
        derived ones. Columns: Annotation, one per config parameter, Metric, Unit, AvgValue,
        StdDev, MinValue, MaxValue, Median, NumRuns, CI95_Lower, CI95_Upper, RelativeStdDevPct,
        StableMeasurement, the normalization and session columns, the clocks, ThrottledRuns,
        Converged, ThermalPauses, the declared work and roofline columns where work= was given,
        then the info collectors' (docs/table.md says what each means). A copy: changing it
        changes nothing here.

            df = results.to_dataframe()
            df[df.Metric == "cupti__kernel_duration"][["n", "Median", "CI95_Lower", "CI95_Upper"]]
        """
        if self._summary is None:
            self._summary = self._frame(*self._core.summary())
        return self._summary.copy()

    def raw_dataframe(self) -> pd.DataFrame:
        """Every recorded run's value behind the summary: one row per (annotation, config, run,
        metric, kernel), with the run's Throttled flag, the clocks observed around it and the
        info collectors' values for it. Warm-up runs are not recorded. A copy."""
        if self._samples is None:
            self._samples = self._frame(*self._core.samples())
        return self._samples.copy()

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes everything (session, settings, summary and raw samples) to ``path`` in kscope's
        results format (JSON), which kscope.load and ``kscope compare`` read. Config values other
        than int, float, str and bool (a torch dtype, a tuple) are saved as their short repr()
        labels, the form the engine holds them in."""
        self._core.write_json(os.fspath(path))

    def to_gbench_json(self, path: str | os.PathLike[str]) -> None:
        """Writes ``path`` in Google Benchmark's JSON format, as its compare.py and benchmark
        dashboards read it: a benchmark per annotation and config (e.g. "gemm/n:1024/dtype:f16"),
        one repetition per run with its duration as real_time, the run's other metrics as counters,
        and the mean, median, stddev and cv aggregates."""
        self._core.write_gbench_json(os.fspath(path))

    @property
    def report_path(self) -> str | None:
        """backend='ncu': the Nsight Compute report (.ncu-rep); None otherwise."""
        return self._core.report_path() or None

    def speed_of_light(self) -> pd.DataFrame:
        """Counter results only: per (annotation, config) compute vs memory throughput in % of
        peak and the Bottleneck (kscope.bottleneck_rule() states the rule)."""
        return speed_of_light(self)

    def roofs(self) -> pd.DataFrame:
        """The roofs of the device these results were measured on: the DRAM bandwidth (GB/s) and the
        peak FLOP/s (TFLOP/s) of each kind it has, at its rated clocks and at the mean of the clocks
        observed during the samples (docs/roofline.md)."""
        return _roofline.roofs(self._core, self.raw_dataframe())

    def plot_roofline(self, filename: str | os.PathLike[str] | None = None, *, title: str = "kscope roofline",
                      annotate_points: bool = False, x_keys: Sequence[str] | None = None,
                      plot_width: float = 8, plot_height: float = 6) -> Figure:
        """Draws the rows with declared work (the work= option) on a roofline, log-log: one point
        per annotation and config at (arithmetic intensity, achieved TFLOP/s) with its 95%
        interval, under the DRAM roof and the compute roof of each declared FLOP kind, at the rated
        clocks (solid) and the observed ones (dashed). Writes ``filename`` if given, shows the
        figure inline in a Jupyter notebook, and returns it (also as ``self.figure``)."""
        style = Style(filename=filename, metric=None, title=title, ylabel=None, annotate_points=annotate_points,
                      show_aggregate=None, plot_type="roofline", plot_width=plot_width, plot_height=plot_height,
                      row_panels=None, col_panels=None, x_keys=x_keys, print_data=False, variant_fields=None,
                      variant_annotations=None, plot_callback=None)
        if filename is not None:
            check_filename(filename)
        self.figure = _roofline.draw(self._core, self.to_dataframe(), self.parameters, style)
        if _notebook.in_notebook():
            _notebook.show_figure(self.figure)
        return self.figure

    def __len__(self) -> int:
        return len(self._core)

    def __str__(self) -> str:
        # Rendered by pandas, not by the engine's console writer: C++ streams that format
        # numbers can crash in a process where torch is loaded (pytorch/pytorch#109923).
        df = self.to_dataframe()
        if df.empty:
            return "kscope: no results"
        head = f"kscope: {self._core.headline()}"
        collected = [c for c in df.columns if c not in _COLUMN_TYPES and c != "Annotation" and c not in self.parameters]
        shown = list(_CONSOLE) + (list(_ROOFLINE_CONSOLE) if df["WorkKind"].notna().any() else [])
        view = df[["Annotation", *self.parameters, *(column for column, _ in shown), *collected]]
        return head + "\n" + view.rename(columns=dict(shown)).to_string(index=False)

    def _repr_html_(self) -> str:
        """Jupyter's view: the session line and a compact table with a Flags column."""
        return _html.results_html(self.to_dataframe(), self.parameters, self._core.headline())

    def __repr__(self) -> str:
        rows = len(self)
        return f"<kscope.ProfileResults: {rows} summary row{'' if rows == 1 else 's'}>\n{self}"

    def _frame(self, columns: dict[str, list[_core.Cell]], config_indices: Sequence[int]) -> pd.DataFrame:
        frame = frame_of(columns, _COLUMN_TYPES, config_axes(self._configs, self.parameters, config_indices))
        return _unitless_derived_as_nan(frame, self._core.measured_metrics())


# The config axis column of this name; None for a column that is no axis.
AxisColumn = Callable[[str], "pd.Series | None"]


def frame_of(columns: Mapping[str, Sequence[Any]], types: Mapping[str, str], axis: AxisColumn) -> pd.DataFrame:
    """The one conversion of an engine table ({column: [cells]}) to a DataFrame: each config axis
    as the values the caller gave (``axis``), every other column by its type in the engine's column
    table (``types``: the summary's, or a derived result's, ``DERIVED_COLUMN_TYPES[kind]``)."""
    data = {}
    for name, cells in columns.items():
        values = axis(name)
        data[name] = values if values is not None else _typed_column(types.get(name), cells)
    return pd.DataFrame(data)


def config_axes(configs: Sequence[tuple[Any, ...]], parameters: Sequence[str],
                config_indices: Sequence[int | None]) -> AxisColumn:
    """The axis columns of rows that point into ``configs`` (a config index per row)."""
    def axis(name: str) -> pd.Series | None:
        if name not in parameters:
            return None
        p = list(parameters).index(name)
        return _config_column([configs[i][p] for i in config_indices])  # type: ignore[index]
    return axis


def _unitless_derived_as_nan(frame: pd.DataFrame, measured: Sequence[str]) -> pd.DataFrame:
    """Nsight Python's Unit of a derived metric returned without one: NaN (the engine, and its files,
    leave it empty). A measured metric without a unit keeps "", as Nsight Compute reports it.
    `measured` is empty for results files from before kscope kept it: then every unit stays."""
    if not measured or frame.empty:
        return frame
    unitless = (frame["Unit"] == "") & ~frame["Metric"].isin(list(measured))
    if unitless.any():
        frame["Unit"] = frame["Unit"].where(~unitless, np.nan)
    return frame


def _engine_column(name: str, cells: Sequence[_core.Cell]) -> pd.Series:
    """A column of the summary or samples table (or one outside them, typed from its cells)."""
    return _typed_column(_COLUMN_TYPES.get(name), cells)


def _typed_column(kind: str | None, cells: Sequence[_core.Cell]) -> pd.Series:
    if kind == "optional_boolean":
        return pd.Series(cells, dtype="boolean")  # empty where undefined (one run; fixed sampling)
    if kind == "real":
        return pd.Series(cells, dtype="float64")  # None becomes NaN
    if kind == "integer":
        return pd.Series(cells, dtype="int64")
    if kind == "optional_integer":
        return pd.Series(cells, dtype="Int64")  # empty where undefined
    if kind in ("text", "boolean", "baseline"):
        return _inferred(cells)  # strings: object (pandas 1/2) or str (pandas 3); False|name stays object
    # Tables outside the schema (speed_of_light): typed from the cells.
    present = [c for c in cells if c is not None]
    types = {type(c) for c in present}
    complete = len(present) == len(cells)
    if not present or (types <= {int, float} and not (types == {int} and complete)):
        return pd.Series(cells, dtype="float64")  # None becomes NaN
    if types == {int}:
        return pd.Series(cells, dtype="int64")
    return _inferred(cells)  # strings: object (pandas 1/2) or str (pandas 3); bool; False|name


def _inferred(cells: Sequence[Any]) -> pd.Series:
    """A column of the type pandas infers from its cells; of objects when it has none (pandas 1 and 2
    warn that they will change the type they infer from nothing)."""
    return pd.Series(cells) if len(cells) else pd.Series(cells, dtype=object)


def _config_column(values: Sequence[Any]) -> pd.Series:
    kinds = {_engine_type(v) for v in values}
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind is int:
        return pd.Series(values, dtype="int64")
    if kind is float:
        return pd.Series(values, dtype="float64")
    if kind is bool:
        return pd.Series(values, dtype="bool")
    if kind is str:
        return pd.Series(values)
    # Anything else as the very objects given: filled one by one so that numpy neither unpacks
    # tuples nor converts tensors.
    cells = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        cells[i] = v
    return pd.Series(cells, dtype=object)


def speed_of_light(results: ProfileResults) -> pd.DataFrame:
    """The Speed-of-Light table of counter results (backend='counters' with the default metrics
    or kscope.sol_metrics()), as a DataFrame. Config columns hold the engine's form of the values."""
    return pd.DataFrame({name: _engine_column(name, cells)
                         for name, cells in _core.speed_of_light(results._core).items()})
