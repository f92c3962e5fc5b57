# Type stub of the compiled extension kscope._core (python/src/module.cpp): a stub package, so that
# mypy reads it beside _core*.so (which it cannot read) and its submodule testing has a file of its own.
# tests/python/test_typing.py checks that it names exactly what the built module exports.
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from . import testing as testing

# A cell of an engine table: None is a missing value.
Cell = bool | int | float | str | None

__version__: str
MAX_RUNS_PER_CONFIG: int

class _Enum:
    # pybind11's enum_: int-like values with a name.
    name: str
    value: int
    __members__: ClassVar[dict[str, Any]]
    def __init__(self, value: int) -> None: ...
    def __int__(self) -> int: ...
    def __index__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Backend:
    # A backend by its engine name; each registered one is an attribute too (kscope's own below).
    from_metrics: ClassVar[Backend]
    cupti: ClassVar[Backend]
    events: ClassVar[Backend]
    counters: ClassVar[Backend]
    automatic: ClassVar[Backend]
    ncu: ClassVar[Backend]
    @property
    def name(self) -> str: ...
    @staticmethod
    def named(name: str) -> Backend: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class BackendDefinition:
    @property
    def backend(self) -> Backend: ...
    @property
    def name(self) -> str: ...
    @property
    def python_name(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def default_metrics(self) -> list[str]: ...

def backends() -> list[BackendDefinition]: ...

class CacheControl(_Enum):
    all: ClassVar[CacheControl]
    none: ClassVar[CacheControl]

class ClockControl(_Enum):
    none: ClassVar[ClockControl]
    base: ClassVar[ClockControl]

class ThermalMode(_Enum):
    automatic: ClassVar[ThermalMode]
    manual: ClassVar[ThermalMode]
    off: ClassVar[ThermalMode]

class ReplayMode(_Enum):
    kernel: ClassVar[ReplayMode]
    range: ClassVar[ReplayMode]

class Sampling(_Enum):
    fixed: ClassVar[Sampling]
    adaptive: ClassVar[Sampling]

class StopCriterion(_Enum):
    ci_halfwidth: ClassVar[StopCriterion]
    rsd: ClassVar[StopCriterion]

class ThrottledRuns(_Enum):
    keep: ClassVar[ThrottledRuns]
    exclude: ClassVar[ThrottledRuns]

class BoundThresholds:
    memory_pct: float
    compute_pct: float
    def __init__(self) -> None: ...

class InfoCollectorErrors(_Enum):
    warn: ClassVar[InfoCollectorErrors]
    raise_: ClassVar[InfoCollectorErrors]

class Verbosity(_Enum):
    quiet: ClassVar[Verbosity]
    info: ClassVar[Verbosity]
    debug: ClassVar[Verbosity]

class AdaptiveSampling:
    criterion: StopCriterion
    target_pct: float
    min_runs: int
    max_runs: int
    config_budget_s: float
    timeout_s: float
    def __init__(self) -> None: ...

class Settings:
    runs: int
    warmup_runs: int
    backend: Backend
    metrics: list[str]
    replay_mode: ReplayMode
    ncu_sections: list[str]
    cache_control: CacheControl
    clock_control: ClockControl
    thermal_mode: ThermalMode
    thermal_wait_c: float
    thermal_cont_c: float
    thermal_timeout_s: float
    sampling: Sampling
    adaptive: AdaptiveSampling
    throttled_runs: ThrottledRuns
    verbosity: Verbosity
    ignore_kernel_list: list[str]
    normalize_against: str
    info_collector_errors: InfoCollectorErrors
    stable_rsd_pct: float
    bound_thresholds: BoundThresholds
    energy_window_s: float
    output_prefix: str
    resume: bool
    fsync_interval_s: float
    overwrite: bool
    device: int
    shard: tuple[int, int] | None
    def __init__(self) -> None: ...

def settings_fields() -> list[tuple[str, str, str, str, str]]: ...

def summary_columns() -> list[tuple[str, str]]: ...
def sample_columns() -> list[tuple[str, str]]: ...
def console_columns() -> list[tuple[str, str]]: ...
def roofline_console_columns() -> list[tuple[str, str]]: ...
def default_metrics(backend: Backend) -> list[str]: ...
def energy_metrics() -> list[str]: ...
def is_energy_metric(name: str) -> bool: ...
def energy_efficiency(energy_j: float, flop: float, bytes: float) -> list[tuple[str, float, str]]: ...
def chosen_backend(settings: Settings) -> Backend: ...
def validate(settings: Settings, collectors: Sequence[tuple[str, str]]) -> None: ...
def check_collector_names(collectors: Sequence[str], parameters: Sequence[str]) -> None: ...

class Results:
    @property
    def axis_names(self) -> list[str]: ...
    def report_path(self) -> str: ...
    def measured_metrics(self) -> list[str]: ...
    def summary(self) -> tuple[dict[str, list[Cell]], list[int]]: ...
    def samples(self) -> tuple[dict[str, list[Cell]], list[int]]: ...
    def configs(self) -> list[tuple[Cell, ...]]: ...
    def write_json(self, path: str) -> None: ...
    def write_gbench_json(self, path: str) -> None: ...
    def write_all(self, prefix: str) -> None: ...
    def to_json(self) -> str: ...
    def shard(self) -> tuple[int, int] | None: ...
    def shard_count(self) -> int: ...
    def roofs(self, sm_clock_mhz: float, memory_clock_mhz: float) -> dict[str, Any]: ...
    def __len__(self) -> int: ...

def write_file(path: str, text: str) -> None: ...
def load_results(path: str) -> Results: ...
def results_from_json(text: str, name: str) -> Results: ...
def shard_from_environment() -> tuple[int, int, str, int] | None: ...
def merge(shards: Sequence[Results]) -> tuple[Results, list[str]]: ...
def merge_files(inputs: Sequence[str]) -> tuple[Results, list[str]]: ...

class CompareOptions:
    threshold_pct: float
    alpha: float
    min_samples: int
    max_rsd_pct: float
    confidence: float
    resamples: int
    seed: int
    def __init__(self) -> None: ...

def compare(
    baseline: Results, candidate: Results, options: CompareOptions, directions: Mapping[str, str]
) -> tuple[dict[str, list[Cell]], list[int | None], list[int | None], list[str]]: ...
def profile(
    names: Sequence[str],
    rows: list[Any],
    settings: Settings,
    body: Callable[..., Any],
    derive: Callable[..., Any] | None,
    combine: Callable[[float, float], float] | None,
    collectors: Sequence[tuple[str, str, Callable[..., Any]]],
    simulated: testing.SimulatedBackend | None,
    progress: Callable[[str, dict[str, Any]], Any] | None = None,
    work: Callable[[str, int], tuple[float, float, str, bool] | None] | None = None,
    work_annotations: Sequence[str] = ...,
) -> Results: ...

class Region:
    def __init__(self, arg0: str) -> None: ...
    def close(self) -> None: ...
    def mark_failed(self, arg0: str) -> None: ...

def list_metrics(chip: str = "") -> list[dict[str, Any]]: ...
def describe_metric(name: str, chip: str = "") -> dict[str, str]: ...
def count_passes(metrics: Sequence[str], chip: str = "") -> int: ...
def sol_metrics() -> list[str]: ...
def bottleneck_rule() -> str: ...
def speed_of_light(arg0: Results) -> dict[str, list[Cell]]: ...
def doctor() -> tuple[str, str]: ...
def geometric_mean(arg0: Sequence[float]) -> float: ...
