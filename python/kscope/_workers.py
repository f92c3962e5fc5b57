"""The worker processes of kscope.evaluate_many: compile workers (CPU) build and warm a candidate
ahead of measurement; measuring workers (one or more per GPU) load it, wait for their GPU, evaluate
it and put the process back as they found it. A worker that crashes, hangs or leaves its GPU unusable
is killed and replaced by the parent; the candidate ends as crashed or timed_out with the message.

Parent side: :class:`Worker`, a handle on one process (started as ``python -m kscope._worker_main``, so
that the caller's script is never run again in it, its output and faults going to a log file). Child
side: :func:`main`, which answers the parent's messages over a socket:

    any worker, once started:                                 <- ("ready", None) or ("failed", message)
    parent -> compile worker:   ("compile", Task)             <- ("compiled", {ok, verdict, message})
    measuring worker, imported:                               <- ("standby", None) or ("failed", message)
    parent -> measuring worker: ("activate", None)            <- ("ready", None) or ("failed", message)
                                ("load", Task)                <- ("loaded", None) or ("done", Outcome)
                                ("measure", None)             <- ("done", Outcome)

A measuring worker waits as a standby, torch imported and its GPU seen but no CUDA context made,
until the parent activates it: the parent keeps one started ahead per GPU to take the place of a
worker that dies, so that the GPU does not wait for a process to start and import torch.

Workers are forked by a :class:`Launcher` (``python -m kscope._worker_main launcher FD LOG``), a process
that has imported torch and what candidates use, and never CUDA: a dozen workers each importing torch
at once took about 7 s on a 16-core GPU machine, a fork takes milliseconds. Nor does it run torch's CPU
thread pool: a child forked after the pool ran hangs in its first parallel operation on the CPU (torch
1.13 and 2.11), and candidates make their inputs there. Its messages, over a
socket that carries each worker's own socket with the request:

    parent -> launcher:  ("start", (kind, log, env)) + the worker's socket    <- ("started", pid)
                         (the launcher tells each worker's end as it reaps it) <- ("exited", (pid, code))
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import importlib
import math
import os
import pickle
import resource
import select
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from . import _problems

_PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent dies
_PR_SET_NAME = 15  # prctl(2): the name ps and /proc/PID/comm show
_COMPILE_NICENESS = 10  # nice(1)'s own default: the compile workers run when the measuring ones need no CPU


@dataclass
class Task:
    """One candidate for a worker: where its builds go, how to evaluate it, where to save the
    evaluation."""

    candidate: _problems.Candidate
    build_dir: str
    simulated: bool
    options: dict[str, Any] = field(default_factory=dict)  # kscope.evaluate's
    evaluation: str = ""  # the EvaluationResults' file


@dataclass
class Outcome:
    """What measuring one candidate gave: one row per config (the evaluation's columns), what the
    worker put back after it, and why the worker must be replaced (None: it may go on)."""

    rows: list[dict[str, Any]]
    restored: list[str]
    replace: str | None = None


# ---- Parent side --------------------------------------------------------------------------------------

def _program(kind: str, fd: int, log_path: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``python -m kscope._worker_main KIND FD LOG`` with `env` added, its output into the log."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, **env, "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH", "")) if p)}
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "kscope._worker_main", kind, str(fd), log_path],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
            pass_fds=[fd], start_new_session=True)  # Ctrl-C reaches the parent alone


class Launcher:
    """The process that forks the workers (see the module's docstring). ``preload``: the modules it
    imports first, as a comma-separated list."""

    def __init__(self, log_path: str, preload: str) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = _program("launcher", theirs.fileno(), log_path, {"KSCOPE_WORKER_PRELOAD": preload})
        theirs.close()
        self._socket = ours
        self._ended: dict[int, int] = {}  # pid -> its exit code (negative: the signal that ended it)

    def start(self, kind: str, log_path: str, env: dict[str, str], theirs: socket.socket,
              timeout_s: float = 300.0) -> _Forked:
        """A worker forked with `env` added, its output into the log, `theirs` its end of its pipe.
        Raises OSError where the launcher is gone or has not answered in `timeout_s` (its imports
        included, the first time)."""
        socket.send_fds(self._socket, [pickle.dumps(("start", (kind, log_path, env)))], [theirs.fileno()])
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._receive(max(0.0, deadline - time.monotonic()))
            if message is None and (self.process.poll() is not None or time.monotonic() >= deadline):
                raise OSError(f"kscope's worker launcher did not start a worker (its exit status: {self.process.poll()})")
            if message is not None and message[0] == "started":
                return _Forked(message[1], self)

    def ended(self, pid: int, timeout: float | None) -> int | None:
        """The exit code of the worker `pid` once the launcher has reaped it, waiting up to `timeout`
        seconds (None: as long as it takes); None where it has not ended by then."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while pid not in self._ended:
            left = None if deadline is None else deadline - time.monotonic()
            if (left is not None and left <= 0) or self._receive(left) is None and self.process.poll() is not None:
                break
        return self._ended.get(pid)

    def close(self) -> None:
        """Ends the launcher (its workers end with it)."""
        self._socket.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()

    def _receive(self, timeout: float | None) -> tuple[str, Any] | None:
        """The next message (an end noted on the way), or None after `timeout` or when it is gone."""
        try:
            if not select.select([self._socket], [], [], timeout)[0]:
                return None
            data = self._socket.recv(1 << 16)
        except (OSError, ValueError):  # ValueError: closed
            return None
        if not data:
            return None
        message = pickle.loads(data)
        if message[0] == "exited":
            pid, code = message[1]
            self._ended[pid] = code
        return message


class _Forked:
    """A worker forked by a launcher, with what the batch uses of subprocess.Popen."""

    def __init__(self, pid: int, launcher: Launcher) -> None:
        self.pid, self._launcher = pid, launcher
        self.returncode: int | None = None

    def kill(self) -> None:
        if self.returncode is None and self._launcher.ended(self.pid, 0) is None:  # never a reaped pid's reuser
            os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self._launcher.ended(self.pid, timeout)
            if code is None and self._launcher.process.poll() is None:
                raise subprocess.TimeoutExpired(f"kscope worker {self.pid}", timeout or 0)
            self.returncode = -signal.SIGKILL if code is None else code  # None: killed with its launcher
        return self.returncode


class Worker:
    """One worker process: its pipe, its log, what it is doing and until when it may. Forked by
    `launcher` where one is given, else started as a program of its own."""

    def __init__(self, name: str, kind: str, log_path: str, env: dict[str, str], gpu: str | None = None,
                 launcher: Launcher | None = None) -> None:
        self.name, self.kind, self.gpu, self.log_path = name, kind, gpu, log_path
        self.task: Task | None = None
        self.phase = "starting"  # starting, standby, activate, idle, compile, load, loaded, measure
        self.since = time.monotonic()
        self.deadline: float | None = None
        self._log_offset = self._log_size()
        ours, theirs = socket.socketpair()
        forked = None
        if launcher:
            with contextlib.suppress(OSError):  # a launcher gone: a program of its own
                forked = launcher.start(kind, log_path, env, theirs)
        self.process: subprocess.Popen[bytes] | _Forked = forked or _program(kind, theirs.fileno(), log_path, env)
        theirs.close()
        self.conn = Connection(ours.detach())

    @property
    def candidate(self) -> _problems.Candidate:
        """The candidate of its current task."""
        assert self.task is not None, f"{self.name} has no task"
        return self.task.candidate

    def send(self, kind: str, task: Task | None, timeout_s: float | None) -> None:
        if task is not None:
            self.task = task
            self._log_offset = self._log_size()
        self.phase, self.since = kind, time.monotonic()
        self.deadline = None if timeout_s is None else self.since + timeout_s
        self.conn.send((kind, task))

    def stand_by(self) -> None:
        """Started, with no CUDA context yet: it waits, with no deadline, until activated."""
        self.phase, self.deadline = "standby", None

    def wait_for_gpu(self) -> None:
        """Loaded: its time stops counting until the GPU is its."""
        self.phase, self.deadline = "loaded", None

    def idle(self) -> None:
        self.task, self.phase, self.deadline = None, "idle", None

    def receive(self) -> tuple[str, Any] | None:
        """The next message, or None when the process is gone."""
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            return None

    def elapsed(self) -> float:
        return time.monotonic() - self.since

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()
        self.conn.close()

    def stop(self) -> None:
        """Asks it to end, without waiting (:meth:`reap` waits)."""
        with contextlib.suppress(OSError):
            self.conn.send(("exit", None))

    def reap(self, deadline: float) -> None:
        """Waits for it to end until ``deadline`` (time.monotonic()), then ends it."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        self.kill()

    def death(self) -> str:
        """How the process ended, and the last words its log holds since the current task began."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2.0)  # its pipe closes a moment before it has ended
        self.kill()
        code = self.process.returncode
        if code is not None and code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = f"exited with status {code}"
        said = last_words(log_since(self.log_path, self._log_offset))
        return f"the worker {how}" + (f": {said}" if said else "")

    def _log_size(self) -> int:
        try:
            return os.path.getsize(self.log_path)
        except OSError:
            return 0


def log_since(path: str, offset: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read()[-65536:].decode("utf-8", "replace")
    except OSError:
        return ""


def last_words(text: str, limit: int = 600) -> str:
    """The lines of a log that say what went wrong: a fatal error's, an exception's and error lines,
    else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    keys = ("Fatal Python error", "Error", "error:", "what():", "Exception", "Aborted", "Segmentation")
    said = [line for line in lines if any(k in line for k in keys) and not line.startswith("File ")]
    picked = list(dict.fromkeys(said))[-3:] if said else lines[-1:]
    text = "; ".join(picked)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---- Child side ---------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    kind, fd, log_path = argv[0], int(argv[1]), argv[2]
    faulthandler.enable()  # a segfault or an abort says so in the log, with the Python stack
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends its workers
    _preload()
    if kind == "launcher":
        if _forks_poisoned():
            return 1  # the batch starts each worker as a program instead
        _launcher_loop(socket.socket(fileno=fd))
        return 0
    return _work(kind, fd, log_path)


def _preload() -> None:
    """Imports, once, where the candidates would import them, what the parent names
    (KSCOPE_WORKER_PRELOAD: torch, and its extension builder and Triton where candidates use them):
    not in each candidate's load time, which the GPU may wait for."""
    for module in filter(None, os.environ.get("KSCOPE_WORKER_PRELOAD", "torch").split(",")):
        with contextlib.suppress(Exception):  # a candidate that needs it says why as it loads
            importlib.import_module(module)


def _forks_poisoned() -> bool:
    """Whether a child forked now could not use CUDA: torch refuses it in a child of a process that
    asked the CUDA driver anything (torch.utils.cpp_extension's import counts the devices)."""
    torch = sys.modules.get("torch")
    in_bad_fork = getattr(getattr(torch, "cuda", None), "_is_in_bad_fork", None)
    if in_bad_fork is None:
        return False
    pid = os.fork()
    if pid == 0:
        poisoned = True
        try:
            poisoned = bool(in_bad_fork())
        finally:
            os._exit(3 if poisoned else 0)  # never back into the launcher's code
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) != 0


def _work(kind: str, fd: int, log_path: str) -> int:
    conn = Connection(fd)
    if os.environ.get("KSCOPE_WORKER_SIMULATED") == "1":  # tests: a start as slow as a GPU machine's
        time.sleep(float(os.environ.get("KSCOPE_WORKER_SIMULATED_START_S", "0")))
    try:
        if kind == "compile":
            # Builds yield the CPU to the measuring workers, whose host late to launch a kernel would
            # stretch a call's time (its compilers inherit this).
            os.nice(_COMPILE_NICENESS)
            _compile_loop(conn, log_path)
        else:
            _measure_loop(conn)
    except (EOFError, BrokenPipeError, ConnectionResetError):
        pass  # the parent is gone
    return 0


def _launcher_loop(parent: socket.socket) -> None:
    """Forks a worker per request until the parent closes its socket, and tells it each worker's end."""
    while True:
        readable = select.select([parent], [], [], 0.05)[0]
        _report_ended(parent)
        if not readable:
            continue
        data, fds, _, _ = socket.recv_fds(parent, 1 << 16, 1)
        if not data:
            return  # the parent is gone (its workers, our children, end with us)
        _, (kind, log_path, env) = pickle.loads(data)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                parent.close()
                code = _forked_worker(kind, fds[0], log_path, env)
            finally:
                os._exit(code)
        os.close(fds[0])
        parent.send(pickle.dumps(("started", pid)))


def _forked_worker(kind: str, fd: int, log_path: str, env: dict[str, str]) -> int:
    """In a worker just forked by the launcher: a session of its own, its output into its log, its
    environment, what its candidates use that the launcher left out (torch's extension builder), then
    the worker's loop."""
    os.setsid()  # Ctrl-C reaches the parent alone
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for std in (1, 2):
        os.dup2(log, std)
    os.close(log)
    os.environ.update(env)
    _die_with_parent()  # the launcher: it ends with the parent
    _prctl(_PR_SET_NAME, f"kscope-{kind}".encode())  # in ps, as kscope-compile or kscope-measure
    _preload()
    return _work(kind, fd, log_path)


def _report_ended(parent: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        with contextlib.suppress(OSError):
            parent.send(pickle.dumps(("exited", (pid, os.waitstatus_to_exitcode(status)))))


def _prctl(option: int, value: Any) -> None:
    """prctl(2) where libc has it (Linux); elsewhere nothing."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value)


def _die_with_parent() -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:
        os._exit(0)


@contextlib.contextmanager
def _candidate_scope(task: Task) -> Any:
    """The candidate's problem on sys.path, its builds in its own directory, and in simulated mode a
    simulated backend of its own (which the problem's code reaches with kscope.testing.active())."""
    os.environ["TORCH_EXTENSIONS_DIR"] = os.path.join(task.build_dir, task.candidate.key)
    os.makedirs(os.environ["TORCH_EXTENSIONS_DIR"], exist_ok=True)
    from . import testing

    simulated = testing.simulated_backend() if task.simulated else contextlib.nullcontext()
    with _problems.problem_modules(task.candidate.problem, task.candidate.path), simulated:
        yield


def _described(e: BaseException) -> str:
    text = " ".join(str(e).split())
    if isinstance(e, SystemExit):
        return f"the candidate called sys.exit({e.code!r})"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _build_error(e: BaseException, log: str) -> str:
    """What a failed load says: the exception's first line, and the compiler's first error lines (from
    the exception, where torch puts a failed build's output, or else from the log)."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    head = f"{type(e).__name__}: {lines[0][:200]}" if lines else type(e).__name__  # a build's: its command line
    errors = [line[:300] for line in lines[1:] if "error" in line.lower()][:2]
    said = "; ".join(errors) or (last_words(log) if not lines[1:] else "")
    text = head + (f" ({said})" if said and said not in head else "")
    return text if len(text) <= 600 else text[:597] + "..."


def _compile_loop(conn: Connection, log_path: str) -> None:
    from ._worker_state import WorkerState

    state = WorkerState(None)  # the timers and switches a candidate's import may patch
    conn.send(("ready", None))
    while True:
        kind, task = conn.recv()
        if kind == "exit":
            return
        cpu_s = _cpu_s()
        compiled = _compile(task, log_path)
        compiled["cpu_s"] = _cpu_s() - cpu_s
        state.restore()
        conn.send(("compiled", compiled))


def _cpu_s() -> float:
    """The CPU seconds of this process and of the processes it has waited for (a build's ninja and
    compilers, Triton's ptxas): what a compile costs the machine, whatever its wall time."""
    mine, theirs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime


def _compile(task: Task, log_path: str) -> dict[str, Any]:
    """Loads the candidate as the measuring worker will (building its torch extensions, running its
    nvcc, into its build directory) and compiles its Triton kernels where it can, without the GPU."""
    candidate = task.candidate
    offset = os.path.getsize(log_path) if os.path.exists(log_path) else 0
    with _candidate_scope(task):
        try:
            reference = _problems.load_reference(candidate.problem)
        except BaseException as e:  # noqa: BLE001 - the problem's fault, reported on every candidate of it
            return {"ok": False, "verdict": "error", "message": f"the reference failed to load: {_described(e)}"}
        try:
            module = _problems.load_module(candidate.path, "kscope_problem_candidate")
        except SystemExit as e:
            return {"ok": False, "verdict": "crashed", "message": _described(e) + " while loading"}
        except BaseException as e:  # noqa: BLE001 - whatever a candidate raises as it loads
            return {"ok": False, "verdict": "compile_failed", "message": _build_error(e, log_since(log_path, offset))}
        with contextlib.suppress(Exception):
            _problems.warm_triton(candidate, module, reference)
    return {"ok": True, "verdict": None, "message": ""}


class _Guard:
    """Wraps the candidate's function: notes the first exception that means the candidate crashed
    (sys.exit, out of memory) and the last CUDA error it raised, so that the outcome says crashed
    with that message rather than incorrect."""

    def __init__(self) -> None:
        self.fatal: str | None = None
        self.cuda_error: str | None = None

    def __call__(self, fn: Any) -> Any:
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except BaseException as e:
                self.note(e)
                if isinstance(e, (SystemExit, KeyboardInterrupt)):
                    raise RuntimeError(_described(e)) from None  # the engine goes on as for any raise
                raise

        return guarded

    def note(self, e: BaseException) -> None:
        text = str(e)
        if self.fatal is None and isinstance(e, (SystemExit, KeyboardInterrupt)):
            self.fatal = _described(e)
        elif self.fatal is None and ("out of memory" in text or type(e).__name__ == "OutOfMemoryError"):
            self.fatal = "out of GPU memory: " + _described(e)
        elif "CUDA error" in text or "CUDA_ERROR" in text:
            self.cuda_error = _described(e)


def _measure_loop(conn: Connection) -> None:
    from ._worker_state import WorkerState

    try:
        device = _device()
    except Exception as e:  # noqa: BLE001 - said to the parent, which stops the batch with it
        conn.send(("failed", _described(e)))
        return
    # A standby until the parent needs it: a CUDA context is made only then, so that the GPU holds
    # one per worker that measures, and a standby that may never be used neither takes GPU memory
    # nor makes a context while another worker measures.
    conn.send(("standby", None))
    if conn.recv()[0] == "exit":
        return
    for wait_s in (1, 2, 4, 8, None):
        try:
            state = WorkerState(device)
            break
        except Exception as e:  # noqa: BLE001 - said to the parent, which retries, then stops the batch with it
            if wait_s is None or "out of memory" not in str(e):
                conn.send(("failed", _described(e)))
                return
            time.sleep(wait_s)  # a candidate of another worker holds the GPU's memory for now
    conn.send(("ready", None))
    while True:
        kind, task = conn.recv()
        if kind == "exit":
            return
        guard = _Guard()
        rows = _measure(conn, task, guard, state)
        outcome = _finished(task, state, rows, guard)  # the candidate's modules and objects are gone by now
        conn.send(("done", outcome))
        if outcome.replace:
            return


def _device() -> int | None:
    """The GPU this worker measures on (the parent makes it the only one visible): 0, or None where
    nothing runs on a GPU (the simulated backend, or no torch)."""
    if os.environ.get("KSCOPE_WORKER_SIMULATED") == "1":
        return None
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device in the measuring worker (CUDA_VISIBLE_DEVICES="
                           f"{os.environ.get('CUDA_VISIBLE_DEVICES', '')!r})")
    return 0


def _rows(task: Task, verdict: str, message: str) -> list[dict[str, Any]]:
    return [{"config": i, "Verdict": verdict, "Reason": message}
            for i in range(len(task.candidate.problem.configs))]


def _measure(conn: Connection, task: Task, guard: _Guard, state: Any) -> list[dict[str, Any]]:
    """Loads the candidate, tells the parent, waits for the GPU, evaluates: its rows."""
    with _candidate_scope(task):
        try:
            reference = _problems.load_reference(task.candidate.problem)
        except BaseException as e:  # noqa: BLE001
            return _rows(task, "error", f"the reference failed to load: {_described(e)}")
        try:
            module = guard(_problems.load_module)(task.candidate.path, "kscope_problem_candidate")
        except BaseException as e:  # noqa: BLE001 - what the compile worker saw too, or worse
            return _rows(task, "crashed" if guard.fatal else "compile_failed", guard.fatal or _build_error(e, ""))
        conn.send(("loaded", None))
        kind, _ = conn.recv()
        if kind == "exit":
            raise EOFError
        state.begin()  # the GPU is this worker's from now on until it answers
        return _evaluated(task, module, reference, guard, "cpu" if state.device is None else "cuda")


def _evaluated(task: Task, module: Any, reference: Any, guard: _Guard, device: str) -> list[dict[str, Any]]:
    from . import _evaluate
    from .errors import SweepError

    try:
        contest = _problems.contest(task.candidate, module, reference, device, guard)
    except _problems.BuildError as e:
        return _rows(task, "incorrect", f"the candidate raised as it was built: {e}")
    except BaseException as e:  # noqa: BLE001 - the reference's model or a helper of the problem
        guard.note(e)
        return _rows(task, "error", f"building the reference: {_described(e)}")
    try:
        results = _evaluate.evaluate(contest.candidate, contest.reference, contest.inputs, contest.configs,
                                     verbosity="silent", **task.options)
    except SweepError as e:  # the reference or the inputs raised: the configs before it were evaluated
        guard.note(e)
        rows = _table_rows(e.partial_results) if e.partial_results is not None else []
        done = {r["config"] for r in rows}
        return rows + [r for r in _rows(task, "error", _described(e)) if r["config"] not in done]
    except BaseException as e:  # noqa: BLE001 - a problem kscope.evaluate refuses (inputs that never change)
        guard.note(e)
        return _rows(task, "error", _described(e))
    if task.evaluation:
        with contextlib.suppress(OSError):
            results.save(task.evaluation)
    return _table_rows(results)


def _table_rows(results: Any) -> list[dict[str, Any]]:
    from ._batch_table import EVALUATED

    rows = []
    for record in results.to_dataframe().to_dict("records"):
        row: dict[str, Any] = {"config": int(record["config"])}
        for column in EVALUATED:
            value = record[column]
            value = value.item() if hasattr(value, "item") else value
            row[column] = None if isinstance(value, float) and math.isnan(value) else value
        rows.append(row)
    return rows


def _finished(task: Task, state: Any, rows: list[dict[str, Any]], guard: _Guard) -> Outcome:
    """The rows as the candidate's fate decides: sys.exit, running out of memory or a context it made
    unusable make it crashed; a lost context or memory it kept needs a new worker."""
    restored, replace, context_lost = state.restore()
    if replace:
        restored.append(f"worker replaced: {replace}")
    fatal = guard.fatal or ((guard.cuda_error or replace) if context_lost else None)
    if fatal is not None:
        rows = _rows(task, "crashed", fatal)
    return Outcome(rows, restored, replace)
