"""kscope.evaluate_many: kscope.evaluate over a directory of candidates, at the scale of kernel
generation. Compile workers (CPU) build each candidate ahead; measuring workers, one or more per GPU,
load it, take turns on their GPU and evaluate it; a candidate that crashes its worker, hangs or breaks
its GPU ends as crashed or timed_out and the batch goes on with a fresh worker. The table is streamed
to the output directory as candidates finish (kscope._batch_table), so a killed batch resumes where
it stopped."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import numbers
import os
import re
import statistics
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from multiprocessing.connection import wait
from typing import Any, Literal

import pandas as pd

from . import _problems, testing
from ._batch_table import BatchTable
from ._evaluate import judged_options
from ._options import Options, VerbosityLevel
from ._workers import Launcher, Task, Worker
from .errors import BackendError, ConfigError

# Verdicts of a candidate that did not come to kscope.evaluate's.
CRASHED, TIMED_OUT, COMPILE_FAILED, ERROR = "crashed", "timed_out", "compile_failed", "error"
_STARTUP_TIMEOUT_S = 300.0  # importing torch and making a CUDA context, on a slow first run
_STARTUP_FAILURES = 3  # workers in a row that die as they start stop the batch
_STANDBYS = 1  # measuring workers started ahead per GPU, each to take the place of one that dies
_STARTING = ("starting", "standby", "activate")  # a measuring worker's phases before it is ready
# What a candidate's source says about how long it compiles: a torch extension or nvcc build takes
# tens of seconds, Triton's compile a few, anything else the import alone.
_BUILDS = re.compile(r"load_inline|cpp_extension|CUDAExtension|CppExtension|\bnvcc\b")
_TRITON = re.compile(r"\btriton\b")


def evaluate_many(
    problems: str | os.PathLike[str] | Iterable[tuple[str | os.PathLike[str], str | os.PathLike[str]]],
    output_dir: str | os.PathLike[str] = "kscope-evaluate",
    *,
    runs: int = 20,
    warmup_runs: int = 1,
    checked_runs: int = 8,
    rtol: float | None = None,
    atol: float | None = None,
    threshold_pct: float = 2.0,
    confidence: float = 0.95,
    seed: int = 0,
    cache_control: Literal["all", "none"] = "all",
    timeout_s: float = 120.0,
    compile_timeout_s: float = 900.0,
    gpus: Sequence[int] | None = None,
    workers_per_gpu: int = 2,
    compile_workers: int | None = None,
    build_dir: str | os.PathLike[str] | None = None,
    gpumode_configs: Literal["benchmarks", "tests"] = "benchmarks",
    resume: bool = False,
    overwrite: bool = False,
    verbosity: VerbosityLevel | int | Literal["silent", "info", "debug"] = VerbosityLevel.INFO,
) -> pd.DataFrame:
    """Evaluates every candidate of a directory of problems against its reference, each in a worker
    process, and returns one table (a row per candidate and config).

    problems: a directory with one directory per problem: a KernelBench reference (a file defining
        ``Model``, ``get_inputs`` and ``get_init_inputs``, e.g. ``reference.py``) with candidates
        defining ``ModelNew``; or a GPU MODE problem (``reference.py`` defining ``ref_kernel`` and
        ``generate_input``, its ``task.yml``) with candidates defining ``custom_kernel``. Every other
        Python file of a problem's directory (or below it) that defines the entry, or does not parse,
        is a candidate. Or (reference file, candidate file) pairs, for other layouts.
    output_dir: where the table goes as candidates finish (``results.jsonl``; ``results.csv`` at the
        end), each candidate's evaluation (``evaluations/<candidate>.json``, which
        kscope.load_evaluation reads), the workers' logs and, unless ``build_dir``, the builds.
    runs, warmup_runs, checked_runs, rtol, atol, threshold_pct, confidence, seed, cache_control: as for
        kscope.evaluate, for every candidate. ``checked_runs``: the recorded runs of each config whose
        tensors are read (0: every run); fewer cost less GPU time at large sizes and find a candidate
        that fakes only some runs less often (docs/evaluate.md, "Checked runs").
    timeout_s: the longest a candidate may take to load in its worker, and again to be measured
        (waiting for the GPU not counted): then it is timed_out and its worker replaced.
    compile_timeout_s: the longest a candidate may take to compile (import, torch extensions, nvcc).
    gpus: the GPUs to measure on (indices among the visible ones); None: every visible GPU.
    workers_per_gpu: measuring workers per GPU. They take turns on it: one measures while the others
        load their next candidate. Beside them a standby (torch imported, no CUDA context yet) takes
        the place of one that dies.
    compile_workers: CPU processes compiling ahead; None: the cores left beside the measuring workers.
    build_dir: where each candidate's torch extensions are built (``<build_dir>/<candidate>``); give
        the same one to a later batch to reuse its builds.
    gpumode_configs: which list of a GPU MODE task.yml gives the configs.
    resume, overwrite: an output directory that holds an earlier batch is refused unless
        ``resume=True`` (evaluate only the candidates it lacks, with the same settings) or
        ``overwrite=True`` (start again; the builds are kept).
    verbosity: 'silent', 'info' (a line per candidate, on stderr) or 'debug'.

    Returns a DataFrame: Problem, Candidate (its path under ``problems``), Config (a GPU MODE config
    as JSON; empty for KernelBench), Verdict (kscope.evaluate's faster, slower, same, incorrect or
    suspect; or crashed, timed_out, compile_failed, error), Speedup with SpeedupCI_Lower and
    SpeedupCI_Upper, ReferenceMedianNs, CandidateMedianNs, MaxAbsError, MaxRelError, Findings,
    Reason (why, or the crash's message), CompileS, LoadS, MeasureS (seconds compiling, loading in
    the measuring worker, and holding the GPU), Restored (what the worker put back after it),
    Format, Worker and GPU.
    """
    options = Options(runs=runs, warmup_runs=warmup_runs, cache_control=cache_control, verbosity=verbosity)
    judged = judged_options(rtol, atol, threshold_pct, confidence, seed, checked_runs)
    for name, value in (("timeout_s", timeout_s), ("compile_timeout_s", compile_timeout_s)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{name} must be a number of seconds > 0, not {value!r}")
    if gpumode_configs not in ("benchmarks", "tests"):
        raise ConfigError(f"gpumode_configs must be 'benchmarks' or 'tests' (the lists of a task.yml), "
                          f"not {gpumode_configs!r}")
    per_gpu = _count("workers_per_gpu", workers_per_gpu)
    if compile_workers is not None:
        _count("compile_workers", compile_workers)
    if isinstance(problems, (str, os.PathLike)):
        candidates = _problems.find(problems, gpumode_configs)
    else:
        candidates = _problems.pairs(problems)
    simulated = testing.active() is not None
    devices = _gpus(gpus, simulated)
    compilers = compile_workers or max(1, (os.cpu_count() or 2) - len(devices) * per_gpu - 1)
    evaluate_options = {"runs": options.runs, "warmup_runs": options.warmup_runs,
                        "checked_runs": judged.checked_runs, "rtol": judged.rtol,
                        "atol": judged.atol, "threshold_pct": judged.threshold_pct,
                        "confidence": judged.confidence, "seed": judged.seed, "cache_control": cache_control}
    directory = os.path.abspath(os.fspath(output_dir))
    table = BatchTable(directory, {**evaluate_options, "gpumode_configs": gpumode_configs}, resume, overwrite)
    try:
        batch = _Batch(candidates, table, evaluate_options, devices, per_gpu, compilers,
                       os.path.abspath(os.fspath(build_dir)) if build_dir is not None else table.path("build"),
                       float(timeout_s), float(compile_timeout_s), simulated,
                       options.verbosity >= VerbosityLevel.INFO)
        batch.run()
        frame = table.finish()
        frame.attrs["schedule"] = batch.schedule.report()
        if batch.schedule.wall_s:
            with open(table.path("schedule.json"), "w") as f:
                json.dump(frame.attrs["schedule"], f, indent=1)
        return frame
    finally:
        table.close()


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ConfigError(f"{name} must be an integer >= 1, not {value!r}")
    return int(value)


def _gpus(given: Sequence[int] | None, simulated: bool) -> list[str]:
    """The CUDA_VISIBLE_DEVICES entry of each GPU to measure on. The simulated backend has as many
    GPUs as asked for."""
    if given is not None and (isinstance(given, (str, bytes)) or not isinstance(given, Sequence) or not given
                              or not all(isinstance(g, numbers.Integral) and not isinstance(g, bool) for g in given)):
        raise ConfigError(f"gpus must be a list of GPU indices, e.g. [0, 1], or None for every visible GPU; "
                          f"not {given!r}")
    visible_env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if simulated:
        visible = [str(i) for i in range(max(0, *(given or [0])) + 1)]
    elif visible_env is not None:
        visible = [v.strip() for v in visible_env.split(",") if v.strip()]
    else:
        visible = [str(i) for i in range(_device_count())]
    if not visible:
        seen = "torch sees no CUDA device" if visible_env is None else f"CUDA_VISIBLE_DEVICES={visible_env!r}"
        raise BackendError(f"evaluate_many measures on GPUs and none is visible here ({seen}); `kscope doctor` "
                           f"says why")
    if given is None:
        return visible
    for g in given:
        if not 0 <= g < len(visible):
            raise ConfigError(f"gpus: {g!r} is not the index of a visible GPU (0 to {len(visible) - 1})")
    return list(dict.fromkeys(visible[int(g)] for g in given))


def _device_count() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count()


def _uses(candidate: _problems.Candidate) -> tuple[bool, bool]:
    """Whether the candidate's source builds a torch extension (or runs nvcc), and uses Triton."""
    try:
        stat = os.stat(candidate.path)
    except OSError:
        return False, False
    return _source_uses(candidate.path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4096)
def _source_uses(path: str, mtime_ns: int, size: int) -> tuple[bool, bool]:
    """_uses for one version of a file: a batch asks twice per candidate (preloaded, compile_order),
    and a source edited between batches has another modification time."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
    except OSError:
        return False, False
    return bool(_BUILDS.search(source)), bool(_TRITON.search(source))


def _compile_rank(candidate: _problems.Candidate, build_dir: str) -> int:
    """Where a candidate goes in compile_order: 0 it only imports, 1 it builds a torch extension or
    runs nvcc and ``build_dir`` has no build of it yet, 2 it compiles with Triton."""
    builds, triton = _uses(candidate)
    if builds and not _built(os.path.join(build_dir, candidate.key)):
        return 1
    return 2 if triton else 0


def preloaded(candidates: Iterable[_problems.Candidate]) -> list[str]:
    """The modules a measuring worker imports as it starts, once, rather than in a candidate's load
    time: torch, and torch's extension builder and Triton where candidates use them."""
    uses = [_uses(c) for c in candidates]
    return ["torch"] + ["torch.utils.cpp_extension"] * any(b for b, _ in uses) + ["triton"] * any(t for _, t in uses)


def launcher_preload(preload: list[str]) -> str:
    """What the launcher imports before it forks measuring workers: their modules but torch's
    extension builder, whose import asks CUDA for the devices, after which torch refuses CUDA in every
    forked child. Each worker imports it as it starts."""
    return ",".join(m for m in preload if m != "torch.utils.cpp_extension")


def _built(directory: str) -> bool:
    """Whether a candidate's build directory holds a built library (a batch before built it)."""
    for _, _, files in os.walk(directory):
        if any(f.endswith(".so") for f in files):
            return True
    return False


def compile_order(candidates: Iterable[_problems.Candidate], build_dir: str) -> list[_problems.Candidate]:
    """The order candidates are compiled in: first those that only import (no compile time: the GPU
    has them at once, and measures them while the rest compile), then the longest first (builds,
    then Triton compiles), so that the last build starts, and ends, as early as the workers allow,
    and the shorter compiles fill the workers that builds free. Triton's compiles before the builds
    delayed every build by their share of the workers (about 6 s of 78 in a 100-candidate batch)."""
    return sorted(candidates, key=lambda candidate: _compile_rank(candidate, build_dir))


class Schedule:
    """Where a batch's time went: the GPUs' time measuring and waiting (for their workers to start,
    for a worker to replace one that died, for a candidate to be compiled, for one to be loaded), the
    compile workers' time, and when compiling ended; the measuring workers replaced, and how long one
    takes to start. The time between two of the scheduler's events counts in the state the batch was
    left in by the first."""

    def __init__(self, gpus: int, compile_workers: int) -> None:
        self.start = self.last = time.monotonic()
        self.gpus, self.compile_workers = gpus, compile_workers
        self.gpu_s = {"measuring": 0.0, "starting": 0.0, "replacing": 0.0, "waiting_for_compile": 0.0,
                      "waiting_for_load": 0.0}
        self.replaced = self.replaced_by_standby = 0
        self.worker_starts: list[float] = []  # each measuring worker's, from its process to its standby
        self.activations: list[float] = []  # each standby's, from activated to ready (its CUDA context)
        self.compile_busy_s = 0.0
        self.compile_cpu_s = 0.0  # the finished compiles', their compilers' included
        self._states: tuple[list[str], int] = (["starting"] * gpus, 0)
        self.started_s: float | None = None  # when the workers started first were all ready
        self.compiling_ended_s: float | None = None
        self.wall_s = 0.0

    def tick(self, gpu_states: list[str], compiling: int, starting: bool) -> None:
        """Counts the time since the last tick in the states it gave, and takes the states from now
        on: each GPU's (a key of gpu_s) and the number of compile workers compiling; ``starting``:
        some compile worker, or some GPU's first measuring workers, still starting."""
        self._count()
        self._states = (gpu_states, compiling)
        if not starting and self.started_s is None:
            self.started_s = self.last - self.start

    def _count(self) -> None:
        now = time.monotonic()
        elapsed, self.last = now - self.last, now
        gpu_states, compiling = self._states
        for state in gpu_states:
            self.gpu_s[state] += elapsed
        self.compile_busy_s += compiling * elapsed

    def replacing(self, by_standby: bool) -> None:
        """A measuring worker died or was ended; a standby took its place, or none was ready."""
        self.replaced += 1
        self.replaced_by_standby += by_standby

    def compiling_ended(self) -> None:
        if self.compiling_ended_s is None:
            self.compiling_ended_s = time.monotonic() - self.start

    def end(self) -> None:
        self._count()
        self.wall_s = self.last - self.start

    def report(self) -> dict[str, float | int | None]:
        """The batch's wall time and its parts, in seconds; the GPUs' are summed over GPUs."""
        ended = self.compiling_ended_s
        return {"wall_s": self.wall_s, "gpus": self.gpus, "compile_workers": self.compile_workers,
                "startup_s": self.started_s,
                "worker_start_s": statistics.median(self.worker_starts) if self.worker_starts else None,
                "worker_activate_s": statistics.median(self.activations) if self.activations else None,
                **{f"gpu_{state}_s": seconds for state, seconds in self.gpu_s.items()},
                "workers_replaced": self.replaced, "workers_replaced_by_standby": self.replaced_by_standby,
                "compile_busy_s": self.compile_busy_s, "compile_cpu_s": self.compile_cpu_s,
                "cores": os.cpu_count(), "compiling_ended_s": ended,
                "after_compiling_s": None if ended is None else self.wall_s - ended}


class _Batch:
    """The scheduler: candidates flow from the compile workers to the measuring workers, one
    measuring at a time per GPU; every message, death and deadline is handled in this one loop."""

    def __init__(self, candidates: list[_problems.Candidate], table: BatchTable, options: dict[str, Any],
                 gpus: list[str], per_gpu: int, compilers: int, build_dir: str, timeout_s: float,
                 compile_timeout_s: float, simulated: bool, verbose: bool) -> None:
        self.table, self.options, self.gpus, self.build_dir = table, options, gpus, build_dir
        self.timeout_s, self.compile_timeout_s = timeout_s, compile_timeout_s
        self.simulated, self.verbose = simulated, verbose
        self.total = len(candidates)
        self.to_compile = deque(compile_order((c for c in candidates if c.id not in table.done), build_dir))
        self.preload = preloaded(self.to_compile)
        self.left = len(self.to_compile)
        self.compiled: deque[_problems.Candidate] = deque()
        self.compile_s: dict[str, float] = {}
        self.load_s: dict[str, float] = {}
        self.holder: dict[str, Worker | None] = {g: None for g in gpus}
        self.measured_on: set[str] = set()  # the GPUs that have had a ready worker
        self.workers: list[Worker] = []
        self.started = 0
        self.startup_failures = 0
        self.compilers = min(compilers, self.left)
        self.per_gpu = per_gpu
        self.leaving: list[Worker] = []  # asked to end, reaped at the end
        self.schedule = Schedule(len(gpus), self.compilers)
        self.launcher: Launcher | None = None  # forks the workers, once run() has started it

    # -- workers --
    def _start(self, kind: str, gpu: str | None = None) -> Worker:
        self.started += 1
        name = f"compile-{self.started}" if kind == "compile" else f"gpu{gpu}-{self.started}"
        # A measuring worker imports what candidates use as it starts, not in a load the GPU waits
        # for; a forked one finds most of it imported by the launcher (launcher_preload).
        env = {"KSCOPE_WORKER_PRELOAD": ",".join(self.preload) if kind == "measure" else "torch"}
        if self.simulated:
            env["KSCOPE_WORKER_SIMULATED"] = "1"
        if gpu is not None and not self.simulated:
            env["CUDA_VISIBLE_DEVICES"] = gpu
        if kind == "compile":  # a torch extension's C++ and CUDA sources side by side (ninja's default: every core)
            env["MAX_JOBS"] = os.environ.get("MAX_JOBS", "2")
        worker = Worker(name, kind, self.table.path("logs", f"{name}.log"), env, gpu, self.launcher)
        worker.deadline = worker.since + _STARTUP_TIMEOUT_S
        self.workers.append(worker)
        return worker

    def _replace(self, worker: Worker) -> None:
        self.workers.remove(worker)
        if worker.gpu is not None and self.holder.get(worker.gpu) is worker:
            self.holder[worker.gpu] = None
        worker.kill()
        if worker.kind == "compile":
            if self.to_compile:
                self._start("compile")
            return
        if worker.phase not in _STARTING:
            self.schedule.replacing(any(w.gpu == worker.gpu and w.phase == "standby" for w in self.workers))
        self._staff()

    def _staff(self) -> None:
        """Each GPU's measuring workers: ``per_gpu`` ready or being made so, by activating standbys,
        and ``_STANDBYS`` more started ahead (a standby that takes the place of a dead worker is
        itself replaced here, in the background)."""
        if not self.left:
            return
        # No standby for the last candidates, which the working workers can take.
        wanted = self.per_gpu + (_STANDBYS if self.left > self.per_gpu * len(self.gpus) else 0)
        for gpu in self.gpus:
            mine = [w for w in self.workers if w.kind == "measure" and w.gpu == gpu]
            working = sum(w.phase not in ("starting", "standby") for w in mine)
            for standby in [w for w in mine if w.phase == "standby"][:max(0, self.per_gpu - working)]:
                standby.send("activate", None, _STARTUP_TIMEOUT_S)
            for _ in range(wanted - len(mine)):
                self._start("measure", gpu)

    def run(self) -> None:
        if not self.left:
            return
        with contextlib.suppress(OSError):  # without one, each worker starts as a program of its own
            self.launcher = Launcher(self.table.path("logs", "launcher.log"), launcher_preload(self.preload))
        try:
            for _ in range(self.compilers):
                self._start("compile")
            self._staff()
            while self.left:
                self._assign()
                self._tick()
                deadlines = [w.deadline for w in self.workers if w.deadline is not None]
                timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                by_pipe = {w.conn: w for w in self.workers}
                for pipe in wait(list(by_pipe), timeout=None if timeout is None else min(timeout, 5.0)):
                    if by_pipe[pipe] in self.workers:  # type: ignore[index] # not replaced meanwhile
                        self._on_message(by_pipe[pipe])  # type: ignore[index]
                now = time.monotonic()
                for late in [w for w in self.workers if w.deadline is not None and now > w.deadline]:
                    self._on_timeout(late)
                self._tick()
        finally:
            self.schedule.end()
            for worker in self.workers:
                worker.stop() if worker.phase in ("idle", "standby") else worker.kill()
            deadline = time.monotonic() + 1.0  # for them all: each ends as it can
            for worker in self.leaving + self.workers:
                worker.reap(deadline)
            self.workers.clear()
            self.leaving.clear()
            if self.launcher:
                self.launcher.close()

    def _tick(self) -> None:
        """Counts the time since the last event in the state the batch was in."""
        states = []
        for gpu, holder in self.holder.items():
            mine = [w for w in self.workers if w.gpu == gpu]
            if holder is not None:
                states.append("measuring")
            elif all(w.phase in _STARTING for w in mine):
                states.append("replacing" if gpu in self.measured_on else "starting")
            elif self.compiled or any(w.phase in ("load", "loaded") for w in mine):
                states.append("waiting_for_load")
            else:
                states.append("waiting_for_compile")
        ready = [w.gpu for w in self.workers if w.kind == "measure" and w.phase not in _STARTING]
        starting = (any(w.kind == "compile" and w.phase == "starting" for w in self.workers)
                    or any(ready.count(gpu) < self.per_gpu for gpu in self.gpus))  # a standby's start not counted
        self.schedule.tick(states, sum(w.kind == "compile" and w.phase == "compile" for w in self.workers), starting)

    def _assign(self) -> None:
        self._staff()
        for worker in self.workers:
            if worker.phase != "idle":
                continue
            if worker.kind == "compile" and self.to_compile:
                candidate = self.to_compile.popleft()
                worker.send("compile", self._task(candidate), self.compile_timeout_s)
            elif worker.kind == "measure" and self.compiled:
                candidate = self.compiled.popleft()
                worker.send("load", self._task(candidate), self.timeout_s)
        for gpu, holder in self.holder.items():
            if holder is None:
                waiting = [w for w in self.workers if w.gpu == gpu and w.phase == "loaded"]
                if waiting:
                    chosen = min(waiting, key=lambda w: w.since)
                    self.holder[gpu] = chosen
                    chosen.send("measure", None, self.timeout_s)
        if not self.to_compile:  # compiling is over: its cores go back
            for worker in [w for w in self.workers if w.kind == "compile" and w.phase == "idle"]:
                self.workers.remove(worker)
                worker.stop()
                self.leaving.append(worker)
            if not any(w.kind == "compile" for w in self.workers):
                self.schedule.compiling_ended()

    def _task(self, candidate: _problems.Candidate) -> Task:
        evaluation = self.table.path("evaluations", candidate.key + ".json")
        return Task(candidate, self.build_dir, self.simulated, self.options, evaluation)

    # -- events --
    def _on_message(self, worker: Worker) -> None:
        message = worker.receive()
        if message is None:
            self._on_death(worker)
            return
        kind, body = message
        if kind == "ready":
            self.startup_failures = 0
            if worker.gpu is not None:  # a measuring worker activated: its CUDA context made
                self.schedule.activations.append(worker.elapsed())
                self.measured_on.add(worker.gpu)
            worker.idle()
        elif kind == "standby":
            self.schedule.worker_starts.append(worker.elapsed())
            worker.stand_by()
        elif kind == "failed":
            self.startup_failures += 1
            if self.startup_failures >= _STARTUP_FAILURES:
                raise BackendError(f"evaluate_many's measuring worker for GPU {worker.gpu} could not start: {body} "
                                   f"(its log: {worker.log_path})")
            self._replace(worker)
        elif kind == "compiled":
            candidate = worker.candidate
            self.compile_s[candidate.id] = worker.elapsed()
            self.schedule.compile_cpu_s += body["cpu_s"]
            if body["ok"]:
                self.compiled.append(candidate)
            else:
                self._record(candidate, [{"config": i, "Verdict": body["verdict"], "Reason": body["message"]}
                                         for i in range(len(candidate.problem.configs))], [], worker)
            worker.idle()
        elif kind == "loaded":
            self.load_s[worker.candidate.id] = worker.elapsed()
            worker.wait_for_gpu()
        elif kind == "done":
            self._finish(worker, body.rows, body.restored)
            if body.replace:
                self._replace(worker)

    def _finish(self, worker: Worker, rows: list[dict[str, Any]], restored: list[str]) -> None:
        """The worker's candidate is over: recorded, and the worker (and its GPU) free again."""
        candidate = worker.candidate
        measured = worker.elapsed() if worker.phase == "measure" else None
        if worker.gpu is not None and self.holder.get(worker.gpu) is worker:
            self.holder[worker.gpu] = None
        self._record(candidate, rows, restored, worker, measured)
        worker.idle()

    def _on_death(self, worker: Worker) -> None:
        if worker.phase in _STARTING:
            self.startup_failures += 1
            if self.startup_failures >= _STARTUP_FAILURES:
                raise BackendError(f"evaluate_many's {worker.kind} workers die as they start: {worker.death()} "
                                   f"(its log: {worker.log_path})")
        elif worker.task is not None:
            what = {"compile": "compiling", "load": "loading", "loaded": "loading", "measure": "measuring"}
            self._fail(worker, CRASHED, f"{worker.death()} (while {what.get(worker.phase, worker.phase)})")
        self._replace(worker)

    def _on_timeout(self, worker: Worker) -> None:
        if worker.phase in ("starting", "activate"):
            raise BackendError(f"evaluate_many's {worker.kind} worker did not start within {_STARTUP_TIMEOUT_S:.0f} s "
                               f"(its log: {worker.log_path})")
        limit = self.compile_timeout_s if worker.phase == "compile" else self.timeout_s
        what = {"compile": "compile", "load": "load", "measure": "be measured"}.get(worker.phase, worker.phase)
        self._fail(worker, TIMED_OUT, f"took longer than {limit:g} s to {what}; its worker was killed")
        self._replace(worker)

    def _fail(self, worker: Worker, verdict: str, message: str) -> None:
        candidate = worker.candidate
        if worker.phase == "compile":
            self.compile_s[candidate.id] = worker.elapsed()
        rows = [{"config": i, "Verdict": verdict, "Reason": message} for i in range(len(candidate.problem.configs))]
        if worker.phase == "compile":
            self._record(candidate, rows, [], worker)
        else:
            self._finish(worker, rows, [])

    def _record(self, candidate: _problems.Candidate, rows: list[dict[str, Any]], restored: list[str],
                worker: Worker, measured: float | None = None) -> None:
        problem = candidate.problem
        full = [{**{k: v for k, v in r.items() if k != "config"},
                 "Problem": problem.name, "Candidate": candidate.id, "Config": problem.config_label(r["config"]),
                 "CompileS": self.compile_s.get(candidate.id), "LoadS": self.load_s.get(candidate.id),
                 "MeasureS": measured, "Restored": ", ".join(restored), "Format": problem.format,
                 "Worker": worker.name} for r in rows]
        self.table.add(full)
        self.left -= 1
        if self.verbose:
            done = len(self.table.done)
            print(f"[kscope] {done}/{self.total} {candidate.id}: {_said(full)}", file=sys.stderr, flush=True)


def _said(rows: list[dict[str, Any]]) -> str:
    """A candidate's verdicts in a few words: '1.83x faster [1.80, 1.86]', or its message."""
    first = rows[0]
    if len(rows) == 1 and first.get("Speedup") is not None and first["Verdict"] not in ("incorrect", CRASHED, ERROR):
        text = f"{first['Verdict']} {first['Speedup']:.3g}x"
        if first.get("SpeedupCI_Lower") is not None:
            text += f" [{first['SpeedupCI_Lower']:.3g}, {first['SpeedupCI_Upper']:.3g}]"
    else:
        counts: dict[str, int] = {}
        for r in rows:
            counts[r["Verdict"]] = counts.get(r["Verdict"], 0) + 1
        text = ", ".join(f"{v}" if n == 1 else f"{v} x{n}" for v, n in counts.items())
    if first["Verdict"] in (CRASHED, TIMED_OUT, COMPILE_FAILED, ERROR) and first.get("Reason"):
        text += f": {first['Reason']}"[:300]
    return text
