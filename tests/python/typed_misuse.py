"""Typed user code with mistakes: mypy must report exactly the lines marked `# expect-error`
(tests/python/test_typing.py). Type-checked only, never run."""

from __future__ import annotations

import kscope
import kscope.testing


@kscope.analyze.kernel(clock_control="locked")  # expect-error
def gemm(n: int) -> None:
    with kscope.annotate(42):  # expect-error
        pass


def misuse() -> None:
    kscope.analyze.kernel(gemm, backend="nsight")  # expect-error
    kscope.analyze.plot("p.png", plot_type="pie")  # expect-error
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
    print(rows)
