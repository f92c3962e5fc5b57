"""Problem directories for kscope.evaluate_many's tests, written into a temporary directory: a
KernelBench problem (torch on the CPU) and GPU MODE problems (NumPy) whose candidates run on the
simulated backend in the workers (kscope.testing.active()), honest ones and ones that crash their
worker in every way a process can end."""

from __future__ import annotations

import textwrap
from pathlib import Path

KERNELBENCH_REFERENCE = """
    import torch
    import kscope

    class Model(torch.nn.Module):
        def __init__(self, scale):
            super().__init__()
            self.scale = scale

        def forward(self, x):
            kscope.testing.active().launch("reference", 1000.0)
            return x * self.scale

    def get_inputs():
        return [torch.randn(64)]

    def get_init_inputs():
        return [2.0]
"""


def kernelbench_candidate(body: str, prelude: str = "") -> str:
    """A ModelNew whose forward(x) runs ``body`` (with ``sim``, the worker's simulated backend)."""
    return (textwrap.dedent("""
        import ctypes, os, signal, sys, time
        import torch
        import kscope
    """) + textwrap.dedent(prelude) + textwrap.dedent("""
        class ModelNew(torch.nn.Module):
            def __init__(self, scale):
                super().__init__()
                self.scale = scale

            def forward(self, x):
                sim = kscope.testing.active()
    """) + textwrap.indent(textwrap.dedent(body), " " * 8))


KERNELBENCH_CANDIDATES = {
    "faster.py": kernelbench_candidate("""
        sim.launch("candidate", 500.0)
        return x * self.scale
    """),
    "wrong.py": kernelbench_candidate("""
        sim.launch("candidate", 500.0)
        return x * (self.scale + 1)
    """),
    "aborts.py": kernelbench_candidate("os.abort()"),
    "segfaults.py": kernelbench_candidate("ctypes.string_at(0)"),
    "exits.py": kernelbench_candidate("sys.exit(3)"),
    "killed.py": kernelbench_candidate("os.kill(os.getpid(), signal.SIGKILL)"),
    "hangs.py": kernelbench_candidate("while True:\n    time.sleep(0.05)"),
    "syntax_error.py": "class ModelNew(torch.nn.Module:\n    pass\n",
    "fails_to_build.py": "raise ImportError('Error building extension: nvcc exited with status 1')\n"
                         "class ModelNew: pass\n",
    "patches_timer.py": kernelbench_candidate("""
        sim.launch("candidate", 500.0)
        return x * self.scale
    """, prelude="time.perf_counter = lambda: 0.0\n"),
}

GPUMODE_REFERENCE = """
    import numpy as np
    import kscope
    from task import FACTOR
    from utils import generated

    def generate_input(size, seed):
        return generated(size, seed)

    def ref_kernel(data):
        kscope.testing.active().launch("reference", 1000.0)
        return data * FACTOR
"""

GPUMODE_UTILS = """
    import numpy as np

    def generated(size, seed):
        return np.random.default_rng(seed).standard_normal(size).astype(np.float32)
"""

GPUMODE_TASK = """
    files:
      - {"name": "submission.py", "source": "@SUBMISSION@"}
      - {"name": "task.py", "source": "task.py"}
      - {"name": "utils.py", "source": "../utils.py"}
      - {"name": "reference.py", "source": "reference.py"}
    tests:
      - {"size": 8, "seed": 1}
    benchmarks:
      - {"size": 64, "seed": 2}
      - {"size": 128, "seed": 3}
"""

GPUMODE_SUBMISSION = """
    import kscope
    from task import FACTOR

    def custom_kernel(data):
        kscope.testing.active().launch("candidate", {ns})
        return data * FACTOR
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def kernelbench_problem(root: Path, candidates: list[str], directory: str = "scale") -> Path:
    """A KernelBench problem directory under root with the named candidates of KERNELBENCH_CANDIDATES."""
    files = {f"{directory}/reference.py": KERNELBENCH_REFERENCE}
    files.update({f"{directory}/{name}": KERNELBENCH_CANDIDATES[name] for name in candidates})
    return write(root, files)


def gpumode_problems(root: Path) -> Path:
    """Two GPU MODE problems with task.py files of the same name and different FACTORs, sharing a
    utils.py one directory up (as reference-kernels lays them out): a candidate each, plus a wrong
    one in the second's solutions/ directory."""
    files = {"utils.py": GPUMODE_UTILS}
    for name, factor in (("double_py", 2), ("triple_py", 3)):
        files[f"{name}/reference.py"] = GPUMODE_REFERENCE
        files[f"{name}/task.py"] = f"FACTOR = {factor}\n"
        files[f"{name}/task.yml"] = GPUMODE_TASK
        files[f"{name}/submission.py"] = GPUMODE_SUBMISSION.format(ns=400.0)
    files["triple_py/solutions/wrong/twice.py"] = """
        import kscope

        def custom_kernel(data):
            kscope.testing.active().launch("candidate", 400.0)
            return data * 2
    """
    return write(root, files)
