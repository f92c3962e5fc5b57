"""The files a profiled function's calls write: the engine's under output_prefix
({prefix}{function}-{n}-summary.csv, ...) and output_csv's, where n counts the function's
successful calls; the prefix's directory, and an earlier call's CSV files moved aside with the
engine's (or refused as they are)."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from typing import TYPE_CHECKING

from . import _core
from ._options import VerbosityLevel
from .errors import ConfigError

if TYPE_CHECKING:
    from ._options import Options
    from ._results import ProfileResults


class CallFiles:
    """The output files of one profiled function's calls, as its options ask."""

    def __init__(self, function_name: str, options: Options) -> None:
        self.function_name = function_name
        self.options = options
        self.calls = 0  # successful calls: the {n} of the file names
        self.csv_prefix: str | None = None  # output_csv without output_prefix: a temporary directory

    def count_call(self) -> int:
        """The number of the call whose files are written now; the next call gets the next one."""
        self.calls += 1
        return self.calls - 1

    def engine_prefix(self) -> str:
        """Where the engine writes this call's files ({prefix}{function}-{n}-summary.csv, ...
        -samples.csv, -results.json, and the ncu report): only when output_prefix is given. Its
        directory is made now, so a bad path fails before anything is measured."""
        prefix = self._prefix()
        if prefix is None:
            return ""
        if os.path.exists(prefix) and not (os.path.isdir(prefix) or os.path.isfile(prefix)):
            in_the_way = _not_a_directory(prefix)
            beside = f"{prefix}{self.function_name}-{self.calls}-results.json"
            raise ConfigError(
                f"output_prefix {prefix!r} is {in_the_way[1] if in_the_way else 'no file'}: an output prefix starts "
                f"the names of the files written beside it ({beside}, ...) or names a directory to write them in; "
                f"give one of those"
            )
        directory = os.path.dirname(prefix)
        if directory:
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as e:
                in_the_way = _not_a_directory(directory)
                why = (f"{in_the_way[0]!r} is {in_the_way[1]}, not a directory; give a prefix in a directory"
                       if in_the_way else f"{e.strerror}; give a prefix in a writable directory")
                raise ConfigError(f"output_prefix {prefix!r}: cannot create its directory {directory!r}: {why}") from None
        return f"{prefix}{self.function_name}-{self.calls}-"

    def _prefix(self) -> str | None:
        """output_prefix, an existing directory's name standing for that directory ('out' as 'out/')."""
        prefix = self.options.output_prefix
        if prefix is not None and prefix and not prefix.endswith(os.sep) and os.path.isdir(prefix):
            prefix += os.sep
        return prefix

    def _csv_paths(self, prefix: str, call: int, shard: tuple[int, int] | None) -> list[tuple[str, str]]:
        """(kind, path) of the output_csv files of the call-th successful call."""
        tag = f"{self.function_name}-{call}" + (f"-shard-{shard[0]}-of-{shard[1]}" if shard else "") + ".csv"
        return [(kind, f"{prefix}{kind}_data-{tag}") for kind in ("profiled", "processed")]

    def make_room(self, settings: _core.Settings, shard: tuple[int, int] | None) -> None:
        """output_csv files of an earlier call are the engine's companions: moved aside with the
        engine's files of a finished call (numbered backups), refused with an unfinished one or
        another kind of result, as the engine treats its own; replaced only with overwrite=True."""
        prefix = self._prefix()
        if not self.options.output_csv or prefix is None:
            return
        csv = [path for _, path in self._csv_paths(prefix, self.calls, shard)]
        if any(os.path.lexists(path) for path in csv):
            _core.make_room_for_call(settings, csv)

    def write_csv(self, results: ProfileResults, call: int) -> None:
        prefix = self._prefix()
        if prefix is None:
            if self.csv_prefix is None:
                self.csv_prefix = tempfile.mkdtemp(prefix="kscope_") + os.sep
            prefix = self.csv_prefix
        if os.path.dirname(prefix):
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
        shard = results._core.shard()  # a shard's own part: beside the other shards', not over them
        frames = {"profiled": results.raw_dataframe, "processed": results.to_dataframe}
        for kind, path in self._csv_paths(prefix, call, shard):
            _core.write_file(path, frames[kind]().to_csv(index=False))  # whole, through links, never over a device
            if self.options.verbosity >= VerbosityLevel.INFO:
                print(f"[kscope] {kind} data written to {path}", file=sys.stderr)


def _not_a_directory(directory: str) -> tuple[str, str] | None:
    """(path, what it is) of the nearest existing part of `directory` that is not a directory (a file,
    a device such as /dev/null), which makes creating `directory` fail; None when there is none."""
    path = directory
    while path and not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent
    if not path or os.path.isdir(path):
        return None
    mode = os.stat(path).st_mode if os.path.exists(path) else 0
    kinds = [(stat.S_ISREG, "a file"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket")]
    return path, next((kind for test, kind in kinds if test(mode)), "a broken symbolic link")
