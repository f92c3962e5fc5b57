"""kscope.analyze.kernel and kscope.analyze.plot: Nsight Python's decorators on the kscope engine."""

from __future__ import annotations

import contextlib
import functools
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Concatenate, Literal, ParamSpec, Protocol, cast, overload

from . import _core, _notebook, _options, _plot, _plot_style, _roofline, _shard, info_collector, testing, tools
from ._call_files import CallFiles
from ._callbacks import combine_adapter, derive_adapter
from ._configs import Signature, engine_rows
from ._lines import LineResults
from ._options import OPTIONS, Options, VerbosityLevel, kernel_signature, options_help
from ._results import ProfileResults
from .errors import (BackendError, ConfigError, CudaError, ProfilerWarning, SweepError, SweepInterrupted,
                     SweepWarning, also_builtin)

__all__ = ["kernel", "lines", "plot", "ignore_failures", "ProfiledFunction", "KernelDecorator", "PlotDecorator"]


_Params = ParamSpec("_Params")  # the profiled function's parameters
_Options = ParamSpec("_Options")  # a decorator's options, as its definition declares them


class ProfiledFunction(Protocol[_Params]):
    """What ``@kscope.analyze.kernel`` (and ``@kscope.analyze.plot`` above it) makes of a function,
    ``ProfiledFunction[[int, str]]`` of ``def f(n: int, dtype: str)``: calling it sweeps configs and
    returns a ProfileResults, never the function's own return value. ``f(*values)`` measures one config, ``f(configs=[...])`` the
    configs given, ``f()`` those given to the decorator (or the defaults' one config)."""

    __name__: str

    @overload
    def __call__(self, *, configs: Iterable[Any] | None = None) -> ProfileResults: ...
    @overload
    def __call__(self, *args: _Params.args, **kwargs: _Params.kwargs) -> ProfileResults: ...


class KernelDecorator(Protocol):
    """``@kscope.analyze.kernel(...)`` with options: applied to a function, profiles it."""

    def __call__(self, func: Callable[_Params, object], /) -> ProfiledFunction[_Params]: ...


class PlotDecorator(Protocol):
    """``@kscope.analyze.plot(...)`` with options: applied to a profiled function, plots its results."""

    def __call__(self, func: ProfiledFunction[_Params], /) -> ProfiledFunction[_Params]: ...


class _KernelForms(Protocol[_Options]):
    """kernel's call forms: ``kernel(func, **options)`` (bare ``@kernel`` included) profiles func;
    ``kernel(**options)`` returns the decorator."""

    @overload
    def __call__(self, func: Callable[_Params, object], /, *args: _Options.args,
                 **kwargs: _Options.kwargs) -> ProfiledFunction[_Params]: ...
    @overload
    def __call__(self, *args: _Options.args, **kwargs: _Options.kwargs) -> KernelDecorator: ...


class _PlotForms(Protocol[_Options]):
    """plot's call forms: bare ``@plot`` plots with the defaults; ``plot(filename, ...)`` returns the
    decorator."""

    @overload
    def __call__(self, func: ProfiledFunction[_Params], /) -> ProfiledFunction[_Params]: ...
    @overload
    def __call__(self, *args: _Options.args, **kwargs: _Options.kwargs) -> PlotDecorator: ...


def _kernel_forms(
    signature: Callable[Concatenate[Any, _Options], object],
) -> Callable[[Callable[..., object]], _KernelForms[_Options]]:
    """Types kernel by its call forms, its options being `signature`'s parameters after the first
    (_options.kernel_signature: the options' types, declared once beside their table); at run time
    kernel itself, with every option in its signature for help() and inspect."""

    def typed(kernel: Callable[..., object]) -> _KernelForms[_Options]:
        kernel.__signature__ = _options.signature(kernel, "kernel")  # type: ignore[attr-defined]
        return cast("_KernelForms[_Options]", kernel)

    return typed


def _plot_forms(plot: Callable[_Options, object]) -> _PlotForms[_Options]:
    """Types plot by its call forms; at run time plot itself, unchanged."""
    return cast("_PlotForms[_Options]", plot)


@_kernel_forms(kernel_signature)
def kernel(
    _func: Callable[..., object] | None = None,
    *,
    configs: Iterable[Any] | None = None,
    **options: Any,
) -> ProfiledFunction[Any] | KernelDecorator:
    """Profiles the decorated function over configs; calling it returns a ProfileResults.

    Works as ``@kernel``, ``@kernel()`` and ``@kernel(**options)``. The function body marks the
    measured code with ``kscope.annotate``; each call runs, for every config,
    ``warmup_runs + runs`` calls of it (config-major) and returns the statistics per
    (annotation, config, metric).

    configs: a list of configs, each a tuple of parameter values in signature order (a bare
        value for a one-parameter function); short ones are padded with the defaults, and
        keyword-only parameters are passed as keywords. Give them here or at call time
        (``f(configs=[...])``, or ``f(*values)`` for one config), not both. Checked when the
        function is called, as Nsight Python does (a generator is read at the first call).
{options}
    """
    checked = Options(**options)

    def decorate(func: Callable[_Params, object]) -> ProfiledFunction[_Params]:
        profiled = _ProfiledFunction(func, configs, checked)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> ProfileResults:
            call_configs = kwargs.pop("configs", None)  # f(configs=[...]); any other keyword is a parameter's
            return profiled(args, kwargs, call_configs)

        wrapper._kscope_profiled = profiled  # type: ignore[attr-defined]
        return wrapper

    return decorate if _func is None else decorate(_func)


# The options' help comes from their table.
kernel.__doc__ = (kernel.__doc__ or "").replace("{options}", options_help())


class _ProfiledFunction:
    def __init__(self, func: Callable[..., object], configs: Iterable[Any] | None, options: Options) -> None:
        self.func = func
        self.signature = Signature(func)
        self.options = options
        options.check_collector_names(self.signature.names)  # the rest: Options() checked them
        info_collector.check_arguments(options.info_collectors, len(self.signature.names))
        self.work = _roofline.check_option(options.work, len(self.signature.names))
        # Checked at each call, as Nsight Python does: decorating (at import) never fails for them.
        self.configs = configs
        self.files = CallFiles(func.__name__, options)

    def _decorated_configs(self) -> Any:
        """The configs given to the decorator; an iterator is read once, at the first call, so that
        every call sweeps the same configs."""
        if isinstance(self.configs, Iterator):
            self.configs = list(self.configs)
        return self.configs

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any], configs: Iterable[Any] | None) -> ProfileResults:
        name = self.func.__name__
        misplaced = [key for key in kwargs if key in OPTIONS and key not in self.signature.names]
        if misplaced:
            given = ", ".join(f"{key}={kwargs[key]!r}" for key in misplaced)
            raise also_builtin(ConfigError, TypeError)(
                f"{name}() got {given}: {'an option' if len(misplaced) == 1 else 'options'} of "
                f"kscope.analyze.kernel, not {'a parameter' if len(misplaced) == 1 else 'parameters'} of {name}. "
                f"Give {'it' if len(misplaced) == 1 else 'them'} to the decorator, @kscope.analyze.kernel({given}); "
                f"a call takes only configs=[...] or one config's values"
            )
        decorated = self._decorated_configs()
        if args or kwargs:
            if configs is not None or decorated is not None:
                # Nsight Python checks this with an assert: also an AssertionError.
                raise also_builtin(ConfigError, AssertionError)(
                    f"{name}() was called with arguments and also has configs: pass either the "
                    f"values of one configuration, {name}(...), or configs=[...], not both"
                )
            configs = self.signature.from_call(args, kwargs)
        elif configs is not None:
            if decorated is not None:
                raise ConfigError(
                    f"You have provided configs at decoration time and at runtime. Provide configs at "
                    f"decoration time or at runtime: drop configs= from @kscope.analyze.kernel or from the "
                    f"call of {name}()"
                )
            configs = self.signature.configs(configs)
        else:
            configs = self.signature.configs(decorated)
        return self._profile(configs)

    def _profile(self, configs: Any) -> ProfileResults:
        opts = self.options
        simulated = testing.active()
        # The simulated backend measures whatever backend= says, so no tool changes its metrics (a
        # KSCOPE_TOOL that names no tool is refused all the same, as it would be on a GPU).
        backend, metrics, note, chooser = (opts.backend, opts.metrics, None, None) if simulated else opts.for_call()
        tools.get_active_tool()
        _note_once(note)
        settings = opts.settings(self.files.engine_prefix(), backend, metrics)
        placement = _shard.place(opts.shard, opts.verbosity >= VerbosityLevel.INFO)
        if placement.launcher is not None:  # shard='auto' found one (a (index, count) option is in settings)
            settings.shard = placement.shard
        self.files.make_room(settings, placement.shard)
        if placement.launcher == "torchrun":
            _shard.use_local_gpu(settings, placement.local_rank)
        derive = derive_adapter(opts.derive_metric, opts.measured_metrics(settings, simulated), configs,
                                len(self.signature.names))
        work = _roofline.adapter(self.work, configs)
        returned: list[int] = []

        def body(config_index: int) -> None:
            if self.signature.call(self.func, configs[config_index]) is not None:
                returned.append(config_index)

        progress = _notebook.progress_display(opts.verbosity >= VerbosityLevel.INFO)
        try:
            core = self._measure(placement, configs, settings, body, derive, work, simulated, progress)
        except BackendError as e:
            if backend == "counters" and chooser is not None and not isinstance(e, CudaError):
                e.args = (f"{e}\n{tools.switch_back(chooser)}",)  # counters not permitted here: the way back
            raise
        finally:
            if progress is not None:
                progress.close()
        if returned:
            warnings.warn(
                f"Function '{self.func.__name__}' returns a value, but the return value for a function which is "
                f"decorated with kscope.analyze.kernel is ignored and instead the ProfileResults object is returned.",
                SweepWarning,
                stacklevel=3,
            )
        results = ProfileResults(core, configs, self.signature.names)
        if placement.gathers:
            with results_attached(results, "gathering the shards over torch.distributed"):
                results = _shard.gather(placement, results)
            if settings.output_prefix and results._core.shard_count():
                with results_attached(results, "writing the merged results"):
                    _core.write_merged(results._core, settings.output_prefix, settings.overwrite, settings.resume)
        call = self.files.count_call()  # this call's files are written: the next call gets the next {n}
        if opts.output_csv:
            with results_attached(results, "writing the output_csv files"):
                self.files.write_csv(results, call)
        return results

    def _measure(self, placement: _shard.Placement, configs: Any, settings: _core.Settings,
                 body: Callable[[int], None], derive: Any, work: Any, simulated: Any, progress: Any) -> _core.Results:
        """The engine's sweep; a failure with partial results carries them as a ProfileResults, and
        under torchrun a failing rank still joins the other ranks' gather."""
        opts = self.options
        try:
            return _core.profile(
                self.signature.names, engine_rows(configs, self.signature.names), settings, body, derive,
                combine_adapter(opts.combine_kernel_metrics), info_collector.engine_collectors(opts.info_collectors, configs),
                simulated, progress, *work,
            )
        except BaseException as e:
            if isinstance(e, (SweepError, SweepInterrupted)) and e.partial_results is not None:
                # The engine raised it holding its own Results: the user gets them as a ProfileResults.
                e.partial_results = ProfileResults(e.partial_results, configs, self.signature.names)  # type: ignore[arg-type]
            if placement.gathers:
                _shard.gather_failure(placement, e)
            raise

# analyze.kernel's options that line sampling honours; the others measure what lines does not.
LINE_OPTIONS = ("runs", "warmup_runs", "ignore_kernel_list", "cache_control", "clock_control", "thermal_mode",
                "thermal_wait", "thermal_cont", "thermal_timeout", "thermal_device", "verbosity", "throttled_runs")


def lines(
    _func: Callable[..., object] | None = None,
    *,
    configs: Iterable[Any] | None = None,
    sampling_period: int | None = None,
    sass_metrics: bool = True,
    runs: int = 1,
    warmup_runs: int = 1,
    ignore_kernel_list: Sequence[str] | None = None,
    cache_control: Literal["all", "none"] = "all",
    clock_control: Literal["none", "base"] = "none",
    verbosity: VerbosityLevel | int | Literal["silent", "info", "debug"] = VerbosityLevel.INFO,
    **options: Any,
) -> Any:
    """Which line is slow, and why: profiles the decorated function as ``kernel`` does while the GPU
    samples each warp's program counter, and returns a kscope.LineResults with one row per
    annotation x config x kernel x source line x stall reason (Nsight Compute's Source page, as a
    table), the SASS instructions behind it, and each line's executed instructions.

    Works as ``@lines``, ``@lines()`` and ``@lines(**options)``, with the configs and call forms of
    ``kernel``. Samples land on the line you wrote: CUDA C++ built with ``-lineinfo``, Triton kernels
    (line information is on unless TRITON_DISABLE_LINE_INFO=1); inlined helpers count on the calling
    line, their chain in InlinedFrom; code without line information (cuBLAS, cuDNN) by function and
    SASS offset. Only the recorded runs are sampled: raise ``runs`` for short kernels.

    sampling_period: a sample every 2**sampling_period SM cycles per SM, 5 to 31 (None: 10, about
        0.5 us at 2 GHz); smaller samples short kernels better, at more overhead.
    sass_metrics: also count, in a second pass of each run, each line's executed instructions and
        active threads (InstExecuted, ThreadEfficiencyPct), where the GPU supports it.
    runs, warmup_runs, ignore_kernel_list, cache_control, clock_control, verbosity, and
    thermal_mode, thermal_wait, thermal_cont, thermal_timeout, thermal_device, throttled_runs: as
    for ``kernel``. Other options of ``kernel`` do not apply (no metrics, no output files: save with
    ``LineResults.save``).
    """
    given = dict(options, runs=runs, warmup_runs=warmup_runs, ignore_kernel_list=ignore_kernel_list,
                 cache_control=cache_control, clock_control=clock_control, verbosity=verbosity)
    refused = [name for name in given if name in OPTIONS and name not in LINE_OPTIONS]
    if refused:
        raise ConfigError(
            f"kscope.analyze.lines does not take {refused[0]}=: line sampling measures program-counter samples "
            f"per source line, with the options {', '.join(LINE_OPTIONS)}; measure {refused[0]} with "
            f"@kscope.analyze.kernel in a profile of its own"
        )
    if sampling_period is not None and (isinstance(sampling_period, bool) or not isinstance(sampling_period, int)
                                        or not 5 <= sampling_period <= 31):
        raise ConfigError(f"sampling_period must be an integer from 5 to 31 (a sample every 2**sampling_period "
                          f"cycles), or None for {_core.default_sampling_period()}, not {sampling_period!r}")
    if not isinstance(sass_metrics, bool):
        raise ConfigError(f"sass_metrics must be True or False, not {sass_metrics!r}")
    checked = Options(**given)

    def decorate(func: Callable[..., object]) -> Callable[..., LineResults]:
        profiled = _LineSampledFunction(func, configs, checked, sampling_period or 0, sass_metrics)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> LineResults:
            call_configs = kwargs.pop("configs", None)
            return profiled(args, kwargs, call_configs)  # type: ignore[return-value]

        return wrapper

    return decorate if _func is None else decorate(_func)


class _LineSampledFunction(_ProfiledFunction):
    """A function profiled with line sampling: its configs as kernel's, its call the engine's profile_lines."""

    def __init__(self, func: Callable[..., object], configs: Iterable[Any] | None, options: Options,
                 period_log2: int, sass_metrics: bool) -> None:
        super().__init__(func, configs, options)
        self.period_log2 = period_log2
        self.sass_metrics = sass_metrics

    def _profile(self, configs: Any) -> LineResults:  # type: ignore[override]
        simulated = testing.active()
        settings = self.options.settings("", None, [])
        _point_at_tritons_nvdisasm()

        def body(config_index: int) -> None:
            self.signature.call(self.func, configs[config_index])

        progress = _notebook.progress_display(self.options.verbosity >= VerbosityLevel.INFO)
        try:
            core = _core.profile_lines(self.signature.names, engine_rows(configs, self.signature.names), settings,
                                       body, self.period_log2, self.sass_metrics, simulated, progress)
        finally:
            if progress is not None:
                progress.close()
        return LineResults(core, configs, self.signature.names)


def _point_at_tritons_nvdisasm() -> None:
    """The SASS text comes from nvdisasm: where neither KSCOPE_NVDISASM nor a CUDA toolkit gives one,
    the one Triton ships."""
    if os.environ.get("KSCOPE_NVDISASM") or any(
            os.access(os.path.join(d, "nvdisasm"), os.X_OK)
            for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/local/cuda/bin"] if d):
        return
    import importlib.util

    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return
    for root in spec.submodule_search_locations:
        candidate = os.path.join(root, "backends", "nvidia", "bin", "nvdisasm")
        if os.access(candidate, os.X_OK):
            os.environ["KSCOPE_NVDISASM"] = candidate
            return


_notes_shown: set[str] = set()


def _note_once(note: str | None) -> None:
    """Shows a note of the active tool (kscope.tools.tool_metrics) once per process."""
    if note is not None and note not in _notes_shown:
        _notes_shown.add(note)
        warnings.warn(note, ProfilerWarning, stacklevel=5)  # the user's call of the profiled function


@_plot_forms
def plot(
    filename: str | os.PathLike[str] | ProfiledFunction[...] = "plot.png",
    metric: str | None = None,
    *,
    title: str = "kscope results",
    ylabel: str | None = None,
    annotate_points: bool = False,
    show_aggregate: Literal["avg", "geomean"] | None = None,
    plot_type: Literal["line", "bar", "roofline"] = "line",
    plot_width: float = 6,
    plot_height: float = 4,
    row_panels: Sequence[str] | None = None,
    col_panels: Sequence[str] | None = None,
    x_keys: Sequence[str] | None = None,
    print_data: bool = False,
    variant_fields: Sequence[str] | None = None,
    variant_annotations: Sequence[str] | None = None,
    plot_callback: Callable[[Any], None] | None = None,
) -> ProfiledFunction[Any] | PlotDecorator:
    """Plots the results of a kscope.analyze.kernel function every time it is called.

    Put it above @kscope.analyze.kernel. It draws AvgValue of one metric (``metric``; needed
    when the results hold several, e.g. with derive_metric) per config, one line or bar group
    per annotation, writes ``filename`` (PNG, or any format matplotlib infers from the name)
    and returns the ProfileResults with the matplotlib Figure as its ``figure`` attribute (for
    further styling: ``results.figure.savefig(...)``). In a Jupyter notebook the figure is also
    shown inline.

    row_panels / col_panels: config parameters that split the figure into a grid of panels.
    x_keys: the parameters in the x labels (default: those not used for panels or variants).
    variant_fields + variant_annotations: split those annotations into one series per value
        of those fields (e.g. a Triton kernel per block size).
    show_aggregate: 'avg' or 'geomean' adds that aggregate of each series as a last x entry.
    annotate_points writes the values; print_data prints the plotted rows; plot_callback(fig)
    may edit the figure before it is saved.
    plot_type: 'line', 'bar', or 'roofline': the kernel's work= rows as points (arithmetic
        intensity, achieved TFLOP/s; annotate_points labels them with their config and Bound) under
        the DRAM roof and each FLOP kind's compute roof, at the rated and at the observed clocks,
        log-log (ProfileResults.plot_roofline() draws the same from results).
    """
    if callable(filename):  # used bare, as @plot
        return plot()(filename)
    style = _plot_style.Style(
        filename=filename, metric=metric, title=title, ylabel=ylabel,
        annotate_points=annotate_points, show_aggregate=show_aggregate, plot_type=plot_type,
        plot_width=plot_width, plot_height=plot_height, row_panels=row_panels,
        col_panels=col_panels, x_keys=x_keys, print_data=print_data,
        variant_fields=variant_fields, variant_annotations=variant_annotations,
        plot_callback=plot_callback,
    )

    def decorate(func: ProfiledFunction[_Params]) -> ProfiledFunction[_Params]:
        if not hasattr(func, "_kscope_profiled"):
            raise TypeError(
                f"@kscope.analyze.plot decorates a @kscope.analyze.kernel function; put it above "
                f"@kscope.analyze.kernel on {getattr(func, '__name__', func)!r}"
            )

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> ProfileResults:
            _plot_style.check_filename(style.filename)  # before the sweep: a bad path never costs one
            results = func(*args, **kwargs)
            with results_attached(results, "plotting"):
                results.figure = _plot.draw(results, style)
                if _notebook.in_notebook():
                    _notebook.show_figure(results.figure)
            return results

        wrapper._kscope_profiled = func._kscope_profiled  # type: ignore[attr-defined]
        return wrapper

    return decorate


@contextlib.contextmanager
def results_attached(results: ProfileResults, step: str) -> Iterator[None]:
    """A failure after the sweep (plotting, writing files) does not lose its results: the exception
    goes on, carrying them as its ``results`` attribute (and a note saying so)."""
    try:
        yield
    except Exception as e:
        e.results = results  # type: ignore[attr-defined]
        if hasattr(e, "add_note"):  # Python 3.11+
            e.add_note(f"kscope: the sweep completed before {step} failed; its ProfileResults are in this "
                       f"exception's .results")
        raise


def ignore_failures() -> contextlib.suppress:
    """A block whose exceptions are swallowed (e.g. warm-up code outside any annotation)."""
    return contextlib.suppress(Exception)
