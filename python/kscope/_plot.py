"""Drawing for kscope.analyze.plot. Figures are made with matplotlib's object API and rendered by
Agg, so plotting needs no display and leaves pyplot's state (and a notebook's backend) alone."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from . import _core, _roofline
from .errors import ConfigError


def _pick_metric(df, metric):
    found = list(dict.fromkeys(df["Metric"].tolist()))
    if metric is None:
        if not found:
            raise ConfigError("No metrics found in the profile results. There is nothing to plot")
        if len(found) > 1:
            raise ConfigError(
                f"Cannot visualize multiple metrics ({len(found)} > 1) with the @kscope.analyze.plot decorator. "
                f"Please specify a metric to plot. The metrics found are: {found}: pass metric= one of them"
            )
        return found[0]
    if metric not in found:
        raise ConfigError(
            f"Metric '{metric}' not found in the profile results. Please check the metric name and try again. "
            f"The metrics found are: {found}; pass one of them as metric="
        )
    return metric


def _fields(style, parameters):
    panels = (style.row_panels or []) + (style.col_panels or [])
    variants = style.variant_fields or []
    for f in panels + variants:
        if f not in parameters:
            raise ConfigError(f"Field '{f}' is not a config parameter. Available fields: {parameters}")
    if style.x_keys is None:
        return [p for p in parameters if p not in panels and p not in variants]
    for f in style.x_keys:
        if f not in parameters:
            raise ConfigError(f"Field '{f}' is not present in the DataFrame. Available fields: {parameters}")
    overlap = set(style.x_keys) & set(panels + variants)
    if overlap:
        raise ConfigError(
            f"x_keys cannot contain fields used in row_panels, col_panels, or variant_fields: {overlap}"
        )
    return list(style.x_keys)


def _label(row, fields):
    return ", ".join(f"{f}={row[f]}" for f in fields)


def _combos(df, fields):
    """The distinct value combinations of fields, in order of appearance ([()] for none)."""
    return list(dict.fromkeys(tuple(r) for r in df[fields].itertuples(index=False))) if fields else [()]


def _select(df, fields, values):
    keep = np.ones(len(df), dtype=bool)
    for f, v in zip(fields, values):
        keep &= np.array([x == v for x in df[f]], dtype=bool)
    return df[keep]


def _series(panel, style):
    """(label, rows) per plotted series: one per annotation, or per variant of an annotation."""
    variants = style.variant_fields or []
    split = set(style.variant_annotations or [])
    out = []
    for annotation in dict.fromkeys(panel["Annotation"].tolist()):
        rows = panel[panel["Annotation"] == annotation]
        if annotation in split and variants:
            for combo in _combos(rows, variants):
                label = f"{annotation} " + ", ".join(f"{f}={v}" for f, v in zip(variants, combo))
                out.append((label, _select(rows, variants, combo)))
        else:
            out.append((annotation, rows))
    return out


def draw(results, style):
    """Draws the results, writes style.filename and returns the matplotlib Figure."""
    import matplotlib
    from matplotlib.figure import Figure

    if style.plot_type == "roofline":
        return _roofline.draw(results._core, results.to_dataframe(), results.parameters, style)

    df = results.to_dataframe()
    parameters = results.parameters
    metric = _pick_metric(df, style.metric)
    data = df[df["Metric"] == metric].reset_index(drop=True)
    x_fields = _fields(style, parameters)
    data["_x"] = [_label(r, x_fields) or "(one config)" for _, r in data.iterrows()]
    rows_p, cols_p = style.row_panels or [], style.col_panels or []
    grid_rows, grid_cols = _combos(data, rows_p), _combos(data, cols_p)

    fig = Figure(
        figsize=(max(style.plot_width * len(grid_cols), 8), max(style.plot_height * len(grid_rows), 6)),
        layout="constrained",
    )
    axes = fig.subplots(len(grid_rows), len(grid_cols), squeeze=False)
    aggregate: tuple[str, Any] | None = {"avg": ("Avg", np.mean), "geomean": ("Geomean", _core.geometric_mean)}.get(style.show_aggregate)
    colors = itertools.cycle([c["color"] for c in matplotlib.rcParams["axes.prop_cycle"]])
    color_of: dict[str, Any] = {}
    for (i, rv), (j, cv) in itertools.product(enumerate(grid_rows), enumerate(grid_cols)):
        ax = axes[i][j]
        panel = _select(_select(data, rows_p, rv), cols_p, cv)
        categories = list(dict.fromkeys(panel["_x"].tolist()))
        series = _series(panel, style)
        width = 0.8 / max(len(series), 1)
        for k, (label, rows) in enumerate(series):
            # Rows sharing an x label (parameters left out of x_keys) are averaged.
            means = rows.groupby("_x", sort=False)["AvgValue"].mean()
            xs = [categories.index(x) for x in means.index]
            ys = list(means.values)
            color = color_of.setdefault(label, next(colors))
            if aggregate:
                xs.append(len(categories))
                ys.append(aggregate[1](list(means.values)))
            offset = (k - (len(series) - 1) / 2) * width
            if style.plot_type == "bar":
                ax.bar([x + offset for x in xs], ys, width, label=label, color=color)
            else:
                n = len(means)
                ax.plot(xs[:n], ys[:n], marker="o", label=label, color=color)
                if aggregate:
                    ax.plot(xs[n:], ys[n:], marker="D", linestyle="none", color=color)
            if style.annotate_points:
                for x, y in zip(xs, ys):
                    dx = offset if style.plot_type == "bar" else 0
                    ax.annotate(f"{y:.2f}", (x + dx, y), textcoords="offset points", xytext=(0, 4),
                                ha="center", fontsize=8)
        ticks = categories + ([aggregate[0]] if aggregate else [])
        ax.set_xticks(range(len(ticks)))
        rotate = max(map(len, ticks), default=0) > 12
        ax.set_xticklabels(ticks, rotation=30 if rotate else 0, ha="right" if rotate else "center")
        ax.grid(True, alpha=0.4)
        ax.set_axisbelow(True)
        finite = panel["AvgValue"].dropna()
        if len(finite) and finite.min() >= 0:
            ax.set_ylim(0, finite.max() * 1.1 or 1)
        heading = ", ".join(f"{f}={v}" for f, v in zip(rows_p + cols_p, tuple(rv) + tuple(cv)))
        if heading:
            ax.set_title(heading)
        if j == 0:
            ax.set_ylabel(style.ylabel or _default_ylabel(data, metric))
        ax.legend(title="Annotation", fontsize=8)

    if len(data):
        fig.suptitle(f"{style.title}\n{results._core.headline(with_machine=True)}")
    if style.print_data:
        print(data[["Annotation", *parameters, "Metric", "Unit", "AvgValue", "NumRuns"]].to_string(index=False))
    if style.plot_callback:
        style.plot_callback(fig)
    fig.savefig(style.filename, bbox_inches="tight")
    return fig


def _default_ylabel(data, metric):
    units = [u for u in dict.fromkeys(data["Unit"].tolist()) if isinstance(u, str) and u]
    baseline = next((n for n in data["Normalized"].tolist() if isinstance(n, str)), None)
    label = f"{metric} relative to {baseline}" if baseline else f"{metric} ({', '.join(units)})" if units else metric
    return f"{label} (avg of {int(data['NumRuns'].max())} runs)" if len(data) else label
