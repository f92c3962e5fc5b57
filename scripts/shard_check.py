"""Issue 18's GPU check: a sweep of real torch kernels measured by one process and by a two-process
torchrun (shard='auto'; on a one-GPU machine both ranks share the GPU, so this checks correctness,
not speed-up). Run by scripts/shard_check.sh:

    python3 shard_check.py single OUT_DIR     -> OUT_DIR/single.json
    torchrun --nproc-per-node=2 shard_check.py sharded OUT_DIR
                                              -> OUT_DIR/merged.json (rank 0), OUT_DIR/sharded_*files
"""

import sys

import torch

import kscope

SIZES = [1 << 20, 1 << 22, 1 << 24, 1 << 26]  # float32 elements: 4 MiB .. 256 MiB per tensor
CONFIGS = [(n, op) for n in SIZES for op in ("add", "mul")]


def main(mode, out):
    tensors = {}

    @kscope.analyze.kernel(configs=CONFIGS, runs=30, backend="cupti", verbosity="silent",
                           shard="auto" if mode == "sharded" else None,
                           output_prefix=f"{out}/sharded_" if mode == "sharded" else None)
    def elementwise(n, op):
        if n not in tensors:
            tensors[n] = (torch.rand(n, device="cuda"), torch.rand(n, device="cuda"))
        a, b = tensors[n]
        with kscope.annotate(op):
            torch.add(a, b) if op == "add" else torch.mul(a, b)

    results = elementwise()
    if mode == "single":
        results.save(f"{out}/single.json")
    elif results._core.shard_count():
        results.save(f"{out}/merged.json")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
