"""A deterministic sweep (durations from the config and its call count only) measured shard by
shard, for the sharding tests. Run as a script under a launcher (torchrun, or with KSCOPE_SHARD):

    python3 sharded_workload.py OUT_DIR [fail-shard-1] [user-group]

each process profiles it with shard='auto' and saves what its call returned as
OUT_DIR/rank-<RANK or KSCOPE_SHARD index>.json, or the error it raised as ...error.txt. With
user-group the script starts its own process group first, which kscope must use and leave alone.
"""

import os
import sys
from pathlib import Path

import kscope

CONFIGS = [(n, dtype) for n in (1, 2, 3, 4, 5) for dtype in ("f16", "f32")]


def profiled(sim, shard=None, output_prefix=None, fail_config=None, **options):
    per_config = {}

    @kscope.analyze.kernel(configs=CONFIGS, runs=4, shard=shard, output_prefix=output_prefix, verbosity=0,
                           normalize_against="base", **options)
    def sweep(n, dtype):
        k = per_config.get((n, dtype), 0)
        per_config[(n, dtype)] = k + 1
        if (n, dtype) == fail_config:
            raise RuntimeError("out of memory")
        launch(sim, n, dtype, k)

    return sweep


def launch(sim, n, dtype, k):
    """Config (n, dtype)'s two annotated kernels at its k-th call (from 0): their durations depend
    on nothing else."""
    scale = 2.0 if dtype == "f32" else 1.0
    with kscope.annotate("base"):
        sim.launch("base_kernel", 50.0 * n * scale + k % 3)
    with kscope.annotate("work"):
        sim.launch("work_kernel", 100.0 * n * scale + (7 * k) % 5)


if __name__ == "__main__":
    out = Path(sys.argv[1])
    rank = os.environ.get("RANK") or os.environ["KSCOPE_SHARD"].split("/")[0]
    fail = ("fail-shard-1" in sys.argv[2:]) and rank == "1"
    if "user-group" in sys.argv[2:]:
        import torch.distributed as dist

        dist.init_process_group("gloo")
    with kscope.testing.simulated_backend() as sim:
        try:
            results = profiled(sim, "auto", os.environ.get("SHARD_PREFIX"), fail_config=CONFIGS[1] if fail else None)()
        except Exception as e:  # the test reads it
            attached = "\n[this rank's results attached]" if getattr(e, "results", None) is not None else ""
            (out / f"rank-{rank}.error.txt").write_text(f"{type(e).__name__}: {e}{attached}")
            sys.exit(3)
    if "user-group" in sys.argv[2:] and not dist.is_initialized():
        sys.exit("kscope destroyed the program's own process group")
    results.save(out / f"rank-{rank}.json")
    if "user-group" in sys.argv[2:]:
        # As a program should: a gloo group left to the interpreter's exit can abort the process
        # ("terminate called without an active exception") when its peers exit first.
        dist.barrier()
        dist.destroy_process_group()
