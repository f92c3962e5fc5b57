"""The table of kscope.evaluate_many, streamed to its output directory as candidates finish, and read
back to resume a batch that was killed: one JSON line per finished candidate in ``results.jsonl``
(written and flushed to the disk before the next candidate's), ``batch.json`` with the settings that
decide the verdicts, and ``results.csv``, the whole table, at the end. One batch at a time per
directory: an advisory lock on ``lock`` (the kernel drops it when its holder dies)."""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import shutil
import socket
from typing import Any, TextIO

import pandas as pd

from . import _core
from ._results import DERIVED_COLUMN_TYPES, frame_of
from .errors import ConfigError

# The evaluation's columns a batch keeps: its readable view's and the GPU, typed as its column table
# types them (a count may be missing: a candidate that crashed has none).
EVALUATED = tuple(_core.evaluation_view_columns()) + ("GPU",)
COLUMNS = ("Problem", "Candidate", "Config") + EVALUATED + ("CompileS", "LoadS", "MeasureS", "Restored", "Format",
                                                            "Worker")
_TYPES = {**{name: {"integer": "optional_integer"}.get(kind, kind) for name, kind in
             DERIVED_COLUMN_TYPES["evaluation"].items() if name in EVALUATED},
          "CompileS": "real", "LoadS": "real", "MeasureS": "real"}
_STREAM, _SETTINGS, _TABLE, _LOCK = "results.jsonl", "batch.json", "results.csv", "lock"
# Settings added since batches were first written, each with the value the batches before it ran
# with: a batch.json without one resumes as if it said that value.
_ADDED_SETTINGS = {"checked_runs": 8}
# What the batch's earlier files are, removed by overwrite (build/ is a cache, and stays).
_WRITTEN = (_STREAM, _SETTINGS, _TABLE, "evaluations", "logs")


class BatchTable:
    """The batch's output directory: claimed, read back (resume) or cleared (overwrite), then
    appended to candidate by candidate."""

    def __init__(self, directory: str, settings: dict[str, Any], resume: bool, overwrite: bool) -> None:
        self.directory = directory
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"output directory {directory!r}: cannot create it ({e.strerror}); give a writable "
                              f"directory") from None
        self._stream: TextIO | None = None
        self._lock: int | None = _claim(os.path.join(directory, _LOCK))
        try:
            self.done = self._open(settings, resume, overwrite)
        except BaseException:
            self.close()
            raise
        for sub in ("evaluations", "logs"):
            os.makedirs(os.path.join(directory, sub), exist_ok=True)
        self._stream = open(os.path.join(directory, _STREAM), "a", encoding="utf-8")

    def path(self, *parts: str) -> str:
        return os.path.join(self.directory, *parts)

    def _open(self, settings: dict[str, Any], resume: bool, overwrite: bool) -> dict[str, list[dict[str, Any]]]:
        stream = self.path(_STREAM)
        earlier = os.path.exists(stream) or os.path.exists(self.path(_SETTINGS))
        if earlier and overwrite:
            for name in _WRITTEN:
                target = self.path(name)
                if os.path.isdir(target):
                    shutil.rmtree(target)
                elif os.path.exists(target):
                    os.remove(target)
            earlier = False
        done: dict[str, list[dict[str, Any]]] = {}
        if earlier:
            if not resume:
                count = len(_read(stream)[0]) if os.path.exists(stream) else 0
                raise ConfigError(f"{self.directory} holds an earlier batch ({count} candidate"
                                  f"{'' if count == 1 else 's'} evaluated): pass resume=True (--resume) to evaluate "
                                  f"only the rest, overwrite=True (--overwrite) to start again, or another "
                                  f"directory")
            _same_settings(self.path(_SETTINGS), settings)
            if os.path.exists(stream):
                done, good = _read(stream)
                with open(stream, "r+b") as f:  # a line a kill cut short is dropped, not appended to
                    f.truncate(good)
        _write_whole(self.path(_SETTINGS), json.dumps(settings, indent=1) + "\n")
        return done

    def add(self, rows: list[dict[str, Any]]) -> None:
        """One candidate's rows, on the disk before this returns."""
        assert self._stream is not None, "add() after close()"
        self._stream.write(json.dumps({"candidate": rows[0]["Candidate"], "rows": rows}) + "\n")
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self.done[rows[0]["Candidate"]] = rows

    def frame(self) -> pd.DataFrame:
        """Every finished candidate's rows (those of earlier runs too), by candidate and config."""
        rows = [r for c in sorted(self.done) for r in self.done[c]]
        return frame_of({name: [r.get(name) for r in rows] for name in COLUMNS}, _TYPES, lambda name: None)

    def finish(self) -> pd.DataFrame:
        frame = self.frame()
        _write_whole(self.path(_TABLE), frame.to_csv(index=False))
        return frame

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._lock is not None:
            with contextlib.suppress(OSError):
                os.remove(self.path(_LOCK))
            os.close(self._lock)
            self._lock = None


def _claim(path: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 512).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        raise ConfigError(f"{os.path.dirname(path)} is in use by another batch ({holder}): wait for it, or give "
                          f"another directory") from None
    os.ftruncate(fd, 0)
    started = datetime.datetime.now().isoformat(timespec="seconds")
    os.write(fd, f"pid {os.getpid()} on {socket.gethostname()} since {started}\n".encode())
    return fd


def _read(stream: str) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """The candidates a stream holds, and the length of its whole lines."""
    done: dict[str, list[dict[str, Any]]] = {}
    good = 0
    with open(stream, "rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                break
            try:
                record = json.loads(line)
                done[record["candidate"]] = record["rows"]
            except (ValueError, KeyError, TypeError):
                break
            good += len(line)
    return done, good


def _same_settings(path: str, settings: dict[str, Any]) -> None:
    try:
        with open(path, encoding="utf-8") as f:
            earlier = json.load(f)
    except (OSError, ValueError):
        return  # killed before it was written: nothing was evaluated under other settings
    earlier = {**_ADDED_SETTINGS, **earlier}
    differences = [f"{k}: {earlier.get(k)!r} then, {v!r} now" for k, v in settings.items() if earlier.get(k) != v]
    if differences:
        raise ConfigError(f"the batch in {os.path.dirname(path)} was evaluated with other settings ("
                          + "; ".join(differences) + "): resume it with the same ones, or pass overwrite=True "
                          "(--overwrite) to start again")


def _write_whole(path: str, text: str) -> None:
    """Written beside it, flushed, then renamed: never left half-written."""
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)
