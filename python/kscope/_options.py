"""The options of kscope.analyze.kernel, one table (OPTIONS): each option's keyword, default, check,
the engine's Settings fields it sets, and its help; and each option's type for type checkers
(KernelOptions and the classes it extends). kernel's help is made from the table, and Options
checks each option once at decoration time and turns them into the engine's Settings at every
call. kscope.tune and kscope.evaluate take the table's options that the engine's entry for them
does not refuse (entry_options), typed by the same classes (TuneOptions, EvaluateOptions); the
three entries' signatures at run time (signature()) are made from the table and the classes.
The callbacks among the options are wrapped for the engine in _callbacks.py."""

from __future__ import annotations

import difflib
import enum
import inspect
import math
import numbers
import textwrap
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict, TypeVar, Unpack

from . import _core, _roofline, _shard, info_collector, tools
from ._roofline import _accepts
from .errors import ConfigError, ProfilerWarning, also_builtin


class VerbosityLevel(enum.IntEnum):
    """How much a profiled call prints (to stderr): nothing, progress, or progress and details."""

    SILENT = 0
    INFO = 3
    DEBUG = 4


_ENGINE_VERBOSITY = {
    VerbosityLevel.SILENT: _core.Verbosity.quiet,
    VerbosityLevel.INFO: _core.Verbosity.info,
    VerbosityLevel.DEBUG: _core.Verbosity.debug,
}

# backend= names and the engine's Backend each stands for, from the engine's backend registry, which
# also says what each measures (kscope._core.default_metrics) and which metrics it accepts (validate).
# backend=None, the default, is Backend.from_metrics unless a tool is active (kscope.activate).
BACKENDS = {d.python_name: d.backend for d in _core.backends() if d.python_name}
# The same names for type checkers; tests/python/test_typing.py checks that they are BACKENDS'.
BackendName = Literal["cupti", "events", "counters", "auto", "ncu", "pcsampling"]


def backend_choices():
    """backend='s choices as analyze.kernel's help lists them: "'cupti' (what it measures), ... or 'ncu' (...)"."""
    described = [f"{d.python_name!r} ({d.summary})" for d in _core.backends() if d.python_name]
    return ", ".join(described[:-1]) + " or " + described[-1]


_thermal_device_warned = False


def _choice(option, value, allowed):
    if value not in allowed:
        listed = " or ".join(repr(a) for a in allowed)
        raise ConfigError(f"{option} must be {listed}, not {value!r}")
    return value


def _count(option, value, minimum, maximum=_core.MAX_RUNS_PER_CONFIG):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not minimum <= value <= maximum:
        raise ConfigError(f"{option} must be an integer from {minimum} to {maximum}, not {value!r}")
    return int(value)


def _number(option, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ConfigError(f"{option} must be a number, not {value!r}")
    return float(value)


def _optional_number(option, value):
    return None if value is None else _number(option, value)


def _flag(option, value):
    if not isinstance(value, bool):
        raise ConfigError(f"{option} must be True or False, not {value!r}")
    return value


def _verbosity(option, value):
    if isinstance(value, str):
        names = {"silent": 0, "quiet": 0, "info": 3, "debug": 4}
        if value.lower() not in names:
            raise ConfigError(f"{option} must be 'silent', 'info' or 'debug' (or 0, 3, 4), not {value!r}")
        value = names[value.lower()]
    try:
        return VerbosityLevel(value)
    except ValueError:
        raise ConfigError(
            f"{option} must be kscope.VerbosityLevel.SILENT (0), INFO (3) or DEBUG (4), not {value!r}"
        ) from None


def _names(option, value):
    if value is None:
        return []
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ConfigError(f"{option} must be a list of names, e.g. [{value!r}], not {value!r}")
    names = [v.strip() if isinstance(v, str) else v for v in value]
    if not all(isinstance(v, str) and v for v in names):
        raise ConfigError(f"{option} must hold non-empty strings, not {list(value)!r}")
    return names


class EngineChoice:
    """An option whose values are the members of one of the engine's enumerations, by the names the
    engine exports (kscope._core), some spelt otherwise in Python (`spelt`: {python name: engine
    name}, e.g. 'raise' for the engine's raise_, a Python keyword there)."""

    def __init__(self, enum, spelt=None):
        self.enum = enum
        self.spelt = dict(spelt or {})
        engine_names = {engine: python for python, engine in self.spelt.items()}
        self.choices = tuple(engine_names.get(name, name) for name in enum.__members__)

    def check(self, option, value):
        return _choice(option, value, self.choices)

    def engine(self, value):
        return getattr(self.enum, self.spelt.get(value, value))


def _criterion(option, name):
    """A stopping rule of the engine's table (its names: kscope._core.stopping_rules()), by name."""
    return _core.StopCriterion.named(_choice(option, name, _core.stopping_rules()))


_ADAPTIVE_KEYS = ("criterion", "target_pct", "min_runs", "max_runs", "config_budget_s", "timeout_s")
_THRESHOLD_KEYS = ("memory_pct", "compute_pct")


def _adaptive(option, adaptive):
    """None/False: fixed runs. True: the engine's adaptive defaults. A dict: some of
    criterion (the name of one of the engine's stopping rules), target_pct, min_runs, max_runs,
    config_budget_s, timeout_s."""
    if adaptive is None or adaptive is False:
        return None
    if adaptive is True:
        return {}
    if not isinstance(adaptive, Mapping):
        raise ConfigError(f"{option} must be True or a dict of {', '.join(_ADAPTIVE_KEYS)}, not {adaptive!r}")
    unknown = [k for k in adaptive if k not in _ADAPTIVE_KEYS]
    if unknown:
        raise ConfigError(f"{option} has unknown keys {unknown}; valid keys: {', '.join(_ADAPTIVE_KEYS)}")
    engine = dict(adaptive)
    if "criterion" in engine:
        engine["criterion"] = _criterion(f"{option}['criterion']", engine["criterion"])
    for key in ("min_runs", "max_runs"):
        if key in engine:
            engine[key] = _count(f"{option}['{key}']", engine[key], 0)
    for key in ("target_pct", "config_budget_s", "timeout_s"):
        if key in engine:
            engine[key] = _number(f"{option}['{key}']", engine[key])
    return engine


def _adaptive_engine(adaptive):
    a = _core.AdaptiveSampling()
    for key, value in adaptive.items():
        setattr(a, key, value)
    return {"sampling": _core.Sampling.adaptive, "adaptive": a}


def _bound_thresholds(option, thresholds):
    """None: the engine's (60% each, as Speed of Light). A dict of memory_pct and/or compute_pct:
    the percentages of the DRAM and compute roofs from which a row is memory- or compute-bound."""
    if thresholds is None:
        return None
    if not isinstance(thresholds, Mapping):
        raise ConfigError(f"{option} must be a dict of {' and '.join(_THRESHOLD_KEYS)}, e.g. "
                          f"{{'memory_pct': 70}}, not {thresholds!r}")
    unknown = [k for k in thresholds if k not in _THRESHOLD_KEYS]
    if unknown:
        raise ConfigError(f"{option} has unknown keys {unknown}; valid keys: {', '.join(_THRESHOLD_KEYS)}")
    return {key: _number(f"{option}['{key}']", value) for key, value in thresholds.items()}


def _thresholds_engine(thresholds):
    t = _core.BoundThresholds()
    for key, value in thresholds.items():
        setattr(t, key, value)
    return {"bound_thresholds": t}


def _thermal_device(option, device):
    global _thermal_device_warned
    if device is not None:
        _count(option, device, 0, 2**31 - 1)
        if not _thermal_device_warned:
            _thermal_device_warned = True
            warnings.warn(
                "thermal_device is accepted but not applied: kscope's thermal guard watches the "
                "GPU it profiles (the current CUDA device); select that one with torch.cuda.set_device",
                ProfilerWarning,
                stacklevel=4,
            )
    return device


def _derive_metric(option, fn):
    if fn is not None and not callable(fn):
        raise TypeError(f"{option} must be a callable function, not {fn!r}")
    return fn


def _annotation_name(option, name):
    if name is not None and not (isinstance(name, str) and name):
        raise ConfigError(f"{option} must be an annotation name, not {name!r}")
    return name


def _combine(option, fn):
    if fn is not None and not (callable(fn) and _accepts(fn, 2)):
        # Nsight Python checks this with an assert: also an AssertionError.
        raise also_builtin(ConfigError, AssertionError)(
            f"Profiler error: {option} must be a binary function: a function (a, b) -> value that reduces the "
            f"values of two kernels, e.g. {option}=lambda a, b: a + b"
        )
    return fn


def _prefix(option, prefix):
    if prefix is not None and not isinstance(prefix, str):
        raise ConfigError(f"{option} must be a path prefix string, not {prefix!r}")
    return prefix


def _backend(option, backend):
    if backend in ("test", "simulated", "testing"):
        raise ConfigError(
            "the simulated backend is not a backend= choice (it measures nothing); in tests, "
            "profile inside `with kscope.testing.simulated_backend() as sim:`"
        )
    if backend is not None and backend not in BACKENDS:
        raise ConfigError(f"{option} must be {' or '.join(map(repr, BACKENDS))}, or None (the default: "
                          f"chosen from the metrics), not {backend!r}")
    return backend


def _metrics(option, metrics):
    return None if metrics is None else _names(option, [metrics] if isinstance(metrics, str) else metrics)


def _sections(option, sections):
    return _names(option, [sections] if isinstance(sections, str) else sections)


class Option:
    """One option of analyze.kernel: its keyword, default, check, the engine's Settings fields it
    sets and its help.

    check(keyword, value) returns the value as the options keep it, or raises naming the fix;
    `fields`: the settings_fields() names it sets; engine(kept value) returns {field: engine value}
    (default: the first field, the kept value as it is; a kept None leaves the engine's default).
    `choices`: an EngineChoice, whose names the check and the conversion take from the engine.
    `label`: what the help says after the keyword, in parentheses (e.g. 'kscope': not an option of
    Nsight Python's). `kernel_only`: an option of Nsight Python's that sets no engine field, which
    kscope's own entries (tune, evaluate) do not take."""

    def __init__(self, name, default, check=None, fields=(), engine=None, choices=None, label="", help="",
                 kernel_only=False):
        self.name = name
        self.default = default
        self.choices = choices
        self.check = check or (choices.check if choices else lambda option, value: value)
        self.fields = tuple(fields)
        self.engine = engine or ((lambda value: {self.fields[0]: choices.engine(value)}) if choices else
                                 (lambda value: {self.fields[0]: value}) if fields else (lambda value: {}))
        self.label = label
        self.help = help
        self.kernel_only = kernel_only


def _option_table():
    kscope_only = "kscope"
    return [
        Option("runs", 1, lambda o, v: _count(o, v, 1), ["runs"],
               help="recorded runs per config (1 as in Nsight Python; the statistics need 2 or more)."),
        Option("warmup_runs", 1, lambda o, v: _count(o, v, 0), ["warmup_runs"], label=kscope_only,
               help="unrecorded runs per config first (JIT, autotuning, module load)."),
        Option("metrics", None, _metrics, ["metrics"],
               help="Nsight Compute metric names (kscope.list_metrics()), measured in process by the 'counters' "
                    "backend, or through ncu with backend='ncu'; by default 'counters' measures the Speed-of-Light "
                    "preset (kscope.sol_metrics()) and 'ncu' gpu__time_duration.sum. The duration backends "
                    "measure only their own metric (cupti__kernel_duration, events__region_duration). Without "
                    "metrics and backend, kernel durations (cupti), unless a tool is active (kscope.activate, or "
                    "KSCOPE_TOOL=ncu|cupti in the environment): Tool.NCU measures Nsight Python's default, "
                    "gpu__time_duration.sum, with 'counters'. kscope.energy_metrics() (nvml__energy_per_run in J, "
                    "nvml__average_power in W, nvml__energy_above_idle in J) are measured beside a duration "
                    "backend's durations: each recorded run is then a window of back-to-back runs (see "
                    "energy_window)."),
        Option("derive_metric", None, _derive_metric,
               help="``f(*metric_values, *config_values)`` per run, before aggregation; returns a value, (value, "
                    "unit), or a dict of them. With the energy metrics it gets the duration, then the energy "
                    "metrics as asked, per window; kscope.energy_efficiency(joules, flop=..., bytes=...) returns "
                    "FLOP/J and bytes/J (with work= declared, kscope adds them itself)."),
        Option("normalize_against", None, _annotation_name, ["normalize_against"],
               help="annotation whose AvgValue divides the others' at the same config."),
        Option("ignore_kernel_list", None, _names, ["ignore_kernel_list"],
               help="kernel names left out of a region's measurement."),
        Option("combine_kernel_metrics", None, _combine,
               help="f(a, b) reducing the values of two kernels of a region to one (for regions of several "
                    "kernels)."),
        Option("cache_control", "all", choices=EngineChoice(_core.CacheControl), fields=["cache_control"],
               help="'all' flushes the L2 before every region (cold), 'none' leaves it warm."),
        Option("clock_control", "none", choices=EngineChoice(_core.ClockControl), fields=["clock_control"],
               help="'none' (boost allowed) or 'base' (the SM clock locked to base through NVML for the "
                    "session, always restored; needs the right to set clocks; the memory clock is left alone)."),
        Option("replay_mode", "kernel", choices=EngineChoice(_core.ReplayMode), fields=["replay_mode"],
               help="'kernel' (one value per kernel) or 'range' (one per annotation, its Kernel column 'range', "
                    "covering its kernels and the gaps between them: one range for 'counters' and 'ncu', the "
                    "span from the first kernel's start to the last one's end for 'cupti'; 'events' always "
                    "measure the region)."),
        Option("thermal_mode", "auto", choices=EngineChoice(_core.ThermalMode, {"auto": "automatic"}),
               fields=["thermal_mode"],
               help="'auto', 'manual' or 'off'; with thermal_wait, thermal_cont and thermal_timeout: pause before "
                    "a run while the GPU's thermal headroom is at or below thermal_wait °C, until it is back to "
                    "thermal_cont (as Nsight Python)."),
        Option("thermal_wait", None, _optional_number, ["thermal_wait_c"],
               help="°C of headroom at or below which a run waits (the engine's default: 10)."),
        Option("thermal_cont", None, _optional_number, ["thermal_cont_c"],
               help="°C of headroom from which it goes on (the engine's default: 20)."),
        Option("thermal_timeout", None, _optional_number, ["thermal_timeout_s"],
               help="the longest wait in seconds (the engine's default: 180)."),
        Option("thermal_device", None, _thermal_device, kernel_only=True,
               help="checked but not applied: the guard watches the profiled GPU."),
        Option("verbosity", VerbosityLevel.INFO, _verbosity, ["verbosity"],
               engine=lambda v: {"verbosity": _ENGINE_VERBOSITY[v]},
               help="kscope.VerbosityLevel SILENT/INFO/DEBUG (0/3/4) or their names."),
        Option("output_prefix", None, _prefix, ["output_prefix"], engine=lambda v: {},  # the call's, at each call
               help="a directory ('out/'; an existing directory's name without the slash, 'out', means the same) "
                    "or a path prefix (``'out/run_'``). The engine writes {prefix}{func}-{n}-<file> for the n-th "
                    "successful call, each of " + ", ".join(_core.result_files()) + " (and, with backend='ncu', "
                    "its Nsight Compute report and logs; without a prefix those go to a temporary directory). The "
                    "raw samples are streamed: -samples.csv gets each config's samples as it finishes (with "
                    "-manifest.json and -progress.jsonl), so a crash or kill loses at most the config in flight "
                    "(configs shorter than 10 ms are written together, at most 10 ms after they finished). The directory is "
                    "created if needed."),
        Option("fsync_interval_s", 1.0, _number, ["fsync_interval_s"], label=kscope_only,
               help="with output_prefix, how often the streamed files are flushed to the disk (fdatasync): a "
                    "power loss or OS crash loses at most the configs of the last fsync_interval_s seconds. 0 "
                    "writes and flushes each config as it finishes (a flush costs about a millisecond: more than "
                    "a short config)."),
        Option("resume", False, _flag, ["resume"], label=kscope_only,
               help="with output_prefix, continue the sweep streamed there by a call that was killed or "
                    "interrupted (the same {func}-{n}: the n-th call of a fresh process, or the next call after a "
                    "SweepInterrupted): configs finished on disk are read back, the rest measured, and the whole "
                    "table returned. Refused (ConfigError naming what differs) if the GPU, backend, sweep or "
                    "measurement options differ; with nothing on disk every config is measured."),
        Option("overwrite", False, _flag, ["overwrite"], label=kscope_only,
               help="with output_prefix, replace the files of an earlier sweep there. Without it (or resume), a "
                    "call whose {prefix}{func}-{n}- holds a finished sweep (a script run again) moves its files, "
                    "and its output_csv files, aside to numbered backups (...results.json.~1~), saying so; an "
                    "unfinished sweep there raises ConfigError before measuring anything: kscope never deletes "
                    "measured data unasked. Another kind of result there (an evaluation, a race) is never "
                    "replaced, and a second process on the same prefix is refused while the first runs."),
        Option("output_csv", False, _flag, kernel_only=True,
               help="also write {prefix}profiled_data-{func}-{n}.csv (raw samples) and "
                    "{prefix}processed_data-{func}-{n}.csv (summary), as Nsight Python names them (a temporary "
                    "directory when no prefix is given)."),
        Option("info_collectors", None, lambda o, v: info_collector.normalize(v),
               help="custom information collectors (kscope.experimental.collect-decorated functions, "
                    "kscope.InfoCollector objects or (name, callback, scope) tuples) whose values become "
                    "columns; kscope.info_collector says when each scope is called."),
        Option("info_collector_errors", "warn", choices=EngineChoice(_core.InfoCollectorErrors, {"raise": "raise_"}),
               fields=["info_collector_errors"],
               help="'warn' (as Nsight Python) records a failing collector's value as missing and warns once per "
                    "collector (kscope.SweepWarning, a RuntimeWarning); 'raise' stops the sweep with a SweepError "
                    "naming it."),
        Option("backend", None, _backend, ["backend"], engine=lambda v: {}, label=kscope_only,  # for_call() decides
               help="None (the default) chooses: the active tool's backend (kscope.activate), else from the "
                    "metrics: none -> 'cupti', Nsight Compute names -> 'counters'. Or one of the engine's "
                    "backends (the Backend column says which measured): " + backend_choices() + "."),
        Option("adaptive", None, _adaptive, ["sampling", "adaptive"], engine=_adaptive_engine, label=kscope_only,
               help="None for exactly ``runs`` runs; True, or a dict of criterion (" +
                    " | ".join(map(repr, _core.stopping_rules())) + "), target_pct, min_runs, max_runs, config_budget_s, "
                    "timeout_s, to sample each config until every measured series meets the target (the "
                    "Converged column says which did)."),
        Option("throttled_runs", "keep", choices=EngineChoice(_core.ThrottledRuns), fields=["throttled_runs"],
               label=kscope_only,
               help="'keep' (flagged, counted in ThrottledRuns) or 'exclude' from the statistics (still in the raw "
                    "samples)."),
        Option("ncu_sections", None, _sections, ["ncu_sections"], label="kscope, backend='ncu'",
               help="Nsight Compute sections such as 'SpeedOfLight' or 'MemoryWorkloadAnalysis', collected into "
                    "the kept report (results.report_path) for ncu's GUI; the table holds ``metrics``."),
        Option("shard", None, lambda o, v: _shard.check_option(v), ["shard"],
               engine=lambda v: {"shard": v} if isinstance(v, tuple) else {}, label=kscope_only,
               help="measure only one shard of the configs, for sweeps split over processes, GPUs or hosts: "
                    "(index, count) measures the configs whose position modulo count is index; 'auto' takes it "
                    "from the launcher: KSCOPE_SHARD=index/count, torchrun (RANK, WORLD_SIZE; each process "
                    "measures on GPU LOCAL_RANK and rank 0's call returns every rank's shard merged, gathered "
                    "over gloo; the other ranks return their own part), a Slurm job array "
                    "(SLURM_ARRAY_TASK_ID/_MIN/_MAX/_STEP/_COUNT) or srun's tasks (SLURM_PROCID of "
                    "SLURM_STEP_NUM_TASKS). None (the default) still honours KSCOPE_SHARD. A shard's files get "
                    "shard-<index>-of-<count>- after the prefix; kscope.merge or ``kscope merge`` joins them. "
                    "docs/scaling-out.md shows both launch styles."),
        Option("energy_window", 1.0, _number, ["energy_window_s"], label=kscope_only,
               help="with the energy metrics, each recorded run is a window in which the function runs back to "
                    "back for at least this many seconds (1.0; the GPU's energy counter updates about every 0.1 "
                    "s), and every metric's sample is the window's: the durations are its runs' mean, the energy "
                    "its counter's difference per run. Each run must open exactly one annotation. "
                    "docs/energy.md says what the energy includes and what is taken out."),
        Option("work", None, label=kscope_only,  # its functions' parameters: checked against the function's
               help="what each region must do, for the roofline without counters: a function of the config's "
                    "values (as derive_metric gets them) returning a kscope.Work (bytes moved between DRAM and the "
                    "SMs, FLOPs, their kind) or None, called once per annotation and config; or a dict of such "
                    "functions per annotation. E.g. ``work=lambda n: kscope.Work(bytes=8 * n)`` for a copy of n "
                    "floats. Each duration row of a region with declared work then gets AchievedGBps, "
                    "DRAMRoofPct, AchievedTFLOPs, ComputeRoofPct (with their 95% intervals), ArithmeticIntensity "
                    "and Bound, against the device's roofs at the clocks observed around each run (docs/roofline.md, "
                    "\"Why is it slow, without counters\"); ProfileResults.roofs() lists the roofs, plot_roofline() "
                    "draws them."),
        Option("bound_thresholds", None, _bound_thresholds, ["bound_thresholds"], engine=_thresholds_engine,
               label=kscope_only,
               help="{'memory_pct': 60, 'compute_pct': 60}: the percentages of the DRAM and compute roofs from "
                    "which a row's Bound is memory or compute (the larger one decides when both are reached; "
                    "latency when neither is). 60% each by default, as Speed of Light."),
    ]


# analyze.kernel's options, in the order its help lists them.
OPTIONS = {option.name: option for option in _option_table()}


def default(name):
    """The default of option `name` (analyze.kernel's signature takes its defaults from here)."""
    return OPTIONS[name].default


# The defaults kscope.tune and kscope.evaluate give some options instead of the table's.
ENTRY_DEFAULTS = {"tune": {"runs": 100}, "evaluate": {"runs": 20}}
# Options an entry takes in a form of its own: evaluate's work is a function of the config as
# inputs gets it (a dict), not of its values.
ENTRY_FORMS = {"evaluate": ("work",)}


def entry_default(entry, name):
    """The default of option `name` in kscope.tune's or kscope.evaluate's signature."""
    return ENTRY_DEFAULTS.get(entry, {}).get(name, default(name))


def entry_options(entry):
    """The options of the table that kscope.tune or kscope.evaluate (`entry`) takes, in the table's
    order: those the engine's entry neither refuses nor sets itself (_core.entry_options()), less
    Nsight Python's own."""
    rules = _core.entry_options()[entry]
    return [name for name, option in OPTIONS.items()
            if name not in rules["refused"] and name not in rules["fixed"] and not option.kernel_only]


def _not_taken(entry, name):
    """Why `entry` (kscope.tune, kscope.evaluate) does not take keyword `name`, as Python words an
    unexpected keyword, with the engine's reason where the option table has the option."""
    rules = _core.entry_options()[entry]
    said = f"{entry}() got an unexpected keyword argument {name!r}"
    if name in rules["refused"]:
        return f"{said}: {entry} does not take it ({rules['refused'][name]})"
    if name in rules["fixed"]:
        return f"{said}: {entry} sets it itself"
    if name in OPTIONS:
        return f"{said}: it is an option of Nsight Python's, which kscope.analyze.kernel alone takes"
    close = difflib.get_close_matches(name, entry_options(entry), n=1)
    return said + (f": did you mean {close[0]!r}?" if close else f"; help(kscope.{entry}) lists its parameters")


def entry_given(entry, given):
    """The options of a call of kscope.tune or kscope.evaluate (`entry`), as Options takes them:
    those `given`, the others at the entry's defaults; a keyword it does not take is a TypeError
    that says why."""
    taken = entry_options(entry)
    for name in given:
        if name not in taken:
            raise TypeError(_not_taken(entry, name))
    return {name: given.get(name, entry_default(entry, name)) for name in taken}


# The options' types for type checkers (a choice as the Literal of its engine names), one line per
# option: EntryOptions holds those that analyze.kernel, kscope.tune and kscope.evaluate all take,
# each entry's class adds its own (tests/python/test_typing.py checks the classes against the table
# and the engine's refusals). The entries take them as `**options: Unpack[...]`, and at run time
# the signature that signature() makes of them, with the table's defaults (help(), inspect).
class EntryOptions(TypedDict, total=False):
    runs: int
    warmup_runs: int
    backend: BackendName | None
    cache_control: Literal["all", "none"]
    clock_control: Literal["none", "base"]
    thermal_mode: Literal["auto", "manual", "off"]
    thermal_wait: float | None
    thermal_cont: float | None
    thermal_timeout: float | None
    verbosity: VerbosityLevel | int | Literal["silent", "info", "debug"]
    output_prefix: str | None
    overwrite: bool
    fsync_interval_s: float


class TuneOptions(EntryOptions, total=False):
    resume: bool
    shard: Literal["auto"] | tuple[int, int] | None


class EvaluateOptions(EntryOptions, total=False):
    bound_thresholds: Mapping[str, float] | None
    work: Callable[[Any], _roofline.Work | None] | None  # evaluate's own form: a function of the config


class KernelOptions(TuneOptions, total=False):
    bound_thresholds: Mapping[str, float] | None
    work: _roofline.WorkOption
    metrics: Sequence[str] | None
    derive_metric: Callable[..., Any] | None
    normalize_against: str | None
    ignore_kernel_list: Sequence[str] | None
    combine_kernel_metrics: Callable[[float, float], float] | None
    replay_mode: Literal["kernel", "range"]
    thermal_device: int | None
    output_csv: bool
    info_collectors: Sequence[Any] | None
    info_collector_errors: Literal["warn", "raise"]
    adaptive: bool | Mapping[str, Any] | None
    throttled_runs: Literal["keep", "exclude"]
    ncu_sections: Sequence[str] | None
    energy_window: float


ENTRY_TYPES = {"kernel": KernelOptions, "tune": TuneOptions, "evaluate": EvaluateOptions}


def kernel_signature(
    _func: Callable[..., object] | None = None,
    *,
    configs: Iterable[Any] | None = None,
    **options: Unpack[KernelOptions],
) -> None:
    """analyze.kernel's parameters, for type checkers: its own (_func, configs), then the options.
    kernel's call forms take them from here."""


def signature(function, entry):
    """`function`'s signature for help() and inspect, its annotations evaluated (`runs: int = 100`,
    not `runs: 'int'`): its own parameters, then one keyword per option that `entry` ('kernel',
    'tune', 'evaluate') takes, in the table's order, typed by its class above and with the entry's
    default, where `function` declares `**options: Unpack[...]`. A return type the module defines
    after the function stays a name."""

    def evaluated(annotation):
        try:
            return eval(annotation, function.__globals__) if isinstance(annotation, str) else annotation
        except NameError:
            return annotation

    own = inspect.signature(function)
    types = typing.get_type_hints(ENTRY_TYPES[entry])
    names = list(OPTIONS) if entry == "kernel" else entry_options(entry)
    options = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=entry_default(entry, name),
                                 annotation=types[name]) for name in names]
    parameters = [p.replace(annotation=evaluated(p.annotation)) for p in own.parameters.values()
                  if p.kind is not inspect.Parameter.VAR_KEYWORD]
    return own.replace(parameters=parameters + options, return_annotation=evaluated(own.return_annotation))


_Entry = TypeVar("_Entry", bound=Callable[..., Any])


def takes_options(entry: str) -> Callable[[_Entry], _Entry]:
    """Gives kscope.tune or kscope.evaluate (`entry`) its signature() at run time."""

    def signed(function: _Entry) -> _Entry:
        function.__signature__ = signature(function, entry)  # type: ignore[attr-defined]
        return function

    return signed


def options_help(width=92):
    """analyze.kernel's help of its options, one entry per option of the table."""
    entries = []
    for option in OPTIONS.values():
        label = option.name + (f" ({option.label})" if option.label else "")
        entries.append(textwrap.fill(f"{label}: {option.help}", width=width, initial_indent=" " * 4,
                                     subsequent_indent=" " * 8, break_on_hyphens=False, break_long_words=False))
    return "\n".join(entries)


class Options:
    """analyze.kernel's options, each checked once (by its row of OPTIONS) and turned into the
    engine's Settings at every call. An option not given takes the table's default."""

    def __init__(self, **given):
        unknown = [name for name in given if name not in OPTIONS]
        if unknown:  # as Python words it for a keyword a signature lacks, with the nearest option
            close = difflib.get_close_matches(unknown[0], OPTIONS, n=1)
            raise TypeError(f"kernel() got an unexpected keyword argument {unknown[0]!r}" +
                            (f": did you mean {close[0]!r}?" if close else f"; its options: {', '.join(OPTIONS)}"))
        self._kept = {name: option.check(name, given.get(name, option.default)) for name, option in OPTIONS.items()}
        if self.backend == "auto" and self.derive_metric is not None:
            raise ConfigError(
                "backend='auto' may fall back to a duration backend with other metrics, so "
                "derive_metric cannot know its arguments: choose backend='counters' or 'cupti'"
            )
        # The engine's own checks, at decoration time (metrics against the backend: at the call,
        # whose backend a kscope.testing block may replace; the prefix's directory: at the call).
        self.validate()

    def __getattr__(self, name: str) -> Any:
        """An option as kept: `options.runs`."""
        try:
            return self.__dict__["_kept"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        """An option set after the checks (a test resuming the same function): kept as given."""
        if name in OPTIONS:
            self._kept[name] = value
        else:
            super().__setattr__(name, value)

    def validate(self):
        """The engine's checks of the options, and of the collectors' names against the columns."""
        _core.validate(self.settings(self.output_prefix or ""), [(name, scope) for name, _, scope in self.info_collectors])

    def check_collector_names(self, parameters):
        """The collectors' names against a decorated function's `parameters`: the one check that
        needs the function, so that decorating checks the options once however many it decorates."""
        _core.check_collector_names([name for name, _, _ in self.info_collectors], list(parameters))

    def for_call(self):
        """What a call made now measures with: (backend, metrics, note, chooser). An explicit
        backend= wins; else the active tool's backend and metrics (kscope.tools; the note, or None,
        is to be shown once; chooser: how the tool was chosen, tools.chosen_by()); else backend
        None, which the engine chooses from the metrics."""
        if self.backend is not None or tools.default_backend() is None:
            return self.backend, self.metrics, None, None
        metrics, note = tools.tool_metrics(self.metrics)
        return tools.default_backend(), metrics, note, tools.chosen_by()

    def settings(self, output_prefix="", backend=None, metrics=None):
        """The engine's Settings; `output_prefix`: where the engine writes its files for this call;
        `backend` and `metrics`: as for_call() decided them (default: the options')."""
        s = _core.Settings()
        for name, option in OPTIONS.items():
            value = self._kept[name]
            if value is not None:
                for field, engine_value in option.engine(value).items():
                    setattr(s, field, engine_value)
        backend = backend or self.backend
        s.backend = BACKENDS[backend] if backend else _core.Backend.from_metrics
        s.metrics = (self.metrics if metrics is None else metrics) or []
        s.output_prefix = output_prefix
        return s

    @staticmethod
    def measured_metrics(settings, simulated=None):
        """The metrics a call with these engine settings measures, in the engine's order: those
        asked for, or what its backend measures by default (the simulated backend's one metric in
        tests), then the energy metrics asked for, which a duration backend measures beside its own."""
        energy = [m for m in dict.fromkeys(settings.metrics) if _core.is_energy_metric(m)]
        asked = [m for m in settings.metrics if not _core.is_energy_metric(m)]
        if simulated is not None:
            return (asked or [simulated.metric]) + energy
        if energy:  # a duration backend: its one metric, asked for or not
            return list(_core.default_metrics(_core.chosen_backend(settings))) + energy
        return asked or list(_core.default_metrics(_core.chosen_backend(settings)))
