"""ProfileResults as HTML, for Jupyter: the session line, a compact summary table whose Flags
column makes unstable, throttled and unconverged rows stand out, cut at MAX_ROWS rows."""

import html
import math
import pandas as pd

from . import _core

MAX_ROWS = 30
_FLAGGED = "background:#fde2e1"


def _cell(value):
    if not _known(value):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _clock_range(df, column):
    values = df[column].dropna() if column in df else []
    if len(values) == 0:
        return None
    low, high = values.min(), values.max()
    return f"{low:.0f} MHz" if low == high else f"{low:.0f}–{high:.0f} MHz"


def _known(value):
    """False for None, NaN and pd.NA; a config value (a tuple, a tensor) is never tested elementwise."""
    return value is not None and value is not pd.NA and not (isinstance(value, float) and math.isnan(value))


def _flags(row):
    """The reasons to distrust a row's numbers, in words (undefined values flag nothing)."""
    flags = []
    if _known(row.get("StableMeasurement")) and not row["StableMeasurement"]:
        flags.append("unstable")
    if _known(row.get("ThrottledRuns")) and row["ThrottledRuns"] > 0:
        flags.append(f"throttled {int(row['ThrottledRuns'])}")
    if _known(row.get("Converged")) and not row["Converged"]:
        flags.append("not converged")
    if _known(row.get("ThermalPauses")) and row["ThermalPauses"] > 0:
        flags.append(f"thermal pauses {int(row['ThermalPauses'])}")
    if _known(row.get("OtherProcessRuns")) and row["OtherProcessRuns"] > 0:
        flags.append(f"another process {int(row['OtherProcessRuns'])}")
    if _known(row.get("OverlappedRuns")) and row["OverlappedRuns"] > 0:
        flags.append(f"overlapped {int(row['OverlappedRuns'])}")
    if _known(row.get("HostGapRuns")) and row["HostGapRuns"] > 0:
        flags.append(f"host gap {int(row['HostGapRuns'])}")
    return ", ".join(flags)


def session_line(df, headline):
    """The session headline (the engine's: GPU | backend | cache_control | clock_control), then the
    clocks observed over the rows."""
    parts = [headline]
    for label, column in (("SM clock", "ObservedSMClockMHz"), ("memory clock", "ObservedMemoryClockMHz")):
        observed = _clock_range(df, column)
        if observed:
            parts.append(f"observed {label} {observed}")
    return " | ".join(parts)


def results_html(df, parameters, headline):
    """The HTML of a summary DataFrame (ProfileResults.to_dataframe()); all text escaped."""
    if df.empty:
        return "<p>kscope: no results</p>"
    declared = "WorkKind" in df and df["WorkKind"].notna().any()
    roofline = [c for c, _ in _core.roofline_console_columns()] if declared else []
    shown = [c for c in ["Annotation", *parameters, "Metric", "Unit", "AvgValue", "RelativeStdDevPct",
                         "NumRuns", "ObservedSMClockMHz", *roofline] if c in df.columns]
    # the engine's short names, as the text view shows them
    headers = dict(_core.console_columns() + _core.roofline_console_columns())
    flags_of = [_flags(row) for row in df.to_dict("records")]
    flagged_rows = sum(bool(f) for f in flags_of)
    body = []
    for (_, row), flags in zip(df.head(MAX_ROWS).iterrows(), flags_of):
        style = f' style="{_FLAGGED}"' if flags else ""
        cells = "".join(f"<td>{html.escape(_cell(row[c]))}</td>" for c in shown)
        body.append(f"<tr{style}>{cells}<td><b>{html.escape(flags)}</b></td></tr>")
    head = "".join(f"<th>{html.escape(headers.get(c, c))}</th>" for c in shown) + "<th>Flags</th>"
    summary = f"{len(df)} rows" + (f", {flagged_rows} flagged" if flagged_rows else ", none flagged")
    more = len(df) - MAX_ROWS
    tail = f"<p>… {more} more rows (ProfileResults.to_dataframe() has them all)</p>" if more > 0 else ""
    return (f'<div class="kscope-results"><p><b>kscope</b>: {html.escape(session_line(df, headline))} '
            f"({summary})</p><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            f"{tail}</div>")
