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
    "unjoined_stream.py": kernelbench_candidate("""
        sim.launch("candidate", 300.0, stream=5)  # a side stream nobody waits for
        sim.host_work(50_000.0)  # the worker's return path: the kernel ended long before
        return x * self.scale
    """),
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


def timed_candidate(build_s: float, measure_s: float, triton: bool = False, cpu: bool = False) -> str:
    """A faster candidate that takes ``build_s`` to compile the first time (as a torch extension
    builds into its directory, TORCH_EXTENSIONS_DIR; its import finds the build after that) and
    holds the GPU ``measure_s`` longer as it is built. ``triton``: its source says it compiles as
    Triton kernels do, not as a torch extension builds (it imports neither). ``cpu``: the build
    spends ``build_s`` of CPU time in a child process, as a compiler does, instead of sleeping."""
    says = ("# compiles its triton kernels as it loads" if triton else
            "from torch.utils import cpp_extension  # noqa: F401 - what tells evaluate_many that it builds")
    compiler = f"import time\nwhile time.process_time() < {build_s!r}: pass"
    waits = f"subprocess.run([sys.executable, '-c', {compiler!r}], check=True)" if cpu else f"time.sleep({build_s!r})"
    build = textwrap.dedent(f"""
        {says}

        BUILT = os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "extension.so")
        if not os.path.exists(BUILT):
            {waits}
            open(BUILT, "w").close()
    """) if build_s else ""
    return textwrap.dedent("""
        import os, subprocess, sys, time
        import torch
        import kscope
    """) + build + textwrap.dedent(f"""
        class ModelNew(torch.nn.Module):
            def __init__(self, scale):
                super().__init__()
                self.scale = scale
                time.sleep({measure_s!r})

            def forward(self, x):
                kscope.testing.active().launch("candidate", 500.0)
                return x * self.scale
    """)


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


# ---- On a GPU: KernelBench problems of level-1 sizes, and candidates of every kind ---------------------
# The GPU tests (test_evaluate_many_gpu.py) and bench/evaluate_throughput.py evaluate these.

GPU_REFERENCES = {
    "scale_add": ("a, b", "a * 2.0 + b", "[torch.randn(1 << 22), torch.randn(1 << 22)]"),
    "relu": ("x", "torch.relu(x)", "[torch.randn(16, 16384)]"),
    "softmax": ("x", "torch.softmax(x, dim=1)", "[torch.randn(16, 16384)]"),
    "matmul": ("a, b", "torch.matmul(a, b)", "[torch.randn(2048, 2048), torch.randn(2048, 2048)]"),
}


def gpu_reference(problem: str) -> str:
    args, expression, inputs = GPU_REFERENCES[problem]
    return textwrap.dedent(f"""
        import torch

        class Model(torch.nn.Module):
            def forward(self, {args}):
                return {expression}

        def get_inputs():
            return {inputs}

        def get_init_inputs():
            return []
    """)


def _torch_candidate(args: str, body: str, prelude: str = "", init: str = "pass") -> str:
    return (textwrap.dedent("""
        import ctypes, os, sys, time
        import torch
    """) + textwrap.dedent(prelude) + textwrap.dedent(f"""
        class ModelNew(torch.nn.Module):
            def __init__(self):
                super().__init__()
                {init}

            def forward(self, {args}):
    """) + textwrap.indent(textwrap.dedent(body).strip() + "\n", " " * 8))


# What a correct candidate computes, written another way, per problem.
_HONEST = {"scale_add": "return torch.add(b, a, alpha=2.0)", "relu": "return torch.clamp_min(x, 0.0)",
           "softmax": "e = torch.exp(x - x.amax(dim=1, keepdim=True))\nreturn e / e.sum(dim=1, keepdim=True)",
           "matmul": "return a @ b"}
_WRONG = {"scale_add": "return a * 2.0 - b", "relu": "return torch.abs(x)", "softmax": "return torch.softmax(x, dim=0)",
          "matmul": "return b @ a"}
_ELEMENTWISE = {"scale_add": ("a, b", "a * 2.0 + b", "a[i] * 2.0f + b[i]"),
                "relu": ("x", "tl.maximum(x, 0.0)", "fmaxf(x[i], 0.0f)")}

_TRITON = """
import torch
import triton
import triton.language as tl

@triton.jit
def kernel({pointers}, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
{loads}
    tl.store(out_ptr + offs{fault}, {expression}, mask=mask)

class ModelNew(torch.nn.Module):
    def forward(self, {args}):
        out = torch.empty_like({first})
        n = out.numel()
        kernel[(triton.cdiv(n, {block}),)]({args}, out, n, BLOCK={block})
        return out
"""

_CUDA = '''
import torch
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
__global__ void kernel({parameters}, float* out, long n) {{
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = {expression};
}}
torch::Tensor run({tensors}) {{
  auto out = torch::empty_like({first});
  long n = out.numel();
  kernel<<<(n + {block} - 1) / {block}, {block}>>>({pointers}, out.data_ptr<float>(), n);{broken}
  return out;
}}
"""
extension = load_inline(name="{name}", cpp_sources="torch::Tensor run({tensors});", cuda_sources=SOURCE,
                        functions=["run"])

class ModelNew(torch.nn.Module):
    def forward(self, {args}):
        return extension.run({args})
'''

_SPIN = """
import torch
import triton
import triton.language as tl

@triton.jit
def spin(flag_ptr):
    while tl.load(flag_ptr, volatile=True) == 0:
        pass

class ModelNew(torch.nn.Module):
    def forward(self, {args}):
        spin[(1,)](torch.zeros(1, dtype=torch.int32, device={first}.device))
        return {expression}
"""


def gpu_candidate(problem: str, kind: str, variant: int = 0) -> str:
    """A candidate of ``kind`` for a GPU problem: honest (torch, triton, cuda: load_inline), slower,
    wrong, low_precision, illegal_address, abort, segfault, exit, out_of_memory, hang_host, hang_gpu,
    unjoined_stream, side_stream_joined and side_stream_synced (honest: joined back, or waited for by
    the host), cached_by_address, timer_patch, in_place, batch_and_skip, cuda_compile_error,
    syntax_error. ``variant`` makes sources differ (block sizes), so that each compiles on its own."""
    args, expression = GPU_REFERENCES[problem][:2]
    first = args.split(",")[0]
    block = (128, 256, 512, 1024)[variant % 4]
    if kind in ("triton", "illegal_address"):
        names = [a.strip() for a in args.split(",")]
        loads = "\n".join(f"    {n} = tl.load({n}_ptr + offs, mask=mask)" for n in names)
        return _TRITON.format(pointers=", ".join(f"{n}_ptr" for n in names), loads=loads, args=args, first=first,
                              expression=_ELEMENTWISE[problem][1], block=block * 2,
                              fault=" + (1 << 40)" if kind == "illegal_address" else "")
    if kind in ("cuda", "cuda_compile_error"):
        names = [a.strip() for a in args.split(",")]
        return _CUDA.format(parameters=", ".join(f"const float* {n}" for n in names),
                            tensors=", ".join(f"torch::Tensor {n}" for n in names), first=first, block=block,
                            pointers=", ".join(f"{n}.data_ptr<float>()" for n in names), args=args,
                            expression=_ELEMENTWISE[problem][2], name=f"{problem}_{kind}_{variant}",
                            broken="" if kind == "cuda" else " this does not compile")
    if kind == "hang_gpu":
        return _SPIN.format(args=args, first=first, expression=expression)
    if kind == "syntax_error":
        return f"import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, {args}:\n        pass\n"
    bodies = {
        "torch": _HONEST[problem],
        "slower": f"first = {expression}\nsecond = {expression}\nreturn second + 0 * first",
        "wrong": _WRONG[problem],
        "low_precision": "return (a.half() @ b.half()).float()",
        "abort": "os.abort()",
        "segfault": "ctypes.string_at(0)",
        "exit": "sys.exit(1)",
        "out_of_memory": f"while True:\n    HOARD.append(torch.empty(1 << 30, dtype=torch.uint8, device={first}.device))",
        "hang_host": "while True:\n    time.sleep(0.01)",
        "unjoined_stream": (f"out = torch.empty_like({first})\nself.side.wait_stream(torch.cuda.current_stream())\n"
                            f"with torch.cuda.stream(self.side):\n    out.copy_({expression})\nreturn out"),
        "side_stream_joined": (f"out = torch.empty_like({first})\nself.side.wait_stream(torch.cuda.current_stream())\n"
                               f"with torch.cuda.stream(self.side):\n    out.copy_({expression})\n"
                               f"torch.cuda.current_stream().wait_stream(self.side)\nreturn out"),
        "side_stream_synced": (f"out = torch.empty_like({first})\nself.side.wait_stream(torch.cuda.current_stream())\n"
                               f"with torch.cuda.stream(self.side):\n    out.copy_({expression})\n"
                               f"self.side.synchronize()\nreturn out"),
        "cached_by_address": (f"key = {first}.data_ptr()\nif key not in self.answers:\n"
                              f"    self.answers[key] = {expression}\nreturn self.answers[key]"),
        "timer_patch": _HONEST[problem],
        "in_place": f"return {first}.copy_({expression})",
        "batch_and_skip": (f"self.calls += 1\nif self.last is None or self.calls % 2:\n    self.last = {expression}\n"
                           f"return self.last"),
    }
    inits = {"unjoined_stream": "self.side = torch.cuda.Stream()", "side_stream_joined": "self.side = torch.cuda.Stream()",
             "side_stream_synced": "self.side = torch.cuda.Stream()", "cached_by_address": "self.answers = {}",
             "batch_and_skip": "self.calls, self.last = 0, None"}
    preludes = {"out_of_memory": "HOARD = []\n", "timer_patch": "time.perf_counter = lambda: 0.0\n"}
    return _torch_candidate(args, bodies[kind], preludes.get(kind, ""), inits.get(kind, "pass"))


# The verdicts each kind may get: honest ones any of kscope.evaluate's verdicts of a correct candidate
# without a finding; the others exactly theirs.
HONEST_VERDICTS = {"faster", "same", "slower"}
EXPECTED = {
    "torch": HONEST_VERDICTS, "triton": HONEST_VERDICTS, "cuda": HONEST_VERDICTS, "slower": {"slower"},
    "side_stream_joined": HONEST_VERDICTS, "side_stream_synced": HONEST_VERDICTS,
    "wrong": {"incorrect"}, "low_precision": {"incorrect"}, "illegal_address": {"crashed"}, "abort": {"crashed"},
    "segfault": {"crashed"}, "exit": {"crashed"}, "out_of_memory": {"crashed"}, "hang_host": {"timed_out"},
    "hang_gpu": {"timed_out"}, "unjoined_stream": {"suspect"}, "cached_by_address": {"incorrect"},
    "timer_patch": {"suspect"}, "in_place": {"suspect"}, "batch_and_skip": {"incorrect"},
    "cuda_compile_error": {"compile_failed"}, "syntax_error": {"compile_failed"},
}
# What a crash's message says, per kind.
MESSAGES = {"illegal_address": "illegal memory access", "abort": "SIGABRT", "segfault": "SIGSEGV",
            "exit": "sys.exit(1)", "out_of_memory": "out of GPU memory", "cuda_compile_error": "Error building"}


def gpu_batch(root: Path, mix: list[tuple[str, str, int]]) -> dict[str, str]:
    """Writes each (problem, kind, count) of ``mix`` as ``count`` candidates under ``root/<problem>``;
    returns {candidate id: kind}."""
    kinds: dict[str, str] = {}
    files: dict[str, str] = {}
    for problem, kind, count in mix:
        files[f"{problem}/reference.py"] = gpu_reference(problem)
        for variant in range(count):
            name = f"{problem}/{kind}_{variant}.py"
            files[name] = gpu_candidate(problem, kind, variant)
            kinds[name] = kind
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return kinds


def extensions_unbuildable() -> str | None:
    """Why torch cannot build CUDA extensions here (load_inline needs ninja and the CUDA toolkit), or None."""
    from torch.utils import cpp_extension

    if not cpp_extension.is_ninja_available():
        return "ninja is not installed (pip install ninja): torch builds no extension without it"
    if cpp_extension.CUDA_HOME is None:
        return "torch finds no CUDA toolkit (CUDA_HOME, nvcc on PATH)"
    return None


def buildable(mix: list[tuple[str, str, int]]) -> tuple[list[tuple[str, str, int]], str | None]:
    """The mix with its CUDA-extension candidates made torch ones where extensions cannot be built,
    and why."""
    why = extensions_unbuildable()
    if why is None:
        return mix, None
    return [(p, "torch" if k == "cuda" else k, n) for p, k, n in mix if k != "cuda_compile_error"], why
