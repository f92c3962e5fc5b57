"""kscope.evaluate_many: kscope.evaluate over a directory of candidates, at the scale of kernel
generation. Compile workers (CPU) build each candidate ahead; measuring workers, one or more per GPU,
load it, take turns on their GPU and evaluate it; a candidate that crashes its worker, hangs or breaks
its GPU ends as crashed or timed_out and the batch goes on with a fresh worker. The table is streamed
to the output directory as candidates finish (kscope._batch_table), so a killed batch resumes where
it stopped."""

from __future__ import annotations

import math
import numbers
import os
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from multiprocessing.connection import wait
from typing import Any, Literal

import pandas as pd

from . import _core, _problems, testing
from ._batch_table import BatchTable
from ._evaluate import _tolerance
from ._options import Options, VerbosityLevel
from ._workers import Task, Worker
from .errors import BackendError, ConfigError

# Verdicts of a candidate that did not come to kscope.evaluate's.
CRASHED, TIMED_OUT, COMPILE_FAILED, ERROR = "crashed", "timed_out", "compile_failed", "error"
_STARTUP_TIMEOUT_S = 300.0  # importing torch and making a CUDA context, on a slow first run
_STARTUP_FAILURES = 3  # workers in a row that die as they start stop the batch


def evaluate_many(
    problems: str | os.PathLike[str] | Iterable[tuple[str | os.PathLike[str], str | os.PathLike[str]]],
    output_dir: str | os.PathLike[str] = "kscope-evaluate",
    *,
    runs: int = 20,
    warmup_runs: int = 1,
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
    runs, warmup_runs, rtol, atol, threshold_pct, confidence, seed, cache_control: as for
        kscope.evaluate, for every candidate.
    timeout_s: the longest a candidate may take to load in its worker, and again to be measured
        (waiting for the GPU not counted): then it is timed_out and its worker replaced.
    compile_timeout_s: the longest a candidate may take to compile (import, torch extensions, nvcc).
    gpus: the GPUs to measure on (indices among the visible ones); None: every visible GPU.
    workers_per_gpu: measuring workers per GPU. They take turns on it: one measures while the others
        load their next candidate.
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
    judged = _core.EvaluateOptions()
    judged.rtol, judged.atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    judged.threshold_pct, judged.confidence = float(threshold_pct), float(confidence)
    judged.validate()
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**64:
        raise ConfigError(f"seed must be an integer from 0 to 2**64 - 1, not {seed!r}")
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
    evaluate_options = {"runs": options.runs, "warmup_runs": options.warmup_runs, "rtol": judged.rtol,
                        "atol": judged.atol, "threshold_pct": judged.threshold_pct,
                        "confidence": judged.confidence, "seed": int(seed), "cache_control": cache_control}
    directory = os.path.abspath(os.fspath(output_dir))
    table = BatchTable(directory, {**evaluate_options, "gpumode_configs": gpumode_configs}, resume, overwrite)
    try:
        batch = _Batch(candidates, table, evaluate_options, devices, per_gpu, compilers,
                       os.path.abspath(os.fspath(build_dir)) if build_dir is not None else table.path("build"),
                       float(timeout_s), float(compile_timeout_s), simulated,
                       options.verbosity >= VerbosityLevel.INFO)
        batch.run()
        return table.finish()
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
        self.to_compile = deque(c for c in candidates if c.id not in table.done)
        self.left = len(self.to_compile)
        self.compiled: deque[_problems.Candidate] = deque()
        self.compile_s: dict[str, float] = {}
        self.load_s: dict[str, float] = {}
        self.holder: dict[str, Worker | None] = {g: None for g in gpus}
        self.workers: list[Worker] = []
        self.started = 0
        self.startup_failures = 0
        self.compilers = min(compilers, self.left)
        self.per_gpu = per_gpu

    # -- workers --
    def _start(self, kind: str, gpu: str | None = None) -> Worker:
        self.started += 1
        name = f"compile-{self.started}" if kind == "compile" else f"gpu{gpu}-{self.started}"
        env = {"KSCOPE_WORKER_SIMULATED": "1"} if self.simulated else {}
        if gpu is not None and not self.simulated:
            env["CUDA_VISIBLE_DEVICES"] = gpu
        if kind == "compile":  # one compiler process each (torch extensions' ninja takes every core)
            env["MAX_JOBS"] = os.environ.get("MAX_JOBS", "1")
        worker = Worker(name, kind, self.table.path("logs", f"{name}.log"), env, gpu)
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
        elif self.left:
            self._start("measure", worker.gpu)

    def run(self) -> None:
        if not self.left:
            return
        try:
            for _ in range(self.compilers):
                self._start("compile")
            for gpu in self.gpus:
                for _ in range(self.per_gpu):
                    self._start("measure", gpu)
            while self.left:
                self._assign()
                deadlines = [w.deadline for w in self.workers if w.deadline is not None]
                timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                by_pipe = {w.conn: w for w in self.workers}
                for pipe in wait(list(by_pipe), timeout=None if timeout is None else min(timeout, 5.0)):
                    if by_pipe[pipe] in self.workers:  # type: ignore[index] # not replaced meanwhile
                        self._on_message(by_pipe[pipe])  # type: ignore[index]
                now = time.monotonic()
                for late in [w for w in self.workers if w.deadline is not None and now > w.deadline]:
                    self._on_timeout(late)
        finally:
            for worker in self.workers:
                worker.stop() if worker.phase == "idle" else worker.kill()
            self.workers.clear()

    def _assign(self) -> None:
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
            worker.idle()
        elif kind == "failed":
            self.startup_failures += 1
            if self.startup_failures >= _STARTUP_FAILURES:
                raise BackendError(f"evaluate_many's measuring worker for GPU {worker.gpu} could not start: {body} "
                                   f"(its log: {worker.log_path})")
            self._replace(worker)
        elif kind == "compiled":
            candidate = worker.candidate
            self.compile_s[candidate.id] = worker.elapsed()
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
        if worker.phase == "starting":
            self.startup_failures += 1
            if self.startup_failures >= _STARTUP_FAILURES:
                raise BackendError(f"evaluate_many's {worker.kind} workers die as they start: {worker.death()} "
                                   f"(its log: {worker.log_path})")
        elif worker.task is not None:
            what = {"compile": "compiling", "load": "loading", "loaded": "loading", "measure": "measuring"}
            self._fail(worker, CRASHED, f"{worker.death()} (while {what.get(worker.phase, worker.phase)})")
        self._replace(worker)

    def _on_timeout(self, worker: Worker) -> None:
        if worker.phase == "starting":
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
