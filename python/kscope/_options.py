"""The options of kscope.analyze.kernel: checked once at decoration time, turned into the engine's
Settings at every call."""

import enum
import inspect
import math
import numbers
import warnings
from collections.abc import Mapping
from typing import Literal

import numpy as np

from . import _core, _shard, info_collector, tools
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
BackendName = Literal["cupti", "events", "counters", "auto", "ncu"]


def backend_choices():
    """backend='s choices as analyze.kernel's help lists them: "'cupti' (what it measures), ... or 'ncu' (...)"."""
    described = [f"{d.python_name!r} ({d.summary})" for d in _core.backends() if d.python_name]
    return ", ".join(described[:-1]) + " or " + described[-1]


# The engine's Settings fields by their C++ name: their option's name here (empty where there is
# none); tests/python/test_typing.py checks the options, the bindings and the stub against them.
PYTHON_NAMES = {name: python_name for name, python_name, *_ in _core.settings_fields()}

_THERMAL_MODES = {"auto": "automatic", "manual": "manual", "off": "off"}
# info_collector_errors= and the engine's value ('raise' is a Python keyword there).
_COLLECTOR_ERRORS = {"warn": "warn", "raise": "raise_"}
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


def _verbosity(value):
    if isinstance(value, str):
        names = {"silent": 0, "quiet": 0, "info": 3, "debug": 4}
        if value.lower() not in names:
            raise ConfigError(f"verbosity must be 'silent', 'info' or 'debug' (or 0, 3, 4), not {value!r}")
        value = names[value.lower()]
    try:
        return VerbosityLevel(value)
    except ValueError:
        raise ConfigError(
            f"verbosity must be kscope.VerbosityLevel.SILENT (0), INFO (3) or DEBUG (4), not {value!r}"
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


class Options:
    def __init__(self, *, runs, warmup_runs, metrics, derive_metric, normalize_against, verbosity,
                 ignore_kernel_list, combine_kernel_metrics, clock_control, cache_control,
                 replay_mode, thermal_mode, thermal_wait, thermal_cont, thermal_timeout,
                 thermal_device, output_prefix, output_csv, backend, adaptive=None, throttled_runs="keep",
                 ncu_sections=None, info_collectors=None, resume=False, shard=None, info_collector_errors="warn",
                 energy_window=1.0, overwrite=False, work=None, bound_thresholds=None, fsync_interval_s=1.0):
        self.runs = _count("runs", runs, 1)
        self.warmup_runs = _count("warmup_runs", warmup_runs, 0)
        self.metrics = None if metrics is None else _names("metrics", [metrics] if isinstance(metrics, str) else metrics)
        if derive_metric is not None and not callable(derive_metric):
            raise TypeError(f"derive_metric must be a callable function, not {derive_metric!r}")
        self.derive_metric = derive_metric
        if normalize_against is not None and not (isinstance(normalize_against, str) and normalize_against):
            raise ConfigError(f"normalize_against must be an annotation name, not {normalize_against!r}")
        self.normalize_against = normalize_against
        self.verbosity = _verbosity(verbosity)
        self.ignore_kernel_list = _names("ignore_kernel_list", ignore_kernel_list)
        if combine_kernel_metrics is not None and not (
            callable(combine_kernel_metrics) and _accepts(combine_kernel_metrics, 2)
        ):
            # Nsight Python checks this with an assert: also an AssertionError.
            raise also_builtin(ConfigError, AssertionError)(
                "Profiler error: combine_kernel_metrics must be a binary function: a function (a, b) -> "
                "value that reduces the values of two kernels, e.g. combine_kernel_metrics=lambda a, b: a + b"
            )
        self.combine_kernel_metrics = combine_kernel_metrics
        # 'base' locks the SM clock to base through NVML for the session (needs the right
        # to change clocks; the engine raises BackendError naming the fix where it is refused).
        self.clock_control = _choice("clock_control", clock_control, ("none", "base"))
        self.cache_control = _choice("cache_control", cache_control, ("all", "none"))
        # Replay exists only for counter metrics; the duration backends measure every kernel of
        # the single run directly, so 'kernel' and 'range' measure the same.
        self.replay_mode = _choice("replay_mode", replay_mode, ("kernel", "range"))
        self.thermal = self._thermal(thermal_mode, thermal_wait, thermal_cont, thermal_timeout, thermal_device)
        if output_prefix is not None and not isinstance(output_prefix, str):
            raise ConfigError(f"output_prefix must be a path prefix string, not {output_prefix!r}")
        self.output_prefix = output_prefix
        self.output_csv = _flag("output_csv", output_csv)
        self.resume = _flag("resume", resume)
        self.overwrite = _flag("overwrite", overwrite)
        self.fsync_interval_s = _number("fsync_interval_s", fsync_interval_s)
        self.shard = _shard.check_option(shard)
        self.adaptive = self._adaptive(adaptive)
        self.throttled_runs = _choice("throttled_runs", throttled_runs, ("keep", "exclude"))
        self.energy_window = _number("energy_window", energy_window)
        self.ncu_sections = _names("ncu_sections", [ncu_sections] if isinstance(ncu_sections, str) else ncu_sections)
        if backend in ("test", "simulated", "testing"):
            raise ConfigError(
                "the simulated backend is not a backend= choice (it measures nothing); in tests, "
                "profile inside `with kscope.testing.simulated_backend() as sim:`"
            )
        if backend is not None and backend not in BACKENDS:
            raise ConfigError(f"backend must be {' or '.join(map(repr, BACKENDS))}, or None (the default: "
                              f"chosen from the metrics), not {backend!r}")
        self.backend = backend
        if self.backend == "auto" and self.derive_metric is not None:
            raise ConfigError(
                "backend='auto' may fall back to a duration backend with other metrics, so "
                "derive_metric cannot know its arguments: choose backend='counters' or 'cupti'"
            )
        self.info_collectors = info_collector.normalize(info_collectors)
        self.info_collector_errors = _choice("info_collector_errors", info_collector_errors, tuple(_COLLECTOR_ERRORS))
        # Its functions' parameters are checked against the profiled function's (_ProfiledFunction).
        self.work = work
        self.bound_thresholds = self._bound_thresholds(bound_thresholds)
        # The engine's own checks, at decoration time (metrics against the backend: at the call,
        # whose backend a kscope.testing block may replace; the prefix's directory: at the call).
        self.validate()

    def validate(self):
        """The engine's checks of the options, and of the collectors' names against the columns."""
        _core.validate(self.settings(self.output_prefix or ""), [(name, scope) for name, _, scope in self.info_collectors])

    def check_collector_names(self, parameters):
        """The collectors' names against a decorated function's `parameters`: the one check that
        needs the function, so that decorating checks the options once however many it decorates."""
        _core.check_collector_names([name for name, _, _ in self.info_collectors], list(parameters))

    _ADAPTIVE_KEYS = ("criterion", "target_pct", "min_runs", "max_runs", "config_budget_s", "timeout_s")

    @classmethod
    def _adaptive(cls, adaptive):
        """None/False: fixed runs. True: the engine's adaptive defaults. A dict: some of
        criterion ('ci_halfwidth' | 'rsd'), target_pct, min_runs, max_runs, config_budget_s, timeout_s."""
        if adaptive is None or adaptive is False:
            return None
        if adaptive is True:
            return {}
        if not isinstance(adaptive, Mapping):
            raise ConfigError(f"adaptive must be True or a dict of {', '.join(cls._ADAPTIVE_KEYS)}, not {adaptive!r}")
        unknown = [k for k in adaptive if k not in cls._ADAPTIVE_KEYS]
        if unknown:
            raise ConfigError(f"adaptive has unknown keys {unknown}; valid keys: {', '.join(cls._ADAPTIVE_KEYS)}")
        engine = dict(adaptive)
        if "criterion" in engine:
            engine["criterion"] = getattr(
                _core.StopCriterion, _choice("adaptive['criterion']", engine["criterion"], ("ci_halfwidth", "rsd"))
            )
        for key in ("min_runs", "max_runs"):
            if key in engine:
                engine[key] = _count(f"adaptive['{key}']", engine[key], 0)
        for key in ("target_pct", "config_budget_s", "timeout_s"):
            if key in engine:
                engine[key] = _number(f"adaptive['{key}']", engine[key])
        return engine

    _THRESHOLD_KEYS = ("memory_pct", "compute_pct")

    @classmethod
    def _bound_thresholds(cls, thresholds):
        """None: the engine's (60% each, as Speed of Light). A dict of memory_pct and/or compute_pct:
        the percentages of the DRAM and compute roofs from which a row is memory- or compute-bound."""
        if thresholds is None:
            return {}
        if not isinstance(thresholds, Mapping):
            raise ConfigError(f"bound_thresholds must be a dict of {' and '.join(cls._THRESHOLD_KEYS)}, e.g. "
                              f"{{'memory_pct': 70}}, not {thresholds!r}")
        unknown = [k for k in thresholds if k not in cls._THRESHOLD_KEYS]
        if unknown:
            raise ConfigError(f"bound_thresholds has unknown keys {unknown}; valid keys: {', '.join(cls._THRESHOLD_KEYS)}")
        return {key: _number(f"bound_thresholds['{key}']", value) for key, value in thresholds.items()}

    @staticmethod
    def _thermal(mode, wait, cont, timeout, device):
        """The engine's thermal settings; what is not given keeps the engine's defaults (Nsight
        Python's: pause at 10 °C of headroom, resume at 20 °C, wait at most 180 s). The engine
        checks them together (Settings.validate)."""
        global _thermal_device_warned
        _choice("thermal_mode", mode, tuple(_THERMAL_MODES))
        engine = {"thermal_mode": getattr(_core.ThermalMode, _THERMAL_MODES[mode])}
        given = {"thermal_wait_c": wait, "thermal_cont_c": cont, "thermal_timeout_s": timeout}
        for field, value in given.items():
            if _optional_number(PYTHON_NAMES[field], value) is not None:
                engine[field] = float(value)
        if device is not None:
            _count("thermal_device", device, 0, 2**31 - 1)
            if not _thermal_device_warned:
                _thermal_device_warned = True
                warnings.warn(
                    "thermal_device is accepted but not applied: kscope's thermal guard watches the "
                    "GPU it profiles (the current CUDA device); select that one with torch.cuda.set_device",
                    ProfilerWarning,
                    stacklevel=4,
                )
        return engine

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
        backend = backend or self.backend
        s = _core.Settings()
        s.runs = self.runs
        s.warmup_runs = self.warmup_runs
        s.backend = BACKENDS[backend] if backend else _core.Backend.from_metrics
        s.metrics = (self.metrics if metrics is None else metrics) or []
        s.output_prefix = output_prefix
        s.resume = self.resume
        s.overwrite = self.overwrite
        s.fsync_interval_s = self.fsync_interval_s
        if isinstance(self.shard, tuple):
            s.shard = self.shard
        s.cache_control = getattr(_core.CacheControl, self.cache_control)
        s.clock_control = getattr(_core.ClockControl, self.clock_control)
        for field, value in self.thermal.items():
            setattr(s, field, value)
        s.replay_mode = getattr(_core.ReplayMode, self.replay_mode)
        s.verbosity = _ENGINE_VERBOSITY[self.verbosity]
        s.ignore_kernel_list = self.ignore_kernel_list
        s.normalize_against = self.normalize_against or ""
        s.throttled_runs = getattr(_core.ThrottledRuns, self.throttled_runs)
        s.info_collector_errors = getattr(_core.InfoCollectorErrors, _COLLECTOR_ERRORS[self.info_collector_errors])
        s.energy_window_s = self.energy_window
        s.ncu_sections = self.ncu_sections
        if self.bound_thresholds:
            t = _core.BoundThresholds()
            for key, value in self.bound_thresholds.items():
                setattr(t, key, value)
            s.bound_thresholds = t
        if self.adaptive is not None:
            s.sampling = _core.Sampling.adaptive
            a = _core.AdaptiveSampling()
            for key, value in self.adaptive.items():
                setattr(a, key, value)
            s.adaptive = a
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

    def combine_adapter(self):
        """combine_kernel_metrics as the engine calls it: (a, b) -> float, its result checked."""
        fn = self.combine_kernel_metrics
        if fn is None:
            return None

        def combine(a, b):
            out = fn(a, b)
            if not isinstance(out, (str, bytes, bool)) and out is not None:
                try:
                    return float(out)
                except (TypeError, ValueError):
                    pass
            raise ConfigError(
                f"combine_kernel_metrics returned {out!r} for the kernel values {a} and {b}: it must return one "
                f"number, e.g. combine_kernel_metrics=lambda a, b: a + b"
            )

        return combine

    def derive_adapter(self, metrics, configs, n_params):
        """derive_metric as the engine calls it: (values, config index) -> [(name, value, unit)].
        The user's function gets (*metric_values, *config_values) and may return a value, a
        (value, unit) tuple, or a mapping of names to either."""
        fn = self.derive_metric
        if fn is None:
            return None
        n = len(metrics) + n_params
        if not _accepts(fn, n):
            signature = inspect.signature(fn)  # _accepts found one
            raise ConfigError(
                f"derive_metric expects {n} parameters ({len(metrics)} metric values + {n_params} configs), but "
                f"has {len(signature.parameters)} parameters: it is called with the value(s) of {metrics}, then "
                f"the {n_params} config values, which {getattr(fn, '__name__', fn)!s}{signature} does not accept; "
                f"give it {n} parameters, or *args"
            )
        name = getattr(fn, "__name__", "derived")
        unitless = set()
        shapes = "return a number, a (value, unit) tuple, or a dict of them"

        def number(key, value, values):
            what = f"derive_metric {name}() returned {value!r}" + ("" if key == name else f" for {key!r}")
            if value is None:
                if all(math.isnan(v) for v in values):  # a failed run (ignore_failures): NaN whatever it returns
                    return math.nan
                raise ConfigError(
                    f"{what} (measured values {list(values)}): {shapes}; float('nan') for a value that does "
                    f"not exist. Is a return statement missing?"
                )
            if isinstance(value, (tuple, list)):
                raise ConfigError(f"{what}, a {len(value)}-element {type(value).__name__}: {shapes}")
            if isinstance(value, (str, bytes)):
                raise ConfigError(f"{what}, text rather than a number: {shapes}")
            if isinstance(value, (bool, np.bool_)):
                raise ConfigError(f"{what}, a truth value rather than a number: {shapes} (float(...) of a flag "
                                  f"that should count as 0 or 1)")
            try:
                return float(value)
            except (TypeError, ValueError):
                raise ConfigError(f"{what}, of type {type(value).__name__}, not a number: {shapes}") from None

        def entry(key, out, values):
            pair = isinstance(out, (tuple, list)) and len(out) == 2
            value, unit = (out[0], out[1]) if pair else (out, None)
            if unit is not None and not isinstance(unit, str):
                raise ConfigError(f"derive_metric {name}() returned the unit {unit!r} for {key!r}, of type "
                                  f"{type(unit).__name__}: a unit is a string such as 'GB/s'; {shapes}")
            derived = key, number(key, value, values), "" if unit is None else str(unit)
            if not pair and key not in unitless:
                unitless.add(key)
                warnings.warn(
                    f"Derived metric '{key}' does not have a unit specified. Return a tuple (value, unit) "
                    f"instead of just the value. np.nan will be added to the 'Unit' column in the dataframe "
                    f"(files written by the engine leave it empty).",
                    ProfilerWarning,
                    stacklevel=2,
                )
            return derived

        def adapter(values, config_index):
            out = fn(*values, *configs[config_index])
            if isinstance(out, Mapping):
                for k in out:
                    if not isinstance(k, str):
                        raise ConfigError(f"derive_metric {name}() returned a dict with the key {k!r}, of type "
                                          f"{type(k).__name__}: each derived metric is named by a string key, "
                                          f"e.g. {{'bandwidth': (value, 'GB/s')}}")
                return [entry(k, v, values) for k, v in out.items()]
            return [entry(name, out, values)]

        return adapter
