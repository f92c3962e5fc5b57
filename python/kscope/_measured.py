"""What every kind of kscope results offers (ProfileResults, EvaluationResults): the type of an
error's ``partial_results``. kscope.errors, which every module imports, names this instead of the
results classes, which import most of the package."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pandas as pd


class MeasuredResults(Protocol):
    """Results of a sweep or an evaluation: a table, a file, a length."""

    def to_dataframe(self) -> pd.DataFrame: ...

    def save(self, path: str | os.PathLike[str]) -> None: ...

    def __len__(self) -> int: ...
