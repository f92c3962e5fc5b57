"""A choice among candidates that tuners make with kscope: a race of zero-argument callables, the
stable rule that settles a declared tie, and the times reported to a tuner that takes the minimum.

Tuners that time one candidate at a time and keep the fastest (Triton's autotuner, Inductor's
max-autotune, Helion) flip between near-tied candidates from process to process. Raced side by side,
near-ties are declared; among the winner and its ties the candidate listed first is chosen, so that
every process that declares the same tie makes the same choice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ._tune import RaceResults, tune
from .annotation import annotate
from .errors import ConfigError, ProfilerException, SweepError

TIE_RULE = "among the winner and the configs tied with it, the one listed first"


def race_callables(fns: Sequence[Callable[[], Any]], options: dict[str, Any]) -> RaceResults:
    """kscope.tune over the candidates (candidate i runs fns[i]()); a candidate's own exception is
    raised as itself."""

    def candidate(index: int) -> None:
        with annotate("candidate"):
            fns[index]()

    chosen_options: dict[str, Any] = {"verbosity": "silent", **options}
    try:
        return tune(candidate, [(i,) for i in range(len(fns))], **chosen_options)
    except SweepError as e:
        failure: BaseException = e
    raise own_exception(failure)


def own_exception(failure: BaseException) -> BaseException:
    """What a tuner should see of a failed measurement: the callable's own exception (a SweepError's
    cause), or kscope's."""
    cause = failure.__cause__
    if isinstance(failure, SweepError) and cause is not None and not isinstance(cause, ProfilerException):
        return cause
    return failure


def chosen(race: RaceResults) -> int:
    """The candidate chosen by the stable rule: the first listed of the winner and its ties."""
    if race.winner_index is None:
        raise ConfigError("the race raced no candidate")
    return min([race.winner_index, *race.tie_indices])


def reported_ms(race: RaceResults, choice: int) -> list[float]:
    """Each candidate's median time, in ms, as a tuner that keeps the minimum should see it: the
    chosen one strictly below every other (a tied candidate that measured faster is reported just
    above the chosen one)."""
    medians = [float(ns) / 1e6 for ns in race.to_dataframe()["MedianNs"]]
    floor = medians[choice]
    if not math.isfinite(floor):
        raise ConfigError("the race measured no valid duration of its chosen candidate")
    above = math.nextafter(floor, math.inf)
    return [m if i == choice else math.inf if math.isnan(m) else max(m, above) for i, m in enumerate(medians)]
