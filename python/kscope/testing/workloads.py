"""Small GPU workloads for trying kscope and for its examples and docs (``kscope.testing.workloads``):
PyTorch kernels on a CUDA GPU; on the simulated backend (``KSCOPE_SIMULATED=1``, or inside
``kscope.testing.simulated_backend()``) simulated kernels instead, whose durations grow with the work
as a GPU's would (no GPU, driver or torch needed; the numbers are modelled, not measured)::

    from kscope.testing import workloads

    @kscope.analyze.kernel(configs=[1 << 20, 1 << 24])
    def add(n):
        x, y = workloads.vectors(n)      # made outside the measured region (and cached)
        with kscope.annotate("add"):
            workloads.add(x, y)          # one kernel

Each function decides when it is called: simulated while a simulated backend is active.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import testing

__all__ = ["simulated", "launch", "SimulatedDtype", "vectors", "add", "split_add", "matrices", "matmul", "DEVICE", "DTYPES"]


def simulated() -> bool:
    """Whether the work is simulated here: a simulated backend is active (KSCOPE_SIMULATED=1, or a
    kscope.testing.simulated_backend() block)."""
    return testing.active() is not None


def launch(kernel_name: str, duration_ns: float, gap_ns: float = 0.0) -> None:
    """A simulated kernel of `duration_ns`, launched now on the active simulated backend."""
    backend = testing.active()
    if backend is None:
        raise RuntimeError("workloads.launch() launches simulated kernels: set KSCOPE_SIMULATED=1 or call it "
                           "inside a kscope.testing.simulated_backend() block")
    backend.launch(kernel_name, duration_ns, gap_ns)


class SimulatedDtype:
    """A dtype of the simulated work: its name and element size, as torch's dtypes have."""

    def __init__(self, name: str, itemsize: int):
        self.name, self.itemsize = name, itemsize

    def __repr__(self) -> str:
        return f"simulated.{self.name}"


_SIMULATED_DTYPES = (SimulatedDtype("float16", 2), SimulatedDtype("bfloat16", 2))


def __getattr__(name: str) -> Any:
    """DEVICE (where tensors live: "cuda", or "cpu" when simulated) and DTYPES (the half-precision
    dtypes the examples sweep), as they are where they are read."""
    if name == "DEVICE":
        return "cpu" if simulated() else "cuda"
    if name == "DTYPES":
        if simulated():
            return _SIMULATED_DTYPES
        import torch

        return (torch.float16, torch.bfloat16)
    raise AttributeError(f"module 'kscope.testing.workloads' has no attribute {name!r}")


# Simulated durations: a kernel takes 2 us to start, then its bytes at 1 TB/s (add) or its FLOPs at
# 500 TFLOP/s (matmul).
def _add_ns(elements: float) -> float:
    return 2000.0 + 0.01 * elements


@functools.lru_cache(maxsize=2)
def _cuda_vectors(n: int) -> tuple[Any, Any]:
    import torch

    return torch.rand(n, device="cuda"), torch.rand(n, device="cuda")


def vectors(n: int) -> tuple[Any, Any]:
    """Two vectors of n float32 elements (the last two sizes asked for are kept)."""
    return (n, n) if simulated() else _cuda_vectors(n)


def add(x: Any, y: Any) -> Any:
    """x + y: one kernel."""
    if simulated():
        return launch("vectorized_elementwise_kernel", _add_ns(x))
    return x + y


def split_add(x: Any, y: Any, pieces: int) -> Any:
    """x + y as `pieces` kernels, each on a slice (simulated: 3 us apart, a launch's gap)."""
    if simulated():
        for k in range(pieces):
            launch("vectorized_elementwise_kernel", _add_ns(x / pieces), gap_ns=3000.0 if k else 0.0)
        return None
    return [xs + ys for xs, ys in zip(x.chunk(pieces), y.chunk(pieces))]


@functools.lru_cache(maxsize=2)
def _cuda_matrices(n: int, dtype: Any) -> tuple[Any, Any]:
    import torch

    dtype = torch.float16 if dtype is None else dtype
    return torch.randn(n, n, device="cuda", dtype=dtype), torch.randn(n, n, device="cuda", dtype=dtype)


def matrices(n: int, dtype: Any = None) -> tuple[Any, Any]:
    """Two n x n matrices of `dtype` (default float16; the last two asked for are kept)."""
    return (n, n) if simulated() else _cuda_matrices(n, dtype)


def matmul(a: Any, b: Any) -> Any:
    """a @ b: one GEMM (cuBLAS may split one into two kernels)."""
    if simulated():
        return launch("sm90_xmma_gemm_f16f16", 5000.0 + 2.0 * a**3 / 500e3)
    return a @ b
