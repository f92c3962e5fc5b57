"""kscope for torch.compile's max-autotune: ``install()`` makes Inductor (torch 2.11) choose with kscope.

    import kscope.torch

    with kscope.torch.install():                  # or kscope.torch.install() for the whole process
        fn = torch.compile(model, mode="max-autotune")
        fn(x)

Where Inductor times a candidate it asks its benchmarker, on two paths: ``Benchmarker.benchmark``
(ATen and subgraph choices; torch registers a benchmarker per device type there) and
``benchmark_gpu`` (Triton templates, and the configs of Inductor's own Triton kernels). Installed,
both measure with kscope (the L2 flushed before every run, each run's time the span of its GPU work
from CUPTI's kernel records: kscope.triton.do_bench), in this process and in the subprocesses of
``autotune_in_subproc`` (each job installs kscope there first). Where Inductor chooses among a
layer's candidates (``AlgorithmSelectorCache.benchmark_choices``), they are raced side by side
(kscope.tune) instead of timed one at a time, and a declared tie is settled by the stable rule: the
candidate Inductor lists first among the winner and its ties. Inductor then takes the minimum of
the times it is given, and that is the choice: each candidate's median, a tied one that measured
faster reported just above it.

Only torch 2.11 is supported (the hooks are Inductor's internals, as they are in that version);
install() refuses any other version by name.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
from collections.abc import Callable
from typing import Any

from . import _console
from ._race_choice import TIE_RULE, chosen, race_callables, reported_ms
from ._tune import RaceResults
from .errors import ConfigError
from .triton import NoGpuWork, do_bench

__all__ = ["Decision", "Installation", "SUPPORTED_TORCH", "install"]

SUPPORTED_TORCH = "2.11"
# kscope.tune's options that a race of candidates takes.
_RACE_OPTIONS = ("runs", "warmup_runs", "threshold_pct", "alpha", "first_runs", "final_runs", "max_finalists",
                 "cache_control", "clock_control", "thermal_mode")

_active: Installation | None = None
_here = threading.local()  # .recording: the candidates' calls kept while benchmark_choices runs in this thread


@dataclasses.dataclass
class Decision:
    """One choice among a layer's candidates: ``candidates`` (Inductor's names and descriptions,
    in its order), ``chosen`` (one of them), ``ties`` (the candidates the race declared tied with
    its winner), ``rule`` (how a declared tie was settled), ``race`` (the RaceResults; None where the
    candidates were timed one at a time) and ``note`` (why they were, then)."""

    candidates: list[str]
    chosen: str
    ties: list[str]
    rule: str
    race: RaceResults | None
    note: str = ""


class Installation:
    """kscope installed in Inductor; a context manager that uninstalls it on exit. ``decisions``:
    each choice among candidates made while installed, in order."""

    def __init__(self, race: bool, options: dict[str, Any]) -> None:
        self.race = race
        self.options = options
        self.decisions: list[Decision] = []
        self._undo: list[Callable[[], None]] = []

    def __enter__(self) -> Installation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def uninstall(self) -> None:
        """Gives Inductor its own benchmarking back (a second call does nothing)."""
        global _active
        while self._undo:
            self._undo.pop()()
        if _active is self:
            _active = None

    def __repr__(self) -> str:
        state = "installed" if _active is self else "uninstalled"
        return f"<kscope.torch.Installation: {state}, race={self.race}, {len(self.decisions)} decisions>"


def install(*, race: bool = True, **race_options: Any) -> Installation:
    """Makes torch.compile's max-autotune (Inductor, torch 2.11) choose with kscope, until the
    returned Installation is uninstalled (or its ``with`` block ends).

    race: race each layer's candidates side by side (kscope.tune) where Inductor chooses among them;
        False: time each candidate with kscope and let Inductor take the minimum.
    race_options: kscope.tune's runs, warmup_runs, threshold_pct, alpha, first_runs, final_runs,
        max_finalists, cache_control, clock_control, thermal_mode.

    Raises ConfigError on a torch other than 2.11, or while kscope is installed already.
    """
    global _active
    unknown = sorted(set(race_options) - set(_RACE_OPTIONS))
    if unknown:
        raise ConfigError(f"kscope.torch.install takes race and kscope.tune's {', '.join(_RACE_OPTIONS)}; "
                          f"not {', '.join(unknown)}")
    if not isinstance(race, bool):
        raise ConfigError(f"install's race must be True or False, not {race!r}")
    if _active is not None:
        raise ConfigError("kscope.torch is installed already in this process: uninstall() the Installation "
                          "install() returned (or leave its with block) before installing again")
    modules = _inductor()
    installation = Installation(race, dict(race_options))
    try:
        _patch_benchmarker(installation, modules["benchmarking"])
        if race:
            _patch_choices(installation, modules["select_algorithm"].AlgorithmSelectorCache)
        _patch_subprocess(installation, modules["autotune_process"].TuningProcess)
    except BaseException:
        installation.uninstall()  # what was patched before the failure
        raise
    _active = installation
    return installation


def _inductor() -> dict[str, Any]:
    """Inductor's modules, from torch 2.11 only."""
    import importlib

    try:
        import torch
    except ImportError:
        raise ConfigError("kscope.torch.install() needs torch 2.11 (torch.compile's Inductor): torch is not "
                          "installed") from None
    version = str(torch.__version__)
    if ".".join(version.split("+")[0].split(".")[:2]) != SUPPORTED_TORCH:
        raise ConfigError(
            f"kscope.torch.install() works with torch {SUPPORTED_TORCH} only (it hooks Inductor's benchmarker, "
            f"algorithm selection and autotune subprocess as they are there); this is torch {version}: install "
            f"torch {SUPPORTED_TORCH}, or time your own candidates with kscope.triton.do_bench or kscope.tune")
    names = {"benchmarking": "torch._inductor.runtime.benchmarking",
             "select_algorithm": "torch._inductor.select_algorithm",
             "autotune_process": "torch._inductor.autotune_process"}
    modules = {key: importlib.import_module(name) for key, name in names.items()}
    needed = [("benchmarking", "benchmarker", "benchmark_gpu"),
              ("select_algorithm", "AlgorithmSelectorCache", "benchmark_choices"),
              ("select_algorithm", "AlgorithmSelectorCache", "benchmark_choice"),
              ("autotune_process", "TuningProcess", "put")]
    missing = [f"{names[m]}.{owner}.{attr}" for m, owner, attr in needed
               if not hasattr(getattr(modules[m], owner, None), attr)]
    if missing:
        raise ConfigError(f"this torch {version} has no {', '.join(missing)}, which kscope.torch hooks: a build of "
                          f"torch {SUPPORTED_TORCH} other than the released one?")
    return modules


def _patch_benchmarker(installation: Installation, benchmarking: Any) -> None:
    """Both timing paths: the shared benchmarker's benchmark_gpu (Triton templates and kernels; its
    benchmark() reaches it too where no benchmarker is registered) and the benchmarker torch
    registers for 'cuda' devices (Benchmarker.benchmark: ATen and subgraph choices)."""
    benchmarker = benchmarking.benchmarker
    ban = getattr(benchmarking, "may_ban_benchmarking", None)

    def benchmark_gpu(_callable: Callable[[], Any], *args: Any, **kwargs: Any) -> float | list[float]:
        if not kwargs.get("is_vetted_benchmarking", False) and ban is not None:
            ban()  # Inductor's deterministic mode allows vetted benchmarking only
        return _time(_callable, kwargs)

    _replace(installation, benchmarker, "benchmark_gpu", benchmark_gpu)
    if not hasattr(benchmarking, "register_benchmarker") or not hasattr(benchmarking, "_BENCHMARK_DISPATCH"):
        return  # Benchmarker.benchmark calls benchmark_gpu for GPU devices: patched above
    register: Callable[..., None] = benchmarking.register_benchmarker
    dispatch: dict[str, Any] = benchmarking._BENCHMARK_DISPATCH
    previous = dispatch.get("cuda")

    def cuda(_self: Any, _callable: Callable[[], Any], *, warmup: float, rep: float, **kwargs: Any) -> Any:
        return benchmark_gpu(_callable, warmup=warmup, rep=rep, **kwargs)

    register("cuda", cuda, override=True)

    def restore_cuda() -> None:
        if previous is not None:
            register("cuda", previous, override=True)
        else:
            dispatch.pop("cuda", None)

    installation._undo.append(restore_cuda)


def _time(_callable: Callable[[], Any], kwargs: dict[str, Any]) -> float | list[float]:
    """A candidate's time in ms as Inductor's benchmarkers return it (the first quantile asked,
    the return_mode asked, or the median), measured by kscope; while benchmark_choices records, the
    call kept for the race (run once, so that a candidate that cannot run fails as it would)."""
    recording = getattr(_here, "recording", None)
    if recording is not None:
        _callable()
        recording.append(_callable)
        return 0.0
    timing: dict[str, Any] = {"warmup": kwargs.get("warmup", 25), "rep": kwargs.get("rep", 100),
                              "grad_to_none": kwargs.get("grad_to_none")}
    try:
        if kwargs.get("quantiles") is not None:
            values = do_bench(_callable, quantiles=kwargs["quantiles"], **timing)
            return values[0] if isinstance(values, list) else values
        return do_bench(_callable, return_mode=kwargs.get("return_mode") or "median", **timing)
    except NoGpuWork:
        # What Inductor asks of a step with nothing to do (its scheduler subtracts the time of cloning
        # a kernel's mutated inputs, which may be none): it takes no GPU time.
        return [0.0] if kwargs.get("return_mode") == "all" else 0.0


def _patch_choices(installation: Installation, selector: Any) -> None:
    """AlgorithmSelectorCache.benchmark_choices(choices, autotune_args, is_collective=False), as
    torch 2.11 calls it: the candidates raced instead of timed one at a time. Its first pass keeps
    each candidate's call (benchmark_choice runs it once through the benchmarker), then the race."""
    original = inspect.getattr_static(selector, "benchmark_choices")
    original_one = inspect.getattr_static(selector, "benchmark_choice")

    def benchmark_choice(cls: type, choice: Any, autotune_args: Any, *args: Any, **kwargs: Any) -> float:
        calls = getattr(_here, "calls", None)
        if calls is None:
            return original_one.__func__(cls, choice, autotune_args, *args, **kwargs)
        _here.recording = calls.setdefault(id(choice), [])
        try:
            return original_one.__func__(cls, choice, autotune_args, *args, **kwargs)
        finally:
            _here.recording = None

    def benchmark_choices(cls: type, choices: Any, autotune_args: Any, *args: Any, **kwargs: Any) -> dict[Any, float]:
        def one_at_a_time() -> dict[Any, float]:
            return original.__func__(cls, choices, autotune_args, *args, **kwargs)

        if args or kwargs.get("is_collective"):
            return one_at_a_time()
        outer = getattr(_here, "calls", None), getattr(_here, "recording", None)  # a nested selection's
        _here.calls, _here.recording = {}, None
        try:
            first = one_at_a_time()
            calls = _here.calls
            _here.calls = None
            return _decide(installation, list(first), first, calls, one_at_a_time)
        finally:
            _here.calls, _here.recording = outer

    _replace(installation, selector, "benchmark_choice", classmethod(benchmark_choice))
    _replace(installation, selector, "benchmark_choices", classmethod(benchmark_choices))


def _decide(installation: Installation, choices: list[Any], first: dict[Any, float],
            calls: dict[int, list[Callable[[], Any]]], one_at_a_time: Callable[[], dict[Any, float]]) -> dict[Any, float]:
    """The race among the candidates that ran (the others keep Inductor's infinity); one at a time
    where a candidate is not timed through the benchmarker, or the race fails."""
    names = [_label(c) for c in choices]
    runnable = [c for c in choices if first[c] != float("inf")]
    odd = [_label(c) for c in runnable if len(calls.get(id(c), [])) != 1]
    note = ""
    if len(runnable) < 2:
        note = "fewer than two candidates ran"
    elif odd:
        note = f"{', '.join(odd)} not timed through Inductor's benchmarker once"
    else:
        try:
            race = race_callables([calls[id(c)][0] for c in runnable], installation.options)
        except Exception as e:  # a candidate that fails in the race: Inductor's own handling decides
            note = f"the race failed ({type(e).__name__}: {e})"
            _console.warn("run", f"kscope.torch: {note}; timing the candidates one at a time")
        else:
            choice = chosen(race)
            times = dict(zip(runnable, reported_ms(race, choice)))
            ties = [_label(runnable[i]) for i in race.tie_indices]
            installation.decisions.append(Decision(names, _label(runnable[choice]), ties, TIE_RULE, race))
            return {c: times.get(c, first[c]) for c in choices}
    timings = one_at_a_time() if runnable else first
    best = min(timings, key=timings.__getitem__) if timings else None
    installation.decisions.append(Decision(names, _label(best) if best is not None else "", [], "the minimum", None,
                                           note))
    return timings


def _label(choice: Any) -> str:
    """A candidate as Inductor names it: its name and description (a template's config)."""
    description = getattr(choice, "description", "")
    return f"{getattr(choice, 'name', type(choice).__name__)}" + (f" ({description})" if description else "")


class _InstalledFirst:
    """A job for Inductor's autotune subprocess that installs kscope there before it runs (pickled
    with the job: the subprocess imports kscope.torch to unpickle it)."""

    def __init__(self, job: Any, options: dict[str, Any]) -> None:
        self.job = job
        self.options = options

    def __call__(self) -> Any:
        if _active is None:
            install(race=False, **self.options)
        return self.job()


def _patch_subprocess(installation: Installation, process: Any) -> None:
    """TuningProcess.put(job): the job sent to a subprocess of autotune_in_subproc."""
    original = inspect.getattr_static(process, "put")

    def put(self: Any, req: Any, *args: Any, **kwargs: Any) -> Any:
        job = req if req is None or isinstance(req, _InstalledFirst) else _InstalledFirst(req, installation.options)
        return original(self, job, *args, **kwargs)

    _replace(installation, process, "put", put)


def _replace(installation: Installation, owner: Any, name: str, value: Any) -> None:
    """Sets owner.name (an object's or a class's own attribute) until the installation is uninstalled,
    which gives back the one it had, or none (then the class's, or a base class's, shows again)."""
    had = name in vars(owner)
    saved = vars(owner).get(name)
    setattr(owner, name, value)

    def restore() -> None:
        if had:
            setattr(owner, name, saved)
        else:
            delattr(owner, name)

    installation._undo.append(restore)
