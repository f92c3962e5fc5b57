"""kscope.load and kscope.compare: saved results back as ProfileResults, and the engine's verdicts
on two of them as a DataFrame (optionally plotted)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import itertools
import math
import numbers
import os
import warnings

import pandas as pd

from . import _core, _plot_style
from ._evaluation import EvaluationResults
from ._results import DERIVED_COLUMN_TYPES, ProfileResults, _config_column, frame_of
from .errors import ConfigError, ProfilerWarning

_DIRECTIONS = tuple(_core.enum_names()["MetricDirection"])
# Each verdict's colour in the plot (the engine names the verdicts: test_compare checks the keys).
_VERDICT_COLOURS = {
    "slower": "tab:red",
    "faster": "tab:green",
    "same": "tab:gray",
    "unstable": "tab:orange",
    "changed": "tab:purple",
    "ambiguous": "tab:olive",
    "too_few_samples": "tab:brown",
}


class CompareWarning(ProfilerWarning):
    """What weakens a comparison without preventing it: a different GPU model or driver, observed SM
    clocks that differ by more than the threshold, rows measured on one side only, rows that cannot be
    judged (too few samples) or whose change the clocks can explain (ambiguous). A CI gate can make
    them errors: ``warnings.simplefilter("error", kscope.CompareWarning)``."""


def load(path: str | os.PathLike[str]) -> ProfileResults:
    """The ProfileResults saved in ``path`` by ProfileResults.save (or C++ Results::write_json); of a
    file written by EvaluationResults.save, its measurements (kscope.load_evaluation reads the
    evaluation).

    Its config columns hold the values the engine kept: ints, floats, strings and bools as they
    were; any other config value (a torch dtype, a tuple, a tensor) as the short repr() label it
    was saved as (e.g. 'torch.float16'), since the objects themselves cannot be saved.
    Raises FileNotFoundError, IsADirectoryError or PermissionError (OSError) for a path that
    cannot be read, as open() does, and ConfigError for a file that is not a kscope results file
    or is of another format version.
    """
    core = _core.load_results(os.fspath(path))
    return ProfileResults(core, core.configs(), core.axis_names)


def load_evaluation(path: str | os.PathLike[str]) -> EvaluationResults:
    """The EvaluationResults saved in ``path`` by EvaluationResults.save (or C++
    Evaluation::write_json). Its config columns hold the values the engine kept (see kscope.load).
    Raises OSError for a path that cannot be read, and ConfigError for a file that holds no
    evaluation (kscope.load reads the results of a profile)."""
    core = _core.load_evaluation(os.fspath(path))
    measurements = core.measurements()
    return EvaluationResults(core, measurements.configs(), measurements.axis_names)


def compare(
    baseline: ProfileResults | str | os.PathLike[str],
    candidate: ProfileResults | str | os.PathLike[str],
    *,
    threshold_pct: float = 2.0,
    alpha: float = 0.05,
    min_samples: int = 5,
    max_rsd_pct: float = 10.0,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 5489,
    directions: Mapping[str, Literal["lower", "higher", "undefined"]] | None = None,
    plot: str | os.PathLike[str] | None = None,
    output_prefix: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Compares candidate with baseline, row by row (annotation, config, metric), on the raw
    per-run samples of both, and returns one DataFrame row per (annotation, config, metric).

    baseline, candidate: ProfileResults, or paths of files written by ProfileResults.save.
    A row is 'slower' or 'faster' when a two-sided Mann-Whitney U test gives p < alpha AND the
    whole bootstrap confidence interval (``confidence``, ``resamples``, ``seed``) of the ratio of
    medians lies beyond ``threshold_pct`` percent; 'same' otherwise. A duration whose runs' SM
    clocks varied is 'slower' or 'faster' only when its cycles (duration times the SM clock of its
    run: the Cycles* columns) change the same way by the same test, else 'ambiguous'.
    'too_few_samples' when a side has fewer than ``min_samples`` valid runs (results of runs=1);
    'unstable' when a side's relative standard deviation is above ``max_rsd_pct`` (or the units
    differ); 'changed' for a metric with no better direction (a count of bytes).
    Durations are lower-is-better and rates (GB/s, TFLOP/s, %) higher-is-better;
    ``directions={"metric": "lower" | "higher" | "undefined"}`` says otherwise. Rows measured on one
    side only have the verdict 'only_in_baseline' or 'only_in_candidate'.

    Results of different backends, cache_control or clock_control raise ConfigError. A different
    GPU model or driver, or SM clocks that differ by more than the threshold, are reported as
    kscope.CompareWarning warnings and in the Flags column. ``plot="file.png"`` also draws the
    ratios with their intervals per config (any format matplotlib infers from the name).
    ``output_prefix="out/cmp_"`` also writes the comparison's files there: its table as CSV
    (``comparison.csv``) and as JSON with its options, warnings and gate (``comparison.json``, what
    ``kscope compare --json`` prints); a directory's name stands for that directory.

    The config columns hold the baseline's config values (the candidate's for rows only in it):
    the original objects for a ProfileResults just measured, the saved labels for a loaded one.

    As a gate, ``frame.attrs["gate"]`` says what `kscope compare`'s exit status says: 'slower' (a
    row is slower: exit 1), 'cannot_judge' (none is, but a row has too few samples on a side: exit
    3), or 'passed' (exit 0).
    """
    if plot is not None:
        _plot_style.check_filename(os.fspath(plot), "kscope.compare(plot=...)")  # before the comparison is computed
    prefix = "" if output_prefix is None else _output_prefix(output_prefix)
    base = _as_results(baseline, "baseline")
    cand = _as_results(candidate, "candidate")
    options = _core.CompareOptions()
    for name, value in (("threshold_pct", threshold_pct), ("alpha", alpha), ("max_rsd_pct", max_rsd_pct),
                        ("confidence", confidence)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ConfigError(f"{name} must be a number, not {value!r}")
        setattr(options, name, float(value))
    for name, value in (("min_samples", min_samples), ("resamples", resamples), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ConfigError(f"{name} must be a non-negative integer, not {value!r}")
        setattr(options, name, int(value))
    columns, base_configs, cand_configs, messages, gate = _core.compare(
        base._core, cand._core, options, _directions(directions), prefix)

    axes = base.parameters  # the engine refuses results whose axes differ

    def axis(name: str) -> pd.Series | None:
        if name not in axes:
            return None
        return _config_column([
            base._configs[b][base.parameters.index(name)] if b is not None
            else cand._configs[c][cand.parameters.index(name)]  # type: ignore[index]  # c is set where b is not
            for b, c in zip(base_configs, cand_configs)
        ])

    frame = frame_of(columns, DERIVED_COLUMN_TYPES["comparison"], axis)
    frame.attrs["gate"] = gate
    for message in messages:
        warnings.warn(message, CompareWarning, stacklevel=2)
    if plot is not None:
        try:
            draw_comparison(frame, axes, os.fspath(plot), threshold_pct)
        except Exception as e:
            e.comparison = frame  # type: ignore[attr-defined]
            if hasattr(e, "add_note"):  # Python 3.11+
                e.add_note("kscope: the comparison was computed before plotting failed; its DataFrame is in this "
                           "exception's .comparison")
            raise
    return frame


def _as_results(value: object, side: str) -> ProfileResults:
    """The results to compare: an evaluation's are its measurements (both sides' durations)."""
    if isinstance(value, (str, os.PathLike)):
        return load(value)
    if isinstance(value, EvaluationResults):
        return value.measurements
    if isinstance(value, ProfileResults):
        return value
    raise ConfigError(
        f"{side} must be a ProfileResults, an EvaluationResults or the path of a file written by their save(), "
        f"not {type(value).__name__}"
    )


def _output_prefix(prefix: object) -> str:
    if isinstance(prefix, (str, os.PathLike)) and os.fspath(prefix):
        return str(os.fspath(prefix))
    raise ConfigError(f"output_prefix must be a non-empty path prefix (a str or os.PathLike, 'out/cmp_'), "
                      f"not {prefix!r}")


def _directions(directions: Any) -> dict[str, str]:
    if directions is None:
        return {}
    if not hasattr(directions, "items"):
        raise ConfigError(f"directions must be a dict {{metric: {' | '.join(map(repr, _DIRECTIONS))}}}, "
                          f"not {directions!r}")
    for metric, direction in directions.items():
        if not isinstance(metric, str) or direction not in _DIRECTIONS:
            choices = ", ".join(map(repr, _DIRECTIONS[:-1])) + f" or {_DIRECTIONS[-1]!r}"
            raise ConfigError(f"directions[{metric!r}] must be {choices}, not {direction!r}")
    return dict(directions)


def draw_comparison(frame: pd.DataFrame, parameters: Sequence[str], filename: str, threshold_pct: float) -> None:
    """Ratio of medians (candidate / baseline) with its confidence interval per config: one line per
    (annotation, metric), each point coloured by its verdict, the threshold band shaded."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rows = frame[frame["Ratio"].notna()].copy()
    if rows.empty:
        raise ConfigError("plot: no row was measured on both sides, so there is no ratio to draw")
    rows["_x"] = [", ".join(f"{p}={r[p]}" for p in parameters) or "(one config)" for _, r in rows.iterrows()]
    categories = list(dict.fromkeys(rows["_x"]))
    series = list(dict.fromkeys(zip(rows["Annotation"], rows["Metric"])))

    fig = Figure(figsize=(max(8, 0.8 * len(categories) + 4), 5), layout="constrained")
    ax = fig.subplots()
    lower, upper = _core.same_band(threshold_pct)  # what the verdicts call the same
    ax.axhspan(lower, upper, color="tab:gray", alpha=0.15)
    ax.axhline(1, color="tab:gray", linewidth=0.8)
    width = 0.6 / len(series)
    markers = itertools.cycle("osD^vP*X")
    legend = [Patch(color="tab:gray", alpha=0.15, label=f"{threshold_pct:g}% threshold")]
    for k, (annotation, metric) in enumerate(series):
        part = rows[(rows["Annotation"] == annotation) & (rows["Metric"] == metric)]
        offset = (k - (len(series) - 1) / 2) * width
        xs = [categories.index(x) + offset for x in part["_x"]]
        marker = next(markers)
        ax.plot(xs, part["Ratio"], color="0.6", linewidth=0.8, zorder=1)
        for x, (_, r) in zip(xs, part.iterrows()):
            low, high = r["CI_Lower"], r["CI_Upper"]
            bounded = all(isinstance(v, float) and math.isfinite(v) for v in (low, high))
            error = [[r["Ratio"] - low], [high - r["Ratio"]]] if bounded else None
            ax.errorbar(x, r["Ratio"], yerr=error, fmt=marker, color=_VERDICT_COLOURS.get(r["Verdict"], "black"),
                        capsize=3, zorder=2)
        legend.append(Line2D([], [], marker=marker, color="0.3", linestyle="none", label=f"{annotation} \u00b7 {metric}"))
    for verdict in dict.fromkeys(rows["Verdict"]):
        legend.append(Patch(color=_VERDICT_COLOURS.get(verdict, "black"), label=verdict))
    ax.set_xticks(range(len(categories)))
    rotate = max(map(len, categories)) > 12
    ax.set_xticklabels(categories, rotation=30 if rotate else 0, ha="right" if rotate else "center")
    ax.set_ylabel("candidate / baseline (median, with CI)")
    counts = rows["Verdict"].value_counts()
    ax.set_title("kscope compare: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    ax.grid(True, axis="y", alpha=0.4)
    ax.legend(handles=legend, fontsize=8, loc="best")
    fig.savefig(filename, bbox_inches="tight")
