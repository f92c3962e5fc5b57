"""kscope.tune: the fastest config of a sweep, chosen with confidence by racing the configs in the
engine (kscope/tune.hpp), and RaceResults, what it returns."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Unpack

import pandas as pd

from . import _core, _notebook, _shard, testing
from ._configs import Signature, engine_rows
from ._evaluate import _prefix
from ._options import Options, TuneOptions, VerbosityLevel, _count, _number, entry_given, takes_options
from ._results import DERIVED_COLUMN_TYPES, ProfileResults, config_axes, frame_of
from .errors import ConfigError, SweepError, SweepInterrupted


@takes_options("tune")
def tune(
    func: Callable[..., object],
    configs: Iterable[Any] | None = None,
    *,
    threshold_pct: float = 2.0,
    alpha: float = 0.05,
    first_runs: int = 10,
    final_runs: int = 20,
    max_finalists: int = 8,
    annotation: str | None = None,
    **options: Unpack[TuneOptions],
) -> RaceResults:
    """Chooses the fastest of ``configs`` by racing them, in a fraction of the runs of measuring
    each one ``runs`` times.

    ``func`` is called as a kscope.analyze.kernel function is: with each config's values (configs
    as analyze.kernel takes them), marking the code to time with ``kscope.annotate`` (one annotation,
    or name the deciding one with ``annotation=``); each annotated region is timed as one range over
    all its GPU work, with the L2 flushed before it (``cache_control``).

    How: every config runs ``first_runs`` times; after each round, a config shown slower than the
    leader (the lowest median) by more than ``threshold_pct`` (a one-sided Mann-Whitney U test at
    alpha / 2 / ((configs - 1) * looks): Bonferroni over every test that could drop the fastest
    config; confirmed in cycles where the SM clocks varied) is dropped; while more than
    ``max_finalists`` survive, the leader and the survivors beyond the threshold double their runs,
    up to ``runs``; the finalists then run interleaved, ``final_runs`` passes, and are judged by
    their per-pass ratios to the best of them. With confidence 1 - alpha, the fastest config is the
    winner or one of its ties.

    runs: the most runs a config gets before the final round, and the exhaustive sweep the cost is
        compared with (every config ``warmup_runs + runs`` times). ``warmup_runs`` precede every
        visit of a config.
    backend, cache_control, clock_control, thermal_mode, thermal_wait, thermal_cont, thermal_timeout,
        verbosity: as for kscope.analyze.kernel (a backend that measures durations: 'cupti', the
        default, or 'events'). The options of kscope.analyze.kernel that tune does not take change
        or add to what decides (docs/tune.md lists them).
    output_prefix, resume, overwrite, fsync_interval_s: each round streams its runs under
        ``{output_prefix}round-<k>-`` as a profile does; ``resume=True`` continues a race that was
        killed or interrupted, taking the same decisions again from the runs on disk. At the end
        ``{output_prefix}race.csv`` holds the table, and ``summary.csv``, ``samples.csv`` and
        ``results.json`` every run of every round.
    shard: as for analyze.kernel; a shard races its own configs only (its winner and ties, raced
        again in one process with the other shards', decide the sweep: docs/tune.md).

    Returns RaceResults: ``winner`` (the config), ``ties``, ``confidence``, ``to_dataframe()`` (one
    row per config: Outcome winner/tied/slower/eliminated/left_out, Round, Runs, MedianNs,
    FinalMedianNs, RatioToWinner with its interval, Reason), ``cost`` (runs and GPU time against the
    exhaustive sweep's) and ``measurements`` (every run, as a ProfileResults). A failing call stops
    the race with a SweepError whose partial_results hold every round's runs so far.
    """
    if not callable(func):
        raise ConfigError(f"tune's func must be a function of a config's values, not {func!r}")
    checked = Options(**entry_given("tune", options))
    signature = Signature(func)
    given = signature.configs(list(configs) if configs is not None else None)
    race_options = _race_options(threshold_pct, alpha, first_runs, final_runs, max_finalists, annotation)
    simulated = testing.active()
    settings = checked.settings(_prefix(checked.output_prefix))
    placement = _shard.place(checked.shard, checked.verbosity >= VerbosityLevel.INFO)
    if placement.launcher is not None:
        settings.shard = placement.shard
    if placement.launcher == "torchrun":
        _shard.use_local_gpu(settings, placement.local_rank)

    def body(config_index: int) -> None:
        signature.call(func, given[config_index])

    progress = _notebook.progress_display(checked.verbosity >= VerbosityLevel.INFO)
    try:
        core = _core.tune(signature.names, engine_rows(given, signature.names), settings, race_options, body,
                          simulated, progress)
    except (SweepError, SweepInterrupted) as e:
        if isinstance(e.partial_results, _core.Results):  # every round's runs before it stopped
            e.partial_results = ProfileResults(e.partial_results, given, signature.names)
        raise
    finally:
        if progress is not None:
            progress.close()
    return RaceResults(core, given, signature.names)


def _race_options(threshold_pct: float, alpha: float, first_runs: int, final_runs: int, max_finalists: int,
                  annotation: str | None) -> _core.RaceOptions:
    o = _core.RaceOptions()
    o.threshold_pct, o.alpha = _number("threshold_pct", threshold_pct), _number("alpha", alpha)
    o.first_runs, o.final_runs = _count("first_runs", first_runs, 0), _count("final_runs", final_runs, 0)
    o.max_finalists = _count("max_finalists", max_finalists, 0)
    if annotation is not None:
        if not isinstance(annotation, str) or not annotation:
            raise ConfigError(f"annotation must name the annotation whose duration decides, not {annotation!r}")
        o.annotation = annotation
    o.validate()
    return o


class RaceResults:
    """What ``kscope.tune`` returns: the decision, each config's fate, and what it cost.

    ``winner``: the winning config (a tuple of its values, as configs were given); ``ties``: the
    configs that cannot be told apart from it within the threshold; ``confidence``: 1 - alpha, the
    confidence that the fastest config is the winner or a tie. ``to_dataframe()``: one row per raced
    config. ``cost``: {'runs', 'exhaustive_runs', 'gpu_s', 'exhaustive_gpu_s', 'wall_s'}.
    ``rounds``: [{'kind', 'configs', 'runs', 'eliminated'}]. ``measurements``: every recorded run of
    every round, as a ProfileResults.
    """

    def __init__(self, core: Any, configs: Sequence[tuple[Any, ...]], parameters: Sequence[str]) -> None:
        self._core = core
        self._configs = list(configs)
        self.parameters = list(parameters)

    @property
    def winner(self) -> tuple[Any, ...] | None:
        """The winning config: a tuple of its values, as the configs were given; None when the race
        raced no config (a shard that holds none of the sweep's configs)."""
        index = self.winner_index
        return None if index is None else self._configs[index]

    @property
    def winner_index(self) -> int | None:
        """The winner's position in the configs given; None when no config was raced."""
        return int(self._core.winner()) if len(self) else None

    @property
    def ties(self) -> list[tuple[Any, ...]]:
        """The configs that cannot be told apart from the winner within the threshold."""
        return [self._configs[i] for i in self.tie_indices]

    @property
    def tie_indices(self) -> list[int]:
        """The ties' positions in the configs given."""
        return [int(i) for i in self._core.ties()]

    @property
    def confidence(self) -> float:
        """1 - alpha: the confidence that the fastest config is the winner or one of its ties."""
        return float(self._core.confidence())

    @property
    def cost(self) -> dict[str, float]:
        """What the race cost against the exhaustive sweep of the same runs: {'runs',
        'exhaustive_runs', 'gpu_s', 'exhaustive_gpu_s', 'wall_s'}."""
        return dict(self._core.cost())

    @property
    def rounds(self) -> list[dict[str, Any]]:
        """Each round of the race, in order: [{'kind', 'configs', 'runs', 'eliminated'}]."""
        return list(self._core.rounds())

    @property
    def measurements(self) -> ProfileResults:
        """Every recorded run of every round, by config, as a ProfileResults."""
        return ProfileResults(self._core.measurements(), self._configs, self.parameters)

    def to_dataframe(self) -> pd.DataFrame:
        """One row per raced config: its parameters, Outcome ('winner', 'tied', 'slower',
        'eliminated' or 'left_out'), Round, Runs, MedianNs, FinalMedianNs, RatioToWinner with
        RatioCI_Lower and RatioCI_Upper, and the Reason of its outcome."""
        columns, indices = self._core.table()
        return frame_of(columns, DERIVED_COLUMN_TYPES["race"], config_axes(self._configs, self.parameters, indices))

    def __len__(self) -> int:
        return len(self._core)

    def __str__(self) -> str:
        # The table rendered by pandas, not by the engine's console writer: C++ streams that format
        # numbers can crash in a process where torch is loaded (pytorch/pytorch#109923).
        text = str(self._core.heading())
        df = self.to_dataframe()
        return text + (df.to_string(index=False) if len(df) else "")

    def __repr__(self) -> str:
        if not len(self):
            return "<kscope.RaceResults: no config raced (a shard that holds none of the sweep's configs)>"
        return f"<kscope.RaceResults: winner {self.winner!r}, {len(self.ties)} ties, {len(self)} configs raced>"

