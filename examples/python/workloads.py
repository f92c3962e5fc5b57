"""The GPU work the examples measure, written with PyTorch: swap in your own kernels.

Inputs are made outside the measured regions and cached, so a region holds only the kernel.
(kscope's CPU tests replace this module with one that launches simulated kernels.)
"""

import functools

import torch

DTYPES = (torch.float16, torch.bfloat16)
DEVICE = "cuda"  # where the examples' tensors live


@functools.lru_cache(maxsize=2)
def vectors(n):
    return torch.rand(n, device="cuda"), torch.rand(n, device="cuda")


def add(x, y):
    return x + y


def split_add(x, y, pieces):
    """x + y as `pieces` kernels, each on a slice."""
    return [xs + ys for xs, ys in zip(x.chunk(pieces), y.chunk(pieces))]


@functools.lru_cache(maxsize=2)
def matrices(n, dtype=torch.float16):
    return torch.randn(n, n, device="cuda", dtype=dtype), torch.randn(n, n, device="cuda", dtype=dtype)


def matmul(a, b):
    return a @ b
