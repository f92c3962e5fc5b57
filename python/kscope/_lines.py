"""LineResults: which line is slow, and why. The engine's line sampling as pandas DataFrames, a
compact listing, the kernel's source annotated line by line (HTML, in a notebook), and a plot of the
top lines by stall reason."""

from __future__ import annotations

import html
import itertools
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from . import _core, _notebook
from ._plot_style import check_filename
from ._results import DERIVED_COLUMN_TYPES, ProfileResults, config_axes, frame_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["LineResults", "load_lines", "stall_reasons"]

_KERNEL_KEY = ["Annotation", "Kernel"]


class LineResults:
    """What a call of a ``@kscope.analyze.lines`` function returns: program-counter samples of each
    kernel, per source line and stall reason.

    ``to_dataframe()`` has one row per annotation x config x kernel x source line x stall reason;
    ``instructions()`` the SASS instructions behind them; ``kernels()`` each kernel's samples, the
    samples the hardware dropped and any note on them; ``sweep`` the usual ProfileResults of the
    samples per run. ``str()`` lists each kernel's top lines; in a notebook the results show each
    kernel's source with every line's share; ``plot()`` draws the top lines.
    """

    def __init__(self, core: _core.LineResults, configs: Sequence[tuple[Any, ...]], parameters: Sequence[str]) -> None:
        self._core = core
        self._configs = configs
        self.parameters = list(parameters)  # the config columns, in signature order
        self._lines: pd.DataFrame | None = None
        self.figure: Figure | None = None  # plot(): the matplotlib Figure it drew

    def to_dataframe(self) -> pd.DataFrame:
        """One row per annotation x config x kernel x source line x stall reason, each kernel's lines
        most sampled first. Columns: Annotation, the config parameters, Kernel, File, Line (empty for
        code without line information: then PcOffset and Function say where), Function, StallReason,
        Samples, SharePct (of the kernel's samples), LineSamples, LineSharePct, LineText, InlinedFrom
        (the inlined functions whose code the line's samples ran, outermost first), PcOffset,
        InstExecuted, ThreadEfficiencyPct (executed instructions and active threads per warp
        instruction, where the GPU counted them). A copy.

            df = results.to_dataframe()
            df.groupby(["Line", "LineText"]).Samples.sum().nlargest(5)
        """
        if self._lines is None:
            self._lines = self._frame(*self._core.lines(), "lines")
        return self._lines.copy()

    def instructions(self) -> pd.DataFrame:
        """The SASS instructions behind the lines: one row per instruction and stall reason, with
        Function, PcOffset, Sass (its text; empty without nvdisasm), File and Line where its code was
        written (an inlined function's line), InlinedAt (the call sites, innermost first), Samples,
        InstExecuted and ThreadInstExecuted."""
        return self._frame(*self._core.instructions(), "instructions")

    def kernels(self) -> pd.DataFrame:
        """Per annotation x config x kernel: Samples, Dropped (lost by the hardware while its annotation
        ran), Launches (sampled), SamplingPeriodCycles and Note (too few samples, samples dropped, code
        without line information)."""
        return self._frame(*self._core.kernels(), "line_kernels")

    def top(self, n: int = 10) -> pd.DataFrame:
        """Each kernel's n most sampled lines, one row per line: its share, dominant stall reason and
        that reason's share of the line, and the line's text."""
        df = self.to_dataframe()
        if df.empty:
            return df
        keys = ["Annotation", *self.parameters, "Kernel", "File", "Line", "Function", "PcOffset"]
        first = df.groupby(keys, dropna=False, sort=False).head(1)  # a line's rows: its dominant reason first
        first = first.assign(DominantStall=first["StallReason"],
                             DominantStallPct=100.0 * first["Samples"] / first["LineSamples"])
        columns = [*keys[:-2], "LineSamples", "LineSharePct", "DominantStall", "DominantStallPct", "LineText",
                   "InlinedFrom", "Function", "PcOffset"]
        group = ["Annotation", *self.parameters, "Kernel"]
        return first.groupby(group, dropna=False, sort=False).head(n)[list(dict.fromkeys(columns))].reset_index(drop=True)

    @property
    def sweep(self) -> ProfileResults:
        """The sweep's own results: per annotation and config, its kernels' samples per run (the
        pcsampling backend's metric pcsampling__samples), with every session column."""
        return ProfileResults(self._core.sweep(), self._configs, self.parameters)

    @property
    def notes(self) -> list[str]:
        """What the session could not do: no SASS text (no nvdisasm), no executed-instruction counts,
        code loaded before sampling started."""
        return list(self._core.notes())

    def listing(self, top: int = 10) -> str:
        """Each kernel's `top` lines with their share and dominant stall reason, as text."""
        return self._core.listing(top)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes everything (the sweep, kernels, instructions and the source lines' text) to ``path``
        in kscope's results format (JSON): kscope.load_lines reads it back, kscope.load its sweep."""
        self._core.write_json(os.fspath(path))

    def compare(self, baseline: LineResults) -> pd.DataFrame:
        """Each line's share of its kernel's samples here and in `baseline` (matched by annotation,
        config values, kernel, file and line): BaselineSharePct, SharePct, DeltaPct (points) and each
        side's dominant stall reason, the largest changes first."""
        if not isinstance(baseline, LineResults):
            raise TypeError(f"compare() takes the LineResults to compare against, not {type(baseline).__name__}")
        columns, _ = _core.compare_lines(baseline._core, self._core)
        return frame_of(columns, DERIVED_COLUMN_TYPES["line_comparison"], lambda name: None)  # axes as the engine keeps them

    def plot(self, filename: str | os.PathLike[str] | None = None, *, top: int = 10,
             plot_width: float = 8, plot_height: float | None = None) -> Figure:
        """Draws each kernel's `top` lines (at most 6 kernels, a panel each) as bars of their share of
        the kernel's samples, split by stall reason. Writes ``filename`` if given, shows the figure
        inline in a Jupyter notebook, and returns it (also as ``self.figure``)."""
        if filename is not None:
            check_filename(filename, "LineResults.plot")
        self.figure = _draw_top_lines(self.to_dataframe(), self.parameters, top, plot_width, plot_height)
        if filename is not None:
            self.figure.savefig(os.fspath(filename), bbox_inches="tight")
        if _notebook.in_notebook():
            _notebook.show_figure(self.figure)
        return self.figure

    def __len__(self) -> int:
        return len(self.to_dataframe())

    def __str__(self) -> str:
        return self.listing()

    def __repr__(self) -> str:
        return f"<kscope.LineResults: {len(self)} line rows>\n{self}"

    def _repr_html_(self) -> str:
        """Jupyter's view: each kernel's source, every sampled line with its share and dominant stall."""
        return _source_html(self.to_dataframe(), self.parameters, self._core.sources(), self.notes)

    def _frame(self, columns: dict[str, list[Any]], config_indices: Sequence[int], kind: str) -> pd.DataFrame:
        return frame_of(columns, DERIVED_COLUMN_TYPES[kind], config_axes(self._configs, self.parameters, config_indices))


def load_lines(path: str | os.PathLike[str]) -> LineResults:
    """Reads a file written by LineResults.save; config columns hold the values as the file keeps them."""
    core = _core.load_line_results(os.fspath(path))
    sweep = core.sweep()
    return LineResults(core, sweep.configs(), list(sweep.axis_names))


def stall_reasons() -> pd.DataFrame:
    """The stall reasons PC sampling reports, by Nsight Compute's names, with what each means."""
    return pd.DataFrame(_core.stall_reasons(), columns=["StallReason", "Description"])


_STALL_TEXT = dict(_core.stall_reasons())


def _groups(df, parameters):
    return df.groupby(["Annotation", *parameters, "Kernel"], dropna=False, sort=False)


def _title(key, parameters):
    annotation, *values = key if isinstance(key, tuple) else (key,)
    kernel = values.pop()
    config = ", ".join(f"{p}={v}" for p, v in zip(parameters, values))
    return f"{annotation}" + (f" [{config}]" if config else "") + f" — {kernel}"


def _source_html(df, parameters, sources, notes):
    if df.empty:
        return "<p><b>kscope lines</b>: no samples</p>"
    out = ["<div class='kscope-lines'><p><b>kscope lines</b> — each sampled line's share of its kernel's samples "
           "and its dominant stall reason (hover for what it means)</p>"]
    out += [f"<p style='color:#8a6d3b'>note: {html.escape(n)}</p>" for n in notes]
    for key, rows in list(_groups(df, parameters))[:20]:
        out.append(f"<h4 style='margin:0.8em 0 0.2em'>{html.escape(_title(key, parameters))} "
                   f"<small>({int(rows['Samples'].sum())} samples)</small></h4>")
        lines = rows.groupby(["File", "Line", "Function", "PcOffset"], dropna=False, sort=False).head(1)
        out.append("<table style='font-family:monospace;font-size:12px;border-collapse:collapse'>")
        for file, in_file in lines[lines["Line"].notna()].groupby("File", sort=False):
            text = sources.get(file, "").splitlines()
            sampled = {int(r.Line): r for r in in_file.itertuples()}
            first, last = max(1, min(sampled) - 2), max(sampled) + 2
            if not text:  # the file was not found when measured: its sampled lines only
                shown = sorted(sampled)
            else:
                shown = [n for n in range(first, min(last, len(text)) + 1)]
                if len(shown) > 200:  # a long file: the sampled lines and their neighbours
                    shown = sorted({m for n in sampled for m in range(n - 1, n + 2) if 1 <= m <= len(text)})
            out.append(f"<tr><td colspan='4' style='color:#555;padding-top:0.4em'>{html.escape(file)}</td></tr>")
            for n in shown:
                r = sampled.get(n)
                source = html.escape(text[n - 1] if 0 < n <= len(text) else (r.LineText if r is not None else ""))
                out.append(_line_row(n, source, r))
        for r in lines[lines["Line"].isna()].itertuples():
            label = f"{r.Function}+{int(r.PcOffset):#x}"
            out.append(_line_row("", f"<i>{html.escape(label)} (no line information)</i>", r))
        out.append("</table>")
    out.append("</div>")
    return "\n".join(out)


def _line_row(number, source, r):
    if r is None:
        return (f"<tr><td style='color:#999;text-align:right;padding-right:6px'>{number}</td><td></td><td></td>"
                f"<td style='white-space:pre'>{source}</td></tr>")
    share = float(r.LineSharePct) if not math.isnan(r.LineSharePct) else 0.0
    stall = html.escape(str(r.StallReason))
    stall_share = 100.0 * r.Samples / r.LineSamples if r.LineSamples else 0.0
    inlined = f" title='inlined: {html.escape(str(r.InlinedFrom))}'" if r.InlinedFrom else ""
    shade = f"background:rgba(214,39,40,{min(0.85, share / 50):.2f})"
    return (f"<tr><td style='color:#999;text-align:right;padding-right:6px'>{number}</td>"
            f"<td style='text-align:right;padding:0 6px;{shade}'>{share:.1f}%</td>"
            f"<td style='padding:0 6px' title='{html.escape(_STALL_TEXT.get(r.StallReason, ''))}'>{stall} "
            f"({stall_share:.0f}%)</td><td style='white-space:pre'{inlined}>{source}</td></tr>")


def _draw_top_lines(df, parameters, top, width, height):
    from matplotlib.figure import Figure

    groups = list(_groups(df, parameters))[:6] if not df.empty else []
    panels = max(1, len(groups))
    fig = Figure(figsize=(width, height or max(2.5, 0.35 * top + 1.2) * panels))
    reasons = list(dict.fromkeys(df["StallReason"])) if not df.empty else []
    colors = {r: f"C{i % 10}" for i, r in enumerate(reasons)}
    shown_in_legend = set()
    for i, (key, rows) in enumerate(groups):
        ax = fig.add_subplot(panels, 1, i + 1)
        lines = rows.groupby(["File", "Line", "Function", "PcOffset"], dropna=False, sort=False)
        labels = []
        for y, (_, line) in enumerate(itertools.islice(lines, top)):
            first = line.iloc[0]
            where = (f"{os.path.basename(str(first.File))}:{int(first.Line)}" if pd.notna(first.Line)
                     else f"{first.Function}+{int(first.PcOffset):#x}")
            text = str(first.LineText).strip()
            labels.append(f"{where}  {text[:40]}")
            left = 0.0
            for r in line.itertuples():
                label = r.StallReason if r.StallReason not in shown_in_legend else None
                shown_in_legend.add(r.StallReason)
                ax.barh(y, r.SharePct, left=left, color=colors[r.StallReason], label=label)
                left += r.SharePct
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels, fontsize=8, fontfamily="monospace")
        ax.invert_yaxis()
        ax.set_xlabel("% of the kernel's samples")
        ax.set_title(_title(key, parameters), fontsize=9)
    if groups:  # below the panels, where it hides no bar
        fig.legend(loc="lower center", ncol=min(4, len(shown_in_legend)), fontsize=7, title="stall reason",
                   title_fontsize=7)
    fig.tight_layout(rect=(0, 0.04 + 0.03 * math.ceil(len(shown_in_legend) / 4) / panels, 1, 1))
    return fig
