"""Why is it slow, without counters: declared work (kscope.Work, the work= option), the device's
roofs as a DataFrame, and the roofline plot. The engine computes the roofline columns (docs/roofline.md: "Why
is it slow, without counters")."""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union

import numpy as np
import pandas as pd

from . import _core
from .errors import ConfigError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ._plot_style import Style

Precision = Literal["fp64", "fp32", "fp16", "bf16", "fp8"]
_PRECISIONS = tuple(_core.enum_names()["Precision"])


@dataclass(frozen=True)
class Work:
    """What a region must do at one config, as its author knows it: ``bytes`` it must move
    between DRAM and the SMs (reads plus writes, each byte once: what it costs with a perfect
    cache; a copy of n floats: 8n), ``flops`` it must do (a fused multiply-add counts 2; an n x n x n
    GEMM: 2n^3), and the arithmetic they are done in: ``kind`` 'fp64', 'fp32', 'fp16', 'bf16' or
    'fp8', on the tensor cores when ``tensor_cores`` (fp32 there is TF32; fp8 exists only there).

        kscope.Work(bytes=8 * n, flops=0)                                  # a copy of n floats
        kscope.Work(bytes=6 * n * n, flops=2 * n**3, kind="fp16", tensor_cores=True)  # an fp16 GEMM
    """

    bytes: float = 0.0
    flops: float = 0.0
    kind: Precision = "fp32"
    tensor_cores: bool = False

    def __post_init__(self) -> None:
        for field, what in (("bytes", "the bytes the region must move between DRAM and the SMs (reads plus writes)"),
                            ("flops", "the floating-point operations the region must do (a fused multiply-add "
                                      "counts 2)")):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not _finite(value) or value < 0:
                raise ConfigError(f"kscope.Work {field}={_shown(value)}: give {what}, a finite number >= 0 (at most "
                                  f"about 1.8e308, a float's range)")
        if self.kind not in _PRECISIONS:
            hint = " (TF32 is fp32 on tensor cores: kind='fp32', tensor_cores=True)" if self.kind == "tf32" else ""
            raise ConfigError(f"kscope.Work kind={self.kind!r}: give one of {', '.join(map(repr, _PRECISIONS))}{hint}")
        if not isinstance(self.tensor_cores, bool):
            raise ConfigError(f"kscope.Work tensor_cores={self.tensor_cores!r}: give True or False")
        if self.bytes == 0 and self.flops == 0:
            raise ConfigError("kscope.Work has neither bytes nor FLOPs: declare at least one, or return None from the "
                              "work function for a region without declared work")
        if self.kind == "fp8" and not self.tensor_cores:
            raise ConfigError("kscope.Work kind='fp8': fp8 FLOPs run on tensor cores only: add tensor_cores=True")


def _finite(value: numbers.Real) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond a float's range
        return False


def _shown(value: Any, limit: int = 60) -> str:
    """A value in a message, cut short: an integer of thousands of digits is named by its size."""
    try:
        text = repr(value)
    except ValueError:  # beyond the digits Python converts to text
        return f"an integer of {value.bit_length()} bits"
    return _cut(text, limit)


def _cut(text: str, limit: int = 60) -> str:
    """Text in a message, at most about `limit` characters: a message names a value, it does not
    repeat a megabyte of it."""
    return text if len(text) <= limit else f"{text[:limit - 20]}... ({len(text)} characters)"


WorkFunction = Callable[..., Union[Work, None]]
WorkOption = Union[WorkFunction, Mapping[str, WorkFunction], None]


def _accepts(func: Callable[..., Any], n: int) -> bool:
    try:
        inspect.signature(func).bind(*range(n))
    except TypeError:
        return False
    except ValueError:  # a builtin without a signature: the call tells
        pass
    return True


def check_option(work: WorkOption, n_params: int) -> dict[str, WorkFunction] | WorkFunction | None:
    """The work= option, checked at decoration: a function of the config's values, or a mapping of
    annotation names to such functions."""
    if work is None:
        return None
    functions: list[tuple[str | None, Any]] = list(work.items()) if isinstance(work, Mapping) else [(None, work)]
    for name, fn in functions:
        where = "work" if name is None else f"work[{name!r}]"
        if isinstance(work, Mapping) and not (isinstance(name, str) and name):
            raise ConfigError(f"work maps annotation names to functions; {name!r} is not an annotation name")
        if not callable(fn):
            raise ConfigError(f"{where} must be a function of the config's values returning a kscope.Work "
                              f"(e.g. work=lambda n: kscope.Work(bytes=8 * n)), or a dict of them per annotation; "
                              f"not {fn!r}")
        if not _accepts(fn, n_params):
            raise ConfigError(f"{where} is called with the {n_params} config values, as the profiled function is, but "
                              f"{getattr(fn, '__name__', fn)!s}{inspect.signature(fn)} does not accept them; give it "
                              f"{n_params} parameters, or *args")
    if isinstance(work, Mapping):
        return {str(name): fn for name, fn in functions}
    return work


def adapter(work: Any, configs: Any) -> tuple[Callable[[str, int], Any] | None, list[str]]:
    """The engine's work callable, (annotation, config index) -> None or (bytes, flops, kind,
    tensor_cores), and the annotations it names (empty: every one)."""
    if work is None:
        return None, []
    per_annotation = isinstance(work, Mapping)

    def engine_work(annotation: str, config_index: int) -> Any:
        fn = work.get(annotation) if per_annotation else work
        if fn is None:
            return None
        out = fn(*configs[config_index])
        if out is None:
            return None
        if not isinstance(out, Work):
            name = getattr(fn, "__name__", "work")
            raise ConfigError(f"work function {name}() returned {out!r} for annotation {annotation!r}: return a "
                              f"kscope.Work(bytes=..., flops=..., kind=...), or None for no declared work")
        return float(out.bytes), float(out.flops), out.kind, out.tensor_cores

    return engine_work, (list(work) if per_annotation else [])


def roofs(core: _core.Results, samples: pd.DataFrame) -> pd.DataFrame:
    """One row per roof of the session's device (the DRAM bandwidth, then each FLOP kind it has):
    its value at the rated clocks and at the mean of the clocks observed during the samples (the
    raw samples' DataFrame)."""
    observed = [float(samples[c].mean()) if len(samples) else math.nan for c in ("SMClockMHz", "MemoryClockMHz")]
    rated = core.roofs(math.nan, math.nan)
    seen = core.roofs(*observed)
    rows = [("DRAM", "GB/s", rated["dram_gbps"], seen["dram_gbps"], rated["memory_clock_mhz"],
             seen["memory_clock_mhz"])]
    for kind, value in rated["tflops"].items():
        if not math.isnan(value):
            rows.append((kind, "TFLOP/s", value, seen["tflops"][kind], rated["sm_clock_mhz"], seen["sm_clock_mhz"]))
    return pd.DataFrame(rows, columns=["Roof", "Unit", "AtRatedClocks", "AtObservedClocks", "RatedClockMHz",
                                       "ObservedClockMHz"])


def draw(core: _core.Results, df: pd.DataFrame, parameters: list[str], style: Style) -> Figure:
    """The roofline of the results `core` (their summary DataFrame `df`, with the config columns
    `parameters`): one point per (annotation, config) with declared FLOPs at (arithmetic
    intensity, achieved TFLOP/s), its 95% interval as a bar, under the DRAM roof and the compute
    roof of each FLOP kind, at the rated clocks (solid) and at the observed ones (dashed); log-log.
    Writes style.filename and returns the Figure."""
    from matplotlib.figure import Figure

    points = df[df["Bound"].notna() & (df["WorkFLOPs"] > 0) & np.isfinite(df["ArithmeticIntensity"])] \
        if "Bound" in df else df.iloc[0:0]
    if points.empty:
        raise ConfigError("nothing to draw on a roofline: no row has declared FLOPs and a known compute roof. Give "
                          "@kscope.analyze.kernel work= a function returning kscope.Work(bytes=..., flops=..., "
                          "kind=...) (a region without FLOPs, a copy, has no place on it: its DRAMRoofPct says how "
                          "close it comes to the DRAM roof)")
    x_fields = list(style.x_keys) if style.x_keys is not None else parameters
    for f in x_fields:
        if f not in parameters:
            raise ConfigError(f"Field '{f}' is not a config parameter. Available fields: {parameters}")
    fig = Figure(figsize=(max(style.plot_width, 8), max(style.plot_height, 6)), layout="constrained")
    ax = fig.subplots()
    ax.set_xscale("log")
    ax.set_yscale("log")
    lowest_x = points["ArithmeticIntensity"].min() / 4
    highest_x = points["ArithmeticIntensity"].max() * 4
    rated = core.roofs(math.nan, math.nan)
    observed_dram = float(points["DRAMRoofGBps"].mean())

    kinds = list(dict.fromkeys(points["WorkKind"].tolist()))
    # From well below to well above each kind's ridge point (where its two roofs meet), and the points.
    ridges = [rated["tflops"][k] * 1e3 / rated["dram_gbps"] for k in kinds]
    ridges = [r for r in ridges if math.isfinite(r) and r > 0]
    xs = np.geomspace(min([lowest_x, *(r / 30 for r in ridges)]), max([highest_x, *(r * 30 for r in ridges)]), 200)
    for kind in kinds:
        rows = points[points["WorkKind"] == kind]
        for label, peak, dram, line in (("rated", rated["tflops"][kind], rated["dram_gbps"], "-"),
                                        ("observed", float(rows["ComputeRoofTFLOPs"].mean()), observed_dram, "--")):
            if math.isnan(peak) or math.isnan(dram):
                continue
            roof = np.minimum(peak, dram / 1e3 * xs)  # GB/s x FLOP/byte = GFLOP/s; TFLOP/s below
            ax.plot(xs, roof, line, color="0.25" if line == "-" else "0.55", linewidth=1.2,
                    label=f"{kind} roof at {label} clocks ({peak:.4g} TFLOP/s, {dram:.4g} GB/s)")
            if line == "-":
                ax.annotate(f"{kind} {peak:.4g} TFLOP/s", (xs[-1], peak), textcoords="offset points",
                            xytext=(-4, 4), ha="right", fontsize=8)
    for annotation, rows in points.groupby("Annotation", sort=False):
        x = rows["ArithmeticIntensity"].to_numpy(dtype=float)
        y = rows["AchievedTFLOPs"].to_numpy(dtype=float)
        pct = rows["ComputeRoofPct"].to_numpy(dtype=float)
        low = y * rows["ComputeRoofPct_CI95_Lower"].to_numpy(dtype=float) / pct
        high = y * rows["ComputeRoofPct_CI95_Upper"].to_numpy(dtype=float) / pct
        # Without spread the bounds are the value itself, give or take a rounding: never below 0.
        spread = np.clip(np.nan_to_num(np.array([y - low, high - y]), nan=0.0), 0.0, None)
        ax.errorbar(x, y, yerr=spread, fmt="o", capsize=3, label=str(annotation))
        if style.annotate_points:
            for (_, row), xi, yi in zip(rows.iterrows(), x, y):
                text = ", ".join(f"{f}={row[f]}" for f in x_fields)
                ax.annotate(f"{text}: {row['Bound']}" if text else str(row["Bound"]), (xi, yi),
                            textcoords="offset points", xytext=(5, -10), fontsize=7)
    ax.set_xlabel("arithmetic intensity (declared FLOP per declared DRAM byte)")
    runs = int(points["NumRuns"].max())
    ax.set_ylabel(style.ylabel or f"achieved TFLOP/s (declared FLOPs / duration, mean of {runs} runs)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"{style.title}\n{core.headline(with_machine=True)}")
    if style.print_data:
        print(points[["Annotation", *parameters, "ArithmeticIntensity", "AchievedTFLOPs", "ComputeRoofPct",
                      "DRAMRoofPct", "Bound"]].to_string(index=False))
    if style.plot_callback:
        style.plot_callback(fig)
    if style.filename is not None:
        fig.savefig(style.filename, bbox_inches="tight")
    return fig
