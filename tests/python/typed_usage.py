"""Typed user code of kscope's public API: mypy must accept it (tests/python/test_typing.py).
Type-checked only, never run."""

from __future__ import annotations

import pandas as pd

import kscope
import kscope.testing
from kscope.exceptions import NCUNotAvailableError, ProfilerException


@kscope.analyze.plot("gemm.png", plot_type="bar", show_aggregate="geomean", row_panels=kscope.row_panel("n"))
@kscope.analyze.kernel(configs=[(1,), (2,)], runs=5, clock_control="base", backend="counters",
                       thermal_mode="off", throttled_runs="exclude", adaptive={"criterion": "rsd"})
def gemm(n: int) -> None:
    with kscope.annotate("gemm"):
        pass


@kscope.annotate("softmax", ignore_failures=True)
def softmax(x: float) -> float:
    return x


@kscope.analyze.plot("roofline.png", plot_type="roofline", annotate_points=True)
@kscope.analyze.kernel(configs=[(1024,)], work={"copy": lambda n: kscope.Work(bytes=8 * n)},
                       bound_thresholds={"memory_pct": 70})
def copy(n: int) -> None:
    with kscope.annotate("copy"):
        pass


def gemm_work(n: int) -> kscope.Work | None:
    return kscope.Work(bytes=6 * n * n, flops=2 * n**3, kind="fp16", tensor_cores=True)


def report() -> None:
    with kscope.testing.simulated_backend() as sim:
        sim.launch("my_kernel", 100.0)
        count: int = sim.flush_count
        results: kscope.ProfileResults = gemm()
    frame: pd.DataFrame = results.to_dataframe()
    rows: int = len(results)
    report_path: str | None = results.report_path
    results.save("results.json")
    verdicts = kscope.compare("base.json", results, threshold_pct=5.0, directions={"Gflops": "higher"})
    loaded: kscope.ProfileResults = kscope.load("results.json")
    value: float | None = softmax(1.0)
    kscope.activate(kscope.Tool.NCU)
    tool: kscope.Tool | None = kscope.get_active_tool()
    kscope.deactivate()
    health = kscope.doctor(verbose=False)
    passes: int = kscope.count_passes(["sm__cycles_elapsed.avg"], chip="gh100")
    metrics: list[str] = kscope.sol_metrics()
    roofs: pd.DataFrame = results.roofs()
    figure = results.plot_roofline("roofline.svg", annotate_points=True)
    kscope.analyze.kernel(gemm, work=gemm_work)
    try:
        kscope.analyze.kernel(gemm, runs=3)
    except (NCUNotAvailableError, ProfilerException) as e:
        print(e, frame, rows, report_path, verdicts, loaded, value, tool, health, passes, metrics, count, roofs, figure)
