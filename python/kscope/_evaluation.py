"""EvaluationResults: what kscope.evaluate returns (and kscope.load reads back), as DataFrames."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from typing import Any

import pandas as pd

from . import _core
from ._results import DERIVED_COLUMN_TYPES, ProfileResults, config_axes, frame_of

# Each verdict's row colour in Jupyter (the engine names the verdicts: test_evaluate checks the keys).
_VERDICT_STYLE = {
    "faster": "background:#dff3e0",
    "slower": "background:#fde2e1",
    "same": "",
    "incorrect": "background:#f8c4c1",
    "suspect": "background:#ffe8b3",
}
# The columns the readable views show after the config axes (the engine's column table marks them).
_SHOWN = tuple(_core.evaluation_view_columns())


class EvaluationResults:
    """What ``kscope.evaluate`` returns: per config, whether the candidate is correct and faster.

    ``to_dataframe()``: one row per config: its columns, then Verdict ('faster', 'slower', 'same',
    'incorrect' or 'suspect'), Speedup (the median over the runs of reference time / candidate time
    of the same run) with SpeedupCI_Lower and SpeedupCI_Upper, ReferenceMedianNs,
    CandidateMedianNs, Runs, Correct, MaxAbsError, MaxRelError, CheckedRuns, MismatchedRuns,
    FailingSeed (the first failing run's seed: ``inputs(config, seed)`` makes its inputs again),
    Findings (comma-separated names), Reason, Mismatch, GPU and Backend.
    ``findings()``: one row per finding: the config's columns, Side, Finding, Runs, Detail.
    ``measurements``: the durations of both sides (annotations 'candidate' and 'reference') as a
    ProfileResults (kscope.compare takes either).
    """

    def __init__(self, core: Any, configs: Sequence[tuple[Any, ...]], parameters: Sequence[str]) -> None:
        self._core = core
        self._configs = list(configs)
        self.parameters = list(parameters)
        self.failing_inputs: list[str] = []  # the files of failing_inputs=, if asked
        self._table: pd.DataFrame | None = None
        self._config_indices: list[int] = []

    @property
    def measurements(self) -> ProfileResults:
        """The durations of both sides (annotations 'candidate' and 'reference') as a
        ProfileResults, which kscope.compare takes too."""
        return ProfileResults(self._core.measurements(), self._configs, self.parameters)

    def to_dataframe(self) -> pd.DataFrame:
        """One row per config: its columns, then Verdict, Speedup with its interval, both
        medians, the errors, the Findings and the Reason (the class's description lists them)."""
        if self._table is None:
            columns, self._config_indices = self._core.table()
            self._table = self._frame(columns, self._config_indices, "evaluation")
        return self._table.copy()

    def findings(self) -> pd.DataFrame:
        """One row per finding: the config's columns, Side, Finding, Runs and Detail
        (docs/evaluate.md catalogues each finding)."""
        columns, config_indices = self._core.findings()
        return self._frame(columns, config_indices, "findings")

    def config_index(self, row: int) -> int:
        """The config (its position in configs) of the to_dataframe() row at this position."""
        self.to_dataframe()
        return self._config_indices[row]

    def verdicts(self) -> list[str]:
        """The Verdict of each config, in order."""
        return list(self.to_dataframe()["Verdict"])

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the evaluation to ``path`` (kscope's results file, with its evaluation), which
        kscope.load_evaluation reads back (kscope.load and ``kscope compare`` read its measurements)."""
        self._core.write_json(os.fspath(path))

    def __len__(self) -> int:
        return len(self._core)

    def __str__(self) -> str:
        df = self.to_dataframe()
        if df.empty:
            return "kscope evaluation: no configs"
        head = f"kscope evaluation: {self._core.measurements().headline()}"
        text = head + "\n" + df[[*self.parameters, *_SHOWN]].to_string(index=False)
        found = self.findings()
        if not found.empty:
            text += "\nfindings:\n" + found.to_string(index=False)
        return text

    def __repr__(self) -> str:
        return f"<kscope.EvaluationResults: {len(self)} configs>\n{self}"

    def _repr_html_(self) -> str:
        df = self.to_dataframe()
        if df.empty:
            return "<p>kscope evaluation: no configs</p>"
        shown = [*self.parameters, *_SHOWN]
        body = []
        for _, row in df.iterrows():
            style = _VERDICT_STYLE.get(str(row["Verdict"]), "")
            cells = "".join(f"<td>{html.escape(_text(row[c]))}</td>" for c in shown)
            body.append(f'<tr style="{style}">{cells}</tr>')
        head = "".join(f"<th>{html.escape(c)}</th>" for c in shown)
        counts = df["Verdict"].value_counts()
        summary = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
        session = html.escape(self._core.measurements().headline())
        return (f'<div class="kscope-evaluation"><p><b>kscope evaluation</b>: {session} ({html.escape(summary)})</p>'
                f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")

    def _frame(self, columns: dict[str, list[Any]], config_indices: Sequence[int], kind: str) -> pd.DataFrame:
        return frame_of(columns, DERIVED_COLUMN_TYPES[kind], config_axes(self._configs, self.parameters, config_indices))


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
