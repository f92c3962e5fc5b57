"""kscope.evaluate: is a candidate kernel really faster than the reference it replaces? The engine
(kscope/evaluate.hpp) runs the pairs of calls, times them and judges; this module hands it the
user's functions and turns their inputs and outputs (PyTorch tensors, NumPy arrays, CuPy arrays,
Python numbers, or tuples, lists and dicts of them) into the views it checks."""

from __future__ import annotations

import inspect
import math
import numbers
import os
import pickle
import stat
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Unpack

import numpy as np

from . import _core, _notebook, testing
from ._configs import engine_rows
from ._evaluation import EvaluationResults
from ._options import EvaluateOptions, Options, VerbosityLevel, entry_given, takes_options
from ._roofline import Work, _accepts, _cut, _shown
from ._worker_state import timer_places
from .errors import ConfigError, ProfilerWarning, SweepError, SweepInterrupted

# The dtypes the engine compares, by the names NumPy and PyTorch give them.
_DTYPES = frozenset({"float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int64", "int32",
                     "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool"})


@takes_options("evaluate")
def evaluate(
    candidate: Callable[..., Any],
    reference: Callable[..., Any],
    inputs: Callable[[Any, int], Any],
    configs: Iterable[Any] | None = None,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    threshold_pct: float = 2.0,
    confidence: float = 0.95,
    seed: int = 0,
    checked_runs: int = 8,
    failing_inputs: str | os.PathLike[str] | None = None,
    **options: Unpack[EvaluateOptions],
) -> EvaluationResults:
    """Checks that ``candidate`` computes what ``reference`` computes, and whether it is faster.

    For every config, each of ``warmup_runs + runs`` runs makes fresh inputs with
    ``inputs(config, seed)`` (a different seed every run) and calls the candidate on them, then the
    reference: on a tuple or list of inputs as ``f(*inputs)``, on a dict as ``f(**inputs)``, else
    ``f(inputs)``. In the runs whose tensors are read (``checked_runs``) the reference gets its own
    inputs, made again from the seed once the candidate has returned; in the others, the candidate's.
    Each call is timed over all the GPU work it caused (kernels, copies and fills, on any stream,
    from any thread, including work still running after it returned: kscope waits for the GPU to
    drain before the call's time closes), with the L2 flushed before it (``cache_control``). Outside
    the timed calls, the candidate's outputs are compared with the reference's and the run is
    checked for the ways a timing harness is known to be fooled (docs/evaluate.md lists each
    finding with the attack it stops).

    candidate, reference: functions of the inputs returning their outputs: torch tensors, NumPy or
        CuPy arrays, Python numbers, or a tuple, list or dict of them (nested too). Outputs are
        paired by their place: a dict's by key, whatever the order, a tuple's or list's by position.
    inputs: ``inputs(config, seed) -> inputs``; the same seed must give the same values (seed a
        random generator with it: ``torch.Generator(device).manual_seed(seed)``), and runs must get
        different values.
    configs: the configs ``inputs`` receives, e.g. ``[{"n": 1024}, {"n": 4096}]`` (dict keys become
        the table's columns; any other value is one column, "config"). None: one config, None.
    runs: recorded pairs of runs per config (at least 6 for a 95% interval of the speedup).
    rtol, atol: an output element passes when ``|candidate - reference| <= atol + rtol * |reference|``
        (NaN matching NaN; an infinity, or the dtype's largest finite magnitude such as a mask's
        ``finfo.min`` fill, only the same value); outputs must have the reference's shapes, dtypes
        and names. rtol defaults per dtype: float64 1e-9, float32 1e-4, float16 5e-3, bfloat16
        4e-2, float8_e4m3fn 0.125, float8_e5m2 0.25, integers and bool 0 (exact); atol defaults to
        rtol times the reference output's typical magnitude: the median magnitude of its finite,
        nonzero elements other than those extremes, which masks, padding and a few large elements
        do not move.
    threshold_pct, confidence: the verdict is 'faster' when the whole ``confidence`` interval of the
        speedup lies above ``1 + threshold_pct/100``, 'slower' below its inverse, 'same' otherwise.
    seed: mixed with the config and the run into each run's seed (each below 2**31).
    checked_runs: how many of each config's recorded runs have their outputs compared and their
        outputs and inputs checksummed, besides every warm-up run: a random subset that the
        candidate cannot predict (drawn from the operating system's entropy). 0: every run. The
        other runs are still timed and checked for everything that needs no reading of their
        tensors; docs/evaluate.md, "Checked runs", gives the chance that each kind of trick is caught.
    work: ``work(config) -> kscope.Work``: declared bytes and FLOPs; a side faster than the device's
        DRAM and compute roofs allow is then 'suspect' (implausible_speed). bound_thresholds: as for
        kscope.analyze.kernel, for the measurements' Bound column.
    cache_control, clock_control, backend, thermal_mode, thermal_wait, thermal_cont,
        thermal_timeout, verbosity: as for kscope.analyze.kernel; the backend must see every
        stream's work ('cupti', the default). The options of kscope.analyze.kernel that evaluate does
        not take would hide or rewrite work (docs/evaluate.md names them).
    output_prefix, overwrite, fsync_interval_s: write the evaluation's files ({prefix}summary.csv,
        samples.csv and results.json, which kscope.load_evaluation reads back).
    failing_inputs: a directory (made if missing; checked before the first run); for each
        'incorrect' config, the inputs of its first failing run are made again from its seed, both
        functions run on them, and ``{dir}/failing-{config index}-seed{seed}.pt`` (torch.save;
        ``.pkl``, pickle, without torch) holds config, seed, inputs, reference_outputs,
        candidate_outputs and mismatch (EvaluationResults.failing_inputs lists the files). A file
        that cannot be saved is a ProfilerWarning; the results are returned all the same.

    Returns EvaluationResults: ``to_dataframe()`` has one row per config with its Verdict
    ('faster', 'slower', 'same', 'incorrect' or 'suspect'), Speedup with its interval, both
    medians, the errors, the Findings and the Reason; ``findings()`` one row per finding.
    A candidate that raises makes its config 'incorrect'; a reference or inputs function that
    raises stops the evaluation with a SweepError that names it, whose ``partial_results`` are the
    EvaluationResults of the configs before it.
    """
    for name, fn in (("candidate", candidate), ("reference", reference), ("inputs", inputs)):
        if not callable(fn):
            raise ConfigError(f"evaluate's {name} must be a function, not {_shown(fn)}")
    if not _accepts(inputs, 2):
        raise ConfigError(f"inputs is called as inputs(config, seed), but "
                          f"{_cut(getattr(inputs, '__name__', str(inputs)) + str(inspect.signature(inputs)))} "
                          f"does not accept two arguments")
    checked = Options(**entry_given("evaluate", options))
    work = checked.work
    if work is not None and not callable(work):
        raise ConfigError(f"work must be a function of the config returning a kscope.Work, not {_shown(work)}")
    given = [None] if configs is None else list(configs)
    if not given:
        raise ConfigError("configs is empty: give at least one config, or None for one config (None)")
    names, rows = _axes(given)
    settings = checked.settings(_prefix(checked.output_prefix))
    judged = judged_options(rtol, atol, threshold_pct, confidence, seed, checked_runs)
    failing_directory = None if failing_inputs is None else _writable_directory(failing_inputs)

    simulated = testing.active()
    contest = _Contest(candidate, reference, inputs, given, device_allowed=simulated is None)
    engine_work = None if work is None else _work_adapter(work, given)
    progress = _notebook.progress_display(checked.verbosity >= VerbosityLevel.INFO)
    try:
        core = _core.evaluate(names, rows, settings, judged, contest.make_inputs,
                              contest.reference, contest.candidate, _caller_stream, simulated, progress, engine_work)
    except (SweepError, SweepInterrupted) as e:
        if isinstance(e.partial_results, _core.Evaluation):  # the configs evaluated before it stopped
            e.partial_results = EvaluationResults(e.partial_results, _config_tuples(given, names), names)
        raise
    finally:
        if progress is not None:
            progress.close()
    results = EvaluationResults(core, _config_tuples(given, names), names)
    if failing_directory is not None:
        results.failing_inputs = contest.save_failing(results, failing_directory)
    return results


_NO_DIRECTORY = "give a directory kscope can write in (it is made if missing), or failing_inputs=None"


def _writable_directory(path: Any) -> str:
    """failing_inputs' directory, checked before the first run: a directory kscope may write in,
    or one it can make there (under a directory it may write in)."""
    try:
        directory = os.fspath(path)
    except TypeError:
        raise ConfigError(f"failing_inputs must be a directory's path (a str or os.PathLike), not "
                          f"{_shown(path)}") from None
    shown = _shown(directory, 300)
    if os.path.isdir(directory):
        problem = _unwritable(directory)
        if problem:
            raise ConfigError(f"failing_inputs {shown} is {problem}; {_NO_DIRECTORY}")
        return directory
    if os.path.lexists(directory):
        raise ConfigError(f"failing_inputs {shown} is {_kind(directory)}, not a directory; {_NO_DIRECTORY}")
    parent = os.path.dirname(os.path.abspath(directory))
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    problem = _unwritable(parent) if os.path.isdir(parent) else f"{_kind(parent)}, not a directory"
    if problem:
        raise ConfigError(f"failing_inputs {shown} cannot be made: {_shown(parent, 300)} is {problem}; "
                          f"{_NO_DIRECTORY}")
    return directory


def _kind(path: str) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "a symbolic link to nothing"
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "neither a file nor a directory"


def _unwritable(directory: str) -> str | None:
    """Why files cannot be made in this directory; None where they can."""
    if os.access(directory, os.W_OK | os.X_OK):
        return None
    try:
        read_only = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return "on a read-only file system" if read_only else "not writable (Permission denied)"


def judged_options(rtol: float | None, atol: float | None, threshold_pct: float, confidence: float, seed: int,
                   checked_runs: int) -> _core.EvaluateOptions:
    """evaluate's options of judgement, checked, each bad one refused naming it."""
    judged = _core.EvaluateOptions()
    judged.rtol, judged.atol = _tolerance("rtol", rtol), _tolerance("atol", atol)
    judged.threshold_pct, judged.confidence = float(threshold_pct), float(confidence)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**64:
        raise ConfigError(f"seed must be an integer from 0 to 2**64 - 1, not {_shown(seed)}")
    judged.seed = int(seed)
    if isinstance(checked_runs, bool) or not isinstance(checked_runs, numbers.Integral) or checked_runs < 0:
        raise ConfigError(f"checked_runs must be an integer >= 0 (0: every run), not {_shown(checked_runs)}")
    judged.checked_runs = int(checked_runs)
    judged.validate()
    return judged


def _tolerance(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name} must be a finite number >= 0, or None for the per-dtype default; not {_shown(value)}")
    return float(value)


def _axes(configs: list[Any]) -> tuple[list[str], list[list[Any]]]:
    """The table's columns: a dict config's keys (the same in every config), else one "config"."""
    if all(isinstance(c, Mapping) for c in configs):
        names = list(configs[0])
        for i, c in enumerate(configs):
            if list(c) != names:
                raise ConfigError(f"config {i + 1} has the keys {_shown(list(c))}, config 1 {_shown(names)}: give "
                                  f"every config the same keys, in the same order")
        if not names or not all(isinstance(n, str) and n for n in names):
            raise ConfigError(f"a dict config's keys name its columns: give non-empty strings, not {_shown(names)}")
    elif any(isinstance(c, Mapping) for c in configs):
        raise ConfigError("configs mixes dicts with other values: give every config as a dict, or none")
    else:
        names = ["config"]
    return names, engine_rows(_config_tuples(configs, names), names)


def _config_tuples(configs: list[Any], names: list[str]) -> list[tuple[Any, ...]]:
    if names == ["config"] and not all(isinstance(c, Mapping) for c in configs):
        return [(c,) for c in configs]
    return [tuple(c[n] for n in names) for c in configs]


def _prefix(output_prefix: str | None) -> str:
    """The engine's prefix: an existing directory's name stands for the directory; its directory is
    made now, so that a bad path fails before anything is measured."""
    if output_prefix is None:
        return ""
    prefix = output_prefix
    if prefix and not prefix.endswith(os.sep) and os.path.isdir(prefix):
        prefix += os.sep
    directory = os.path.dirname(prefix)
    if directory:
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"output_prefix {prefix!r}: cannot create its directory {directory!r} ({e.strerror}); "
                              f"give a prefix in a writable directory") from None
    return prefix


def _work_adapter(work: Callable[[Any], Any], configs: list[Any]) -> Callable[[str, int], Any]:
    def engine_work(annotation: str, config_index: int) -> Any:
        out = work(configs[config_index])
        if out is None:
            return None
        if not isinstance(out, Work):
            raise ConfigError(f"work({_shown(configs[config_index])}) returned {_shown(out)}: return a "
                              f"kscope.Work(bytes=..., flops=..., kind=...), or None for no declared work")
        return float(out.bytes), float(out.flops), out.kind, out.tensor_cores

    return engine_work


def _caller_stream() -> int:
    """The stream a caller of the functions would wait on: PyTorch's or CuPy's current one where
    either has initialised CUDA, else the legacy default stream (0)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # what Inductor's code asks: a tenth of the time
        if raw is not None:
            return int(raw(torch._C._cuda_getDevice()))
        return int(torch.cuda.current_stream().cuda_stream)
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            return int(cupy.cuda.get_current_stream().ptr)
        except Exception:  # CuPy without a device
            return 0
    return 0


# ---- Timers: what a harness times with, which a candidate may replace --------------------------------

class _Timers:
    """The timers a candidate's call may replace: those loaded when the evaluation began, and those
    of modules (torch, triton.testing) imported since, watched from the call that loaded them."""

    def __init__(self) -> None:
        self._watched: list[tuple[str, Any, str, Any]] = []
        self._loaded: tuple[bool, bool] | None = None
        self.replaced_before = self._watch_new(at_start=True)

    def replaced(self) -> list[str]:
        """The timers replaced since the evaluation began (each of them after every call)."""
        self._watch_new(at_start=False)
        return [name for name, holder, attribute, fn in self._watched if getattr(holder, attribute, None) is not fn]

    def _watch_new(self, at_start: bool) -> list[str]:
        """Starts watching the timers of modules loaded since the last look; returns those of them
        that are not their library's own. Found so after the start, they were replaced during a
        call, and every later look reports them."""
        torch = sys.modules.get("torch")
        loaded = (torch is not None and hasattr(torch, "cuda"), "triton.testing" in sys.modules)
        if loaded == self._loaded:
            return []
        self._loaded = loaded
        known = {name for name, *_ in self._watched}
        not_own = []
        for name, holder, attribute in timer_places():
            if name in known:
                continue
            fn = getattr(holder, attribute, None)
            if not _original(name, fn):
                not_own.append(name)
                fn = fn if at_start else _NOT_ITS_OWN
            self._watched.append((name, holder, attribute, fn))
        return not_own


_NOT_ITS_OWN = object()  # a watched timer found replaced: every later look reports it


def _original(name: str, fn: Any) -> bool:
    """Whether the timer `name` is its library's own function."""
    if name.startswith("time."):
        return inspect.isbuiltin(fn)
    if name.startswith("torch."):
        return fn is None or getattr(fn, "__module__", "").startswith("torch")
    return fn is None or getattr(fn, "__module__", "").startswith("triton")


# ---- Values as the engine's views ------------------------------------------------------------------

def _named_leaves(value: Any, name: str) -> list[tuple[str, Any]]:
    """The leaves of a function's inputs or outputs, each with the name that places it:
    output, output[0], output['attn'], output[1]['x']."""
    if isinstance(value, (tuple, list)):
        return [leaf for i, item in enumerate(value) for leaf in _named_leaves(item, f"{name}[{i}]")]
    if isinstance(value, Mapping):
        return [leaf for key, item in value.items() for leaf in _named_leaves(item, f"{name}[{key!r}]")]
    return [(name, value)]


def _is_tensor(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _view(x: Any, device_allowed: bool, name: str) -> tuple[tuple[int, list[int], str, str], Any, bool]:
    """(view, what keeps its memory, whether x is a plain tensor or array) of an array-like x named
    `name` in messages, made contiguous (a copy, outside the timed calls) where needed."""
    if type(x) is np.ndarray and x.flags.c_contiguous and x.dtype.kind != "c":  # the common cases, quickly
        return (x.ctypes.data, list(x.shape), _checked_dtype(_dtype_name(x.dtype), name), "host"), x, True
    torch = sys.modules.get("torch")
    if (torch is not None and type(x) is torch.Tensor and x.is_cuda and device_allowed and x.is_contiguous()
            and not x.is_complex()):
        return (x.data_ptr(), list(x.shape), _checked_dtype(_dtype_name(x.dtype), name), "device"), x, True
    if torch is not None and isinstance(x, torch.Tensor):
        plain = type(x) is torch.Tensor
        t = x if plain else torch.Tensor.as_subclass(x, torch.Tensor)
        if t.is_complex():
            t = torch.view_as_real(t)
        if not t.is_contiguous():
            t = t.contiguous()
        if t.device.type not in ("cuda", "cpu"):
            raise ConfigError(f"{_cut(name)} is on device {t.device.type!r}: kscope reads tensors on a CUDA device or "
                              f"the CPU")
        memory = "device" if t.device.type == "cuda" else "host"
        dtype = _checked_dtype(_dtype_name(t.dtype), name)
        return (t.data_ptr(), list(t.shape), dtype, _checked_memory(memory, device_allowed, name)), t, plain
    if isinstance(x, np.ndarray) or isinstance(x, (numbers.Number, np.generic)):
        plain = type(x) is np.ndarray or isinstance(x, (numbers.Number, np.generic))
        a = np.asarray(x)
        if np.iscomplexobj(a):
            a = a.view(a.real.dtype).reshape(*a.shape, 2) if a.ndim else np.array([a.real, a.imag])
        a = np.ascontiguousarray(a)
        return (a.ctypes.data, list(a.shape), _checked_dtype(_dtype_name(a.dtype), name), "host"), a, plain
    interface = getattr(x, "__cuda_array_interface__", None)
    if interface is not None:
        shape = [int(d) for d in interface["shape"]]
        element = np.dtype(interface["typestr"])
        strides = interface.get("strides")
        if strides is not None and tuple(strides) != _c_strides(shape, element.itemsize):
            raise ConfigError(f"{_cut(name)} is a non-contiguous {type(x).__name__}: give it contiguous "
                              f"(e.g. cupy.ascontiguousarray)")
        plain = type(x).__name__ == "ndarray" and type(x).__module__.startswith("cupy")
        return (int(interface["data"][0]), shape, _checked_dtype(element.name, name),
                _checked_memory("device", device_allowed, name)), x, plain
    raise ConfigError(f"{_cut(name)} is a {type(x).__name__}, not a tensor or array: kscope compares torch tensors, "
                      f"NumPy and CuPy arrays and Python numbers")


_DTYPE_NAMES: dict[Any, str] = {}


def _dtype_name(dtype: Any) -> str:
    """A NumPy or torch dtype's name as the engine spells it ("float32"), remembered: both libraries
    make it anew on every read, a few microseconds a tensor."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name if isinstance(dtype, np.dtype) else str(dtype).removeprefix("torch.")
    return name


def _c_strides(shape: list[int], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _checked_dtype(dtype: str, name: str) -> str:
    if dtype not in _DTYPES:
        raise ConfigError(f"{_cut(name)} has dtype {dtype}, which kscope does not compare; it compares "
                          f"{', '.join(sorted(_DTYPES))} (complex as their real and imaginary parts)")
    return dtype


def _checked_memory(memory: str, device_allowed: bool, name: str) -> str:
    if memory == "device" and not device_allowed:
        raise ConfigError(f"{_cut(name)} is in GPU memory, but the simulated backend reads outputs on the host: give it CPU "
                          f"tensors or NumPy arrays")
    return memory


def _call(fn: Callable[..., Any], value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return fn(*value)
    if isinstance(value, Mapping):
        return fn(**value)
    return fn(value)


class _Contest:
    """The user's functions as the engine calls them: each returns (views, owner, observed), the
    outputs also their names."""

    def __init__(self, candidate: Callable[..., Any], reference: Callable[..., Any], inputs: Callable[[Any, int], Any],
                 configs: list[Any], device_allowed: bool) -> None:
        self._candidate, self._reference, self._inputs = candidate, reference, inputs
        self._configs = configs
        self._device_allowed = device_allowed
        self._timers = _Timers()

    def make_inputs(self, config_index: int, seed: int) -> tuple[list[Any], Any, list[Any]]:
        value = self._inputs(self._configs[config_index], seed)
        if type(value) not in (tuple, list, dict) and isinstance(value, Iterator):
            raise ConfigError(f"inputs(config, seed) returned a {type(value).__name__}, which can be read only once, "
                              f"while each run's inputs go to both functions: return a tuple or list of them "
                              f"(tuple(...) of it), a dict, or one tensor")
        return self._input_views(value)

    def _input_views(self, value: Any) -> tuple[list[Any], Any, list[Any]]:
        views: list[Any] = []
        for name, leaf in _named_leaves(value, "inputs"):
            if _is_tensor(leaf):
                if not leaf.is_contiguous():
                    continue  # its memory is no one range: left out of the input checks
            elif not (isinstance(leaf, np.ndarray) or hasattr(leaf, "__cuda_array_interface__")):
                continue
            views.append(_view(leaf, self._device_allowed, name)[0])
        return views, value, []

    def candidate(self, inputs: Any) -> tuple[list[Any], Any, list[Any], list[str]]:
        out = _call(self._candidate, inputs)
        observed = [("timer_patched", f"{name} was replaced during the candidate's call")
                    for name in self._timers.replaced()]
        observed += [("timer_patched", f"{name} is not its library's own (replaced before the evaluation)")
                     for name in self._timers.replaced_before]
        return self._outputs(out, observed)

    def reference(self, inputs: Any) -> tuple[list[Any], Any, list[Any], list[str]]:
        return self._outputs(_call(self._reference, inputs), [])

    def _outputs(self, out: Any, observed: list[tuple[str, str]]) -> tuple[list[Any], Any, list[Any], list[str]]:
        views, kept, names = [], [], []
        for name, leaf in _named_leaves(out, "output"):
            view, holder, plain = _view(leaf, self._device_allowed, name)
            if not plain:
                observed.append(("output_not_plain", f"{_cut(name)} is a {type(leaf).__module__}."
                                                     f"{type(leaf).__name__}, not a plain tensor or array"))
            views.append(view)
            kept.append(holder)
            names.append(name)
        return views, (out, kept), observed, names

    def save_failing(self, results: EvaluationResults, directory: str) -> list[str]:
        """Each incorrect config's first failing inputs, made again from its seed, with both sides'
        outputs on them. One that cannot be saved is warned about: the results stand."""
        table = results.to_dataframe()
        saved: list[str] = []
        failing = table[(table["Verdict"] == "incorrect") & table["FailingSeed"].notna()]
        for row_index, row in failing.iterrows():
            index = results.config_index(int(row_index))
            seed = int(row["FailingSeed"])
            try:
                saved.append(self._save_failing_run(directory, index, seed, row["Mismatch"]))
            except Exception as e:  # the file is lost, not the evaluation
                warnings.warn(f"could not save the failing inputs of config {index + 1} "
                              f"({_shown(self._configs[index])}) under failing_inputs {_shown(directory, 300)}: "
                              f"{type(e).__name__}: {_cut(str(e), 300)}; the evaluation's results are complete, "
                              f"and inputs(config, {seed}) makes those inputs again", ProfilerWarning, stacklevel=3)
        return saved

    def _save_failing_run(self, directory: str, index: int, seed: int, mismatch: str) -> str:
        config = self._configs[index]
        os.makedirs(directory, exist_ok=True)
        record: dict[str, Any] = {"config": config, "seed": seed, "inputs": self._inputs(config, seed),
                                  "mismatch": mismatch}
        record["reference_outputs"] = _call(self._reference, self._inputs(config, seed))
        try:
            record["candidate_outputs"] = _call(self._candidate, self._inputs(config, seed))
        except Exception as e:  # the record says what it raised
            record["candidate_outputs"] = f"{type(e).__name__}: {e}"
        stem = os.path.join(directory, f"failing-{index}-seed{seed}")
        torch = sys.modules.get("torch")
        if torch is not None:
            path = stem + ".pt"
            torch.save(record, path)
        else:
            path = stem + ".pkl"
            with open(path, "wb") as f:
                pickle.dump(record, f)
        return path
