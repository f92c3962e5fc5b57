"""Is ModelNew really faster than Model? A KernelBench-style problem checked with kscope.evaluate.

KernelBench gives a reference `Model` with its inputs (`get_inputs`); a candidate `ModelNew` must
compute the same and be faster. kscope.evaluate runs both on fresh inputs every run, in
interleaved pairs, times each over all the GPU work it causes, compares the outputs and reports
what a fair harness would never see (docs/evaluate.md). A third candidate caches its answer the
way published harnesses were fooled, and comes out incorrect.

Run: python examples/python/evaluate_kernelbench.py
"""

import torch

import kscope
from kscope.testing import workloads


class Model(torch.nn.Module):
    """The reference: a GEMM, a bias and a ReLU, three kernels."""

    def forward(self, a, b, bias):
        return torch.relu(a @ b + bias)


class ModelNew(torch.nn.Module):
    """The candidate: the bias in the GEMM's epilogue (addmm), the ReLU in place."""

    def forward(self, a, b, bias):
        return torch.addmm(bias, a, b).relu_()


class ModelCached(torch.nn.Module):
    """A cheat: computes once per input address and hands the answer back after."""

    def __init__(self):
        super().__init__()
        self.answers = {}

    def forward(self, a, b, bias):
        key = a.data_ptr()
        if key not in self.answers:
            self.answers[key] = torch.relu(a @ b + bias)
        return self.answers[key]


def get_inputs(config, seed):
    """Fresh inputs from a seed, KernelBench's get_inputs() made reproducible."""
    g = torch.Generator(device=workloads.DEVICE).manual_seed(seed)
    n = config["n"]
    return tuple(torch.randn(*shape, device=workloads.DEVICE, generator=g) for shape in ((n, n), (n, n), (n,)))


def main():
    configs = [{"n": 256}, {"n": 1024}]
    reference = Model()
    honest = kscope.evaluate(ModelNew(), reference, get_inputs, configs, runs=20)
    print(honest)
    cached = kscope.evaluate(ModelCached(), reference, get_inputs, configs, runs=20)
    print(cached)
    return honest, cached


if __name__ == "__main__":
    main()
