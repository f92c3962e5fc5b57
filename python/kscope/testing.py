"""The simulated backend, for testing code that uses kscope without a GPU. It measures nothing.

    with kscope.testing.simulated_backend() as sim:
        @kscope.analyze.kernel(configs=[(1,), (2,)])
        def f(n):
            with kscope.annotate("k"):
                sim.launch("my_kernel", 100.0 * n)  # a "kernel" of 100*n ns, launched now
        df = f().to_dataframe()

Inside the block every profiled call, whatever its backend=, runs on the simulated backend; its
rows say "test (simulated)" in the Backend column and its metric is test__kernel_duration.
Outside the block nothing can reach it. kscope.evaluate_many inside the block measures in its worker
processes, each candidate on a simulated backend of its own, which the problems' code reaches with
``kscope.testing.active()``.
"""

from __future__ import annotations

from collections.abc import Iterator

import contextlib

from ._core.testing import SimulatedBackend

__all__ = ["SimulatedBackend", "simulated_backend"]

_active: list[SimulatedBackend] = []


@contextlib.contextmanager
def simulated_backend() -> Iterator[SimulatedBackend]:
    """Routes the profiled calls in this block to a fresh SimulatedBackend, which it yields."""
    backend = SimulatedBackend()
    _active.append(backend)
    try:
        yield backend
    finally:
        _active.remove(backend)


def active() -> SimulatedBackend | None:
    """The simulated backend of the innermost simulated_backend() block, or None."""
    return _active[-1] if _active else None
