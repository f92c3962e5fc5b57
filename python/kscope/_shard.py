"""Sharded sweeps: kscope.analyze.kernel's shard= option, the torchrun gather, and kscope.merge."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from . import _core
from ._results import ProfileResults
from .errors import ConfigError, ProfilerWarning, SweepError, also_builtin

ShardOption = Union[None, Literal["auto"], tuple[int, int]]


class MergeWarning(ProfilerWarning):
    """Shards that merge, but deserve a look: different drivers, or observed SM clocks more than 2%
    apart. ``warnings.simplefilter("error", kscope.MergeWarning)`` makes them errors."""


def check_option(shard: Any) -> ShardOption:
    """shard= as given: None, 'auto', or (index, count) with 0 <= index < count."""
    if shard is None or shard == "auto":
        return None if shard is None else "auto"
    if (
        isinstance(shard, (tuple, list))
        and len(shard) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in shard)
    ):
        index, count = shard
        if count >= 1 and 0 <= index < count:
            return (index, count)
    raise ConfigError(
        f"shard must be None, 'auto' (from KSCOPE_SHARD, torchrun, a Slurm job array or srun) or "
        f"(index, count) with 0 <= index < count, e.g. (0, 4) for the first of 4 shards; not {shard!r}"
    )


@dataclass
class Placement:
    """The shard a call measures and how it was launched."""

    shard: tuple[int, int] | None = None
    launcher: str | None = None
    local_rank: int = -1

    @property
    def gathers(self) -> bool:
        """Under torchrun the ranks' results meet on rank 0."""
        return self.launcher == "torchrun" and self.shard is not None and self.shard[1] > 1


def place(option: ShardOption, verbose: bool) -> Placement:
    """Where this call's configs come from: the option, or for 'auto' the environment."""
    if option is None:
        return Placement()  # the engine still honours KSCOPE_SHARD
    if option != "auto":
        return Placement(shard=option)
    found = _core.shard_from_environment()
    if found is None:
        if verbose:
            print("[kscope] shard='auto': no KSCOPE_SHARD, torchrun (RANK, WORLD_SIZE), Slurm job array or srun "
                  "in the environment; measuring the whole sweep", file=sys.stderr)
        return Placement()
    index, count, launcher, local_rank = found
    return Placement((index, count), launcher, local_rank)


def use_local_gpu(settings: _core.Settings, local_rank: int) -> None:
    """Under torchrun each process measures on GPU LOCAL_RANK, and torch allocates there too. With
    more processes than GPUs on the host, processes share GPUs (and disturb each other's
    measurements): said once."""
    if local_rank < 0:
        return
    import torch  # torchrun's processes have it

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        return  # nothing to place (kscope's simulated backend on a CPU machine)
    device = local_rank % count
    if device != local_rank:
        warnings.warn(
            f"torchrun started more processes on this host than it has GPUs ({count}): LOCAL_RANK "
            f"{local_rank} measures on GPU {device}, shared with another process, so their timings "
            f"disturb each other; start at most {count} process{'es' if count > 1 else ''} per host "
            f"(--nproc-per-node={count})",
            ProfilerWarning,
            stacklevel=5,
        )
    settings.device = device
    torch.cuda.set_device(device)


_gloo_groups: dict[int, Any] = {}  # id of the user's default group -> kscope's gloo group beside it


def _process_group() -> tuple[Any, Any, bool]:
    """(torch.distributed, group for objects, whether kscope started the default group)."""
    import torch.distributed as dist

    started = not dist.is_initialized()
    if started:
        dist.init_process_group("gloo")  # torchrun's MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE
    if dist.get_backend() == "gloo":
        return dist, None, started
    # The user's group is NCCL (it moves no Python objects): a gloo group beside it, made once.
    default = id(dist.group.WORLD)
    if default not in _gloo_groups:
        _gloo_groups[default] = dist.new_group(backend="gloo")
    return dist, _gloo_groups[default], started


def _gather(payload: dict[str, Any]) -> list[dict[str, Any]] | None:
    dist, group, started = _process_group()
    try:
        rank = dist.get_rank()
        gathered: list[Any] | None = [None] * dist.get_world_size() if rank == 0 else None
        dist.gather_object(payload, gathered, dst=0, group=group)
        return gathered
    finally:
        if started:
            dist.destroy_process_group()


def gather_failure(placement: Placement, error: BaseException) -> None:
    """A rank whose sweep failed still joins the gather (the others would wait for it)."""
    _gather({"shard": placement.shard, "results": None, "error": f"{type(error).__name__}: {error}"})


def gather(placement: Placement, results: ProfileResults) -> ProfileResults:
    """Rank 0 returns every rank's shard merged; the other ranks their own part."""
    gathered = _gather({"shard": placement.shard, "results": results._core.to_json(), "error": None})
    if gathered is None:
        return results
    failed = [f"shard {p['shard'][0]}/{p['shard'][1]}: {p['error']}" for p in gathered if p["error"] is not None]
    if failed:
        raise SweepError(
            "the sharded sweep failed on another rank (" + "; ".join(failed) + "). This rank's shard is in "
            "partial_results; with output_prefix each shard's measured configs are on disk: run the failed "
            "shards again with resume=True and join them with kscope.merge or `kscope merge`",
            partial_results=results,
        )
    shards = [_core.results_from_json(p["results"], f"shard {p['shard'][0]}/{p['shard'][1]}") for p in gathered]
    merged, notes = _core.merge(shards)
    for note in notes:
        warnings.warn(note, MergeWarning, stacklevel=4)
    return ProfileResults(merged, results._configs, results.parameters)


def merge(shards: Sequence[ProfileResults | str | os.PathLike[str]]) -> ProfileResults:
    """One ProfileResults from the shards of one sweep, as one process would have measured it.

    Each item is a shard's ProfileResults, its results file (``...results.json``), or the output
    prefix the shards wrote under (standing for every ``<prefix>shard-<i>-of-<n>-results.json``
    there). The shards' raw samples go through the engine's aggregation again, so statistics,
    normalization and geomeans are those of the whole sweep; every row keeps the GPU and Host of the
    shard that measured it. Raises ConfigError naming the shard and the fix when the shards are not
    one sweep's (other settings, sweep, backend or GPU model; a shard missing, twice, or unfinished),
    and warns (MergeWarning) of different drivers or observed clocks more than 2% apart.
    """
    if isinstance(shards, (str, os.PathLike)):
        shards = [shards]
    what = "the shards of a sweep: a list of ProfileResults, of results files or of output prefixes (or one path)"
    if not isinstance(shards, Iterable) or isinstance(shards, (bytes, ProfileResults)):
        raise also_builtin(ConfigError, TypeError)(f"kscope.merge takes {what}, not {shards!r}"[:300])
    given = list(shards)
    if not given:
        raise ConfigError(f"kscope.merge needs {what}")
    for s in given:
        if not isinstance(s, (ProfileResults, str, os.PathLike)):
            raise also_builtin(ConfigError, TypeError)(f"kscope.merge takes {what}; {s!r} is none of them"[:300])
    objects = [s for s in given if isinstance(s, ProfileResults)]
    paths = [os.fspath(s) for s in given if not isinstance(s, ProfileResults)]
    configs: Sequence[tuple[Any, ...]]
    if not paths:
        merged, notes = _core.merge([s._core for s in objects])
        configs, parameters = objects[0]._configs, objects[0].parameters
    elif not objects:
        merged, notes = _core.merge_files(paths)
        configs, parameters = merged.configs(), merged.axis_names
    else:
        raise ConfigError("kscope.merge takes either ProfileResults or paths, not both: save the ProfileResults "
                          "(ProfileResults.save) and merge the files")
    for note in notes:
        warnings.warn(note, MergeWarning, stacklevel=2)
    return ProfileResults(merged, configs, parameters)
