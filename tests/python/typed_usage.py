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


@kscope.analyze.plot
@kscope.analyze.kernel
def scale(n: int, factor: float = 2.0, *, dtype: str = "fp32") -> int:
    return n


@kscope.analyze.kernel()
def add(n: int) -> None:
    pass


def wrap(n: int) -> None:
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
    one: kscope.ProfileResults = scale(1024, 0.5, dtype="fp16")
    swept: kscope.ProfileResults = scale(configs=((n, 1.0) for n in (1, 2)))
    swept_frame: pd.DataFrame = add(configs=[1, 2]).to_dataframe()
    plotted = kscope.analyze.plot("add.png", "cupti__kernel_duration", title="add")(add)(4096)
    if plotted.figure is not None:
        plotted.figure.savefig("add.svg")
    wrapped: kscope.analyze.ProfiledFunction[[int]] = kscope.analyze.kernel(wrap, runs=3)
    name: str = wrapped.__name__
    print(one, swept, swept_frame, wrapped(1), name)
    try:
        kscope.analyze.kernel(gemm, runs=3)
    except (NCUNotAvailableError, ProfilerException) as e:
        print(e, frame, rows, report_path, verdicts, loaded, value, tool, health, passes, metrics, count, roofs, figure)


def race_and_evaluate() -> None:
    """kscope.tune and kscope.evaluate take the option table's options they do not refuse, typed as
    analyze.kernel types them."""
    race = kscope.tune(unprofiled_pair, [(1,), (2,)], runs=50, first_runs=5, backend="events", thermal_mode="manual",
                       thermal_wait=10.0, shard=(0, 2), fsync_interval_s=0.5, verbosity="silent")
    winner = race.winner
    evaluation = kscope.evaluate(negate, negate, lambda config, seed: [config["n"]], [{"n": 1}], runs=10, rtol=1e-3,
                                 work=lambda config: kscope.Work(bytes=8), bound_thresholds={"memory_pct": 70},
                                 cache_control="none", thermal_timeout=60.0, overwrite=True)
    verdicts: pd.DataFrame = evaluation.to_dataframe()
    print(winner, verdicts)


def unprofiled_pair(n: int) -> None:
    pass


def negate(x: float) -> float:
    return -x
