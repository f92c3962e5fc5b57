"""Typed user code with mistakes: mypy must report exactly the lines marked `# expect-error`
(tests/python/test_typing.py). Type-checked only, never run."""

from __future__ import annotations

import kscope
import kscope.testing


@kscope.analyze.kernel(clock_control="locked")  # expect-error
def gemm(n: int) -> None:
    with kscope.annotate(42):  # expect-error
        pass


@kscope.analyze.kernel(runs=3)
def copy(n: int, *, dtype: str = "fp32") -> float:
    return 0.0


@kscope.analyze.plot  # expect-error
def unprofiled(n: int) -> None:
    pass


def unprofiled_too(n: int) -> None:
    pass


def misuse() -> None:
    kscope.analyze.kernel(kscope.analyze.plot("p.png")(unprofiled_too))  # expect-error
    copy.to_dataframe()  # expect-error
    copy(1, dtypes="fp16")  # expect-error
    copy("1")  # expect-error
    copy(configs=3)  # expect-error
    seconds: float = copy(1)  # expect-error
    copy(1).figure.savefig("p.png")  # expect-error
    kscope.analyze.kernel(runs="3")  # expect-error
    kscope.analyze.kernel(copy, configs=[1], bogus=True)  # expect-error
    kscope.analyze.kernel(gemm, backend="nsight")  # expect-error
    kscope.analyze.plot("p.png", plot_type="pie")  # expect-error
    kscope.tune(unprofiled, [1], runs="3")  # expect-error
    kscope.tune(unprofiled, [1], metrics=["sm__throughput.avg.pct_of_peak_sustained_elapsed"])  # expect-error
    kscope.tune(unprofiled, [1], backend="nsight")  # expect-error
    kscope.evaluate(unprofiled, unprofiled, lambda config, seed: config, resume=True)  # expect-error
    kscope.evaluate(unprofiled, unprofiled, lambda config, seed: config, cache_control="warm")  # expect-error
    results = kscope.load("results.json")
    rows: str = len(results)  # expect-error
    results.save(3)  # expect-error
    kscope.compare(results, results, directions={"Gflops": "up"})  # expect-error
    kscope.activate("ncu")  # expect-error
    with kscope.testing.simulated_backend() as sim:
        sim.launch("k", duration_ns="100")  # expect-error
    kscope.count_passes("sm__cycles_elapsed.avg", chip=0)  # expect-error
    kscope.Work(bytes=1, kind="tf32")  # expect-error
    results.plot_roofline(title=3)  # expect-error
    print(rows, seconds)
