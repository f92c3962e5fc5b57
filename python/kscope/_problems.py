"""Problems and candidates in the two formats kernel generation uses, for kscope.evaluate_many.

KernelBench: a reference module defining ``Model`` (a torch.nn.Module), ``get_inputs()`` and
``get_init_inputs()``; a candidate module defining ``ModelNew``, built from the same init inputs.
GPU MODE (reference-kernels): a ``reference.py`` defining ``ref_kernel(data)`` and
``generate_input(**config)``, a ``task.yml`` listing the configs (``benchmarks``, ``tests``) and the
helper files; a candidate defining ``custom_kernel(data)``.

The parent process finds them (reading files, running nothing); a worker process turns one
candidate into what kscope.evaluate takes (:func:`contest`), with the problem's directories on
sys.path and its modules forgotten afterwards (:func:`problem_modules`).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import json
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError

KERNELBENCH, GPUMODE = "kernelbench", "gpumode"
_KERNELBENCH_REFERENCE = {"Model", "get_inputs", "get_init_inputs"}
_GPUMODE_REFERENCE = {"ref_kernel", "generate_input"}
_ENTRY = {KERNELBENCH: "ModelNew", GPUMODE: "custom_kernel"}
# The seed models are built with (KernelBench seeds both models alike, so that their weights match).
INIT_SEED = 42


@dataclass(frozen=True)
class Problem:
    """A reference: its format, its file, the directories its modules import from, its configs."""

    name: str
    format: str
    reference: str
    paths: tuple[str, ...]
    configs: tuple[Any, ...]  # GPU MODE: task.yml's dicts; KernelBench: (None,), its sizes are the module's

    def config_label(self, index: int) -> str:
        config = self.configs[index]
        return "" if config is None else json.dumps(config, sort_keys=False)


@dataclass(frozen=True)
class Candidate:
    """One candidate file of a problem; ``id`` is its path under the batch's root, with '/'."""

    id: str
    path: str
    problem: Problem

    @property
    def key(self) -> str:
        """The id as one file name (per-candidate files and build directories)."""
        return self.id.removesuffix(".py").replace("/", "__")


# ---- Finding them (parent side: files are read, nothing runs) ----------------------------------------

def find(root: str | os.PathLike[str], gpumode_configs: str = "benchmarks") -> list[Candidate]:
    """Every candidate under ``root``: each directory holding a reference is a problem, and every
    other Python file in it or below it (outside another problem) that defines the format's entry,
    or does not parse, is a candidate of it."""
    top = os.path.abspath(os.fspath(root))
    if not os.path.isdir(top):
        raise ConfigError(f"{os.fspath(root)!r} is not a directory: give the directory holding the problems "
                          f"(one directory per problem, its reference and its candidates)")
    problem_dirs: dict[str, Problem] = {}
    for directory, subdirs, files in os.walk(top):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "__pycache__")))
        problem = _problem_in(top, directory, sorted(f for f in files if f.endswith(".py")), gpumode_configs)
        if problem is not None:
            problem_dirs[directory] = problem
    if not problem_dirs:
        raise ConfigError(f"no problem under {top}: a problem is a directory holding a KernelBench reference "
                          f"(a file defining Model, get_inputs and get_init_inputs, e.g. reference.py) or a GPU MODE "
                          f"reference.py (ref_kernel and generate_input) with its task.yml")
    found: list[Candidate] = []
    for directory, problem in problem_dirs.items():
        for path in _files_below(directory, set(problem_dirs) - {directory}):
            if path == problem.reference or not _is_candidate(path, problem):
                continue
            found.append(Candidate(os.path.relpath(path, top).replace(os.sep, "/"), path, problem))
    return sorted(found, key=lambda c: c.id)


def pairs(given: Iterable[Any]) -> list[Candidate]:
    """Candidates from (reference file, candidate file) pairs, for layouts of one's own (KernelBench's
    runs/ directory, say); ids are the candidates' paths as given."""
    found: list[Candidate] = []
    problems: dict[str, Problem] = {}
    for item in given:
        if not (isinstance(item, (tuple, list)) and len(item) == 2
                and all(isinstance(p, (str, os.PathLike)) for p in item)):
            raise ConfigError(f"evaluate_many takes a directory of problems or (reference file, candidate file) "
                              f"pairs; {item!r} is neither")
        reference, candidate = (os.path.abspath(os.fspath(p)) for p in item)
        for what, path in (("reference", reference), ("candidate", candidate)):
            if not os.path.isfile(path):
                raise ConfigError(f"the {what} {os.fspath(path)!r} is not a file")
        if reference not in problems:
            directory = os.path.dirname(reference)
            name = os.path.relpath(reference).removesuffix(".py")
            problem = _reference(directory, reference, name, "benchmarks")
            if problem is None:
                raise ConfigError(f"{reference} is no reference: KernelBench's defines Model, get_inputs and "
                                  f"get_init_inputs; GPU MODE's reference.py defines ref_kernel and generate_input")
            problems[reference] = problem
        found.append(Candidate(os.fspath(item[1]), candidate, problems[reference]))
    ids = [c.id for c in found]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ConfigError(f"evaluate_many was given the candidate {repeated[0]!r} twice: give each candidate once")
    if not found:
        raise ConfigError("evaluate_many was given no candidate")
    return found


def _problem_in(top: str, directory: str, files: list[str], gpumode_configs: str) -> Problem | None:
    name = os.path.relpath(directory, top).replace(os.sep, "/")
    if "reference.py" in files:
        return _reference(directory, os.path.join(directory, "reference.py"), name, gpumode_configs)
    references = [f for f in files if _KERNELBENCH_REFERENCE <= _defined(os.path.join(directory, f))
                  and "ModelNew" not in _defined(os.path.join(directory, f))]
    if len(references) > 1:
        raise ConfigError(f"{directory} holds several KernelBench references ({', '.join(references)}): give each "
                          f"problem a directory of its own (its reference named reference.py where it has other "
                          f"files), or give evaluate_many (reference file, candidate file) pairs")
    if not references:
        return None
    return _reference(directory, os.path.join(directory, references[0]), name, gpumode_configs)


def _reference(directory: str, path: str, name: str, gpumode_configs: str) -> Problem | None:
    defined = _defined(path)
    if _GPUMODE_REFERENCE <= defined:
        paths, configs = _task(directory, gpumode_configs)
        return Problem(name, GPUMODE, path, paths, configs)
    if _KERNELBENCH_REFERENCE <= defined:
        return Problem(name, KERNELBENCH, path, (directory,), (None,))
    return None


def _task(directory: str, which: str) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """The directories a GPU MODE problem's files come from, and its configs, from task.yml."""
    path = os.path.join(directory, "task.yml")
    if not os.path.isfile(path):
        raise ConfigError(f"{directory} is a GPU MODE problem (its reference.py defines ref_kernel and "
                          f"generate_input) without a task.yml: add one listing its configs under 'benchmarks'")
    try:
        import yaml
    except ImportError:
        raise ConfigError(f"reading {path} needs PyYAML: install it (pip install pyyaml, or apt install "
                          f"python3-yaml)") from None
    try:
        with open(path, encoding="utf-8") as f:
            task = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    configs = task.get(which) if isinstance(task, dict) else None
    if not isinstance(configs, list) or not configs or not all(isinstance(c, dict) for c in configs):
        raise ConfigError(f"{path} has no list of configs under {which!r} (each a mapping of generate_input's "
                          f"arguments, e.g. - {{\"size\": 1024, \"seed\": 1}})")
    paths = [directory]
    for entry in task.get("files") or []:
        source = entry.get("source") if isinstance(entry, dict) else None
        if isinstance(source, str) and not source.startswith("@"):
            helper = os.path.dirname(os.path.normpath(os.path.join(directory, source)))
            if helper not in paths:
                paths.append(helper)
    return tuple(paths), tuple(configs)


def _files_below(directory: str, others: set[str]) -> Iterator[str]:
    for current, subdirs, files in os.walk(directory):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "__pycache__"))
                            and os.path.join(current, d) not in others)
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(current, f)


def _is_candidate(path: str, problem: Problem) -> bool:
    """A file defining the format's entry, or one that does not parse (it is reported as not compiling,
    never silently left out); parsed files that define it not are the problem's helpers."""
    try:
        defined = _parsed(path)
    except SyntaxError:
        return True
    return _ENTRY[problem.format] in defined


def _defined(path: str) -> set[str]:
    try:
        return _parsed(path)
    except SyntaxError:
        return set()


def _parsed(path: str) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments, imports)."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, ValueError) as e:
        raise SyntaxError(str(e)) from None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


# ---- Running them (worker side) ----------------------------------------------------------------------

@contextlib.contextmanager
def problem_modules(problem: Problem, candidate_path: str) -> Iterator[None]:
    """The problem's directories first on sys.path, and the modules named as their files set aside
    (every GPU MODE problem has its own task.py, utils.py and reference.py); afterwards sys.path and
    those modules as they were, and the modules loaded from the problem's files forgotten."""
    dirs = list(dict.fromkeys(os.path.abspath(d) for d in [*problem.paths, os.path.dirname(candidate_path)]))
    names = {f[:-3] for d in dirs for f in _listing(d) if f.endswith(".py")}
    saved_path, before = list(sys.path), set(sys.modules)
    set_aside = {n: sys.modules.pop(n) for n in names
                 if n in sys.modules and not _ours(n) and n not in sys.stdlib_module_names}
    sys.path[:0] = dirs
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for name, module in list(sys.modules.items()):
            if _ours(name) or (name in before and name not in set_aside):
                continue
            # The problem's own files: those in its directories themselves (a library installed
            # somewhere below them, a venv say, stays loaded).
            file = getattr(module, "__file__", None)
            if name.startswith("kscope_problem_") or (file and os.path.dirname(os.path.abspath(file)) in dirs):
                del sys.modules[name]
        sys.modules.update(set_aside)


def _ours(name: str) -> bool:
    return name == "kscope" or name.startswith("kscope.")


def _listing(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def load_module(path: str, name: str) -> Any:
    """Runs the file at ``path`` as the module ``name`` (a file-backed module: Triton reads its
    kernels' source from it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_reference(problem: Problem) -> Any:
    """GPU MODE's candidates and helpers import it as ``reference``; KernelBench's is private."""
    if problem.format == GPUMODE:
        return importlib.import_module("reference")
    return load_module(problem.reference, "kscope_problem_reference")


class BuildError(Exception):
    """Building the candidate's model raised: the candidate's fault, not the problem's."""


@dataclass
class Contest:
    """What kscope.evaluate takes for one candidate: the two functions, inputs(config, seed) and the
    configs (indices into the problem's configs)."""

    candidate: Callable[..., Any]
    reference: Callable[..., Any]
    inputs: Callable[[Any, int], Any]
    configs: list[int]


def contest(candidate: Candidate, module: Any, reference: Any, device: str,
            guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Contest:
    """The candidate's module against its reference's, on ``device`` ('cuda' or 'cpu'). ``guard``
    wraps the candidate's function (the worker notes what it raised)."""
    problem = candidate.problem
    configs = list(range(len(problem.configs)))
    if problem.format == GPUMODE:
        generate = _entry(reference, "generate_input", problem.reference)
        settings = problem.configs

        def gpumode_inputs(config: int, seed: int) -> Any:
            return (generate(**{**settings[config], "seed": seed}),)  # one argument: data

        return Contest(guard(_entry(module, "custom_kernel", candidate.path)),
                       _entry(reference, "ref_kernel", problem.reference), gpumode_inputs, configs)
    import torch

    def place() -> Any:
        return _placing(torch, device)

    init = reference.get_init_inputs()

    def build(cls: Any) -> Any:
        torch.manual_seed(INIT_SEED)  # both models draw the same weights, as KernelBench makes them
        with place():
            return cls(*_on(torch, init, device)).to(device).eval()

    try:
        new = guard(build)(_entry(module, "ModelNew", candidate.path))
    except Exception as e:
        raise BuildError(f"{type(e).__name__}: {' '.join(str(e).split())}") from e
    model = build(_entry(reference, "Model", problem.reference))
    get_inputs = reference.get_inputs

    def kernelbench_inputs(config: int, seed: int) -> Any:
        torch.manual_seed(seed)
        with place():
            return tuple(_on(torch, get_inputs(), device))

    def forward(m: Any) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            with torch.no_grad():
                return m(*args)

        return call

    return Contest(guard(forward(new)), forward(model), kernelbench_inputs, configs)


def _entry(module: Any, name: str, path: str) -> Any:
    found = getattr(module, name, None)
    if found is None:
        raise AttributeError(f"{path} defines no {name}")
    return found


def _placing(torch: Any, device: str) -> Any:
    """Tensors a KernelBench module makes without a device go to ``device`` (torch >= 2: the device as
    a context); the models' weights and inputs are moved there after in any case."""
    if device != "cpu" and hasattr(torch.device(device), "__enter__"):
        return torch.device(device)
    return contextlib.nullcontext()


def _on(torch: Any, values: Iterable[Any], device: str) -> list[Any]:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def warm_triton(candidate: Candidate, module: Any, reference: Any, limit_s: float = 60.0) -> bool:
    """Compiles a KernelBench candidate's Triton kernels without running anything: the candidate's
    forward on meta tensors, each Triton launch turned into a compile (``warmup``). Its
    specialisation matches real tensors' (a meta tensor's address, 0, is 16-byte aligned as the
    allocator's are), so the measuring worker finds them in Triton's cache. True when it ran
    through; a candidate it cannot run so (a raw CUDA extension, say) compiles when first called,
    and so does one whose forward takes longer than ``limit_s`` on meta tensors."""
    if candidate.problem.format != KERNELBENCH or "triton" not in sys.modules:
        return False
    import torch
    from triton.runtime.jit import KernelInterface

    if not any(isinstance(v, KernelInterface) for v in vars(module).values()):
        return False
    launch = KernelInterface.__getitem__

    def compile_only(self: Any, grid: Any) -> Callable[..., Any]:
        return lambda *args, **kwargs: self.warmup(*args, grid=grid, **kwargs)

    def too_long(signum: int, frame: Any) -> None:
        raise TimeoutError(f"its forward ran longer than {limit_s:g} s on meta tensors")

    KernelInterface.__getitem__ = compile_only
    alarm = signal.signal(signal.SIGALRM, too_long)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        meta: Any = torch.device("meta")  # a context in torch >= 2
        with meta, torch.no_grad():
            torch.manual_seed(INIT_SEED)
            model = module.ModelNew(*reference.get_init_inputs())
            model(*reference.get_inputs())
        print(f"[kscope] {candidate.id}: Triton kernels compiled ahead", file=sys.stderr)
        return True
    except Exception as e:  # noqa: BLE001 - a candidate that cannot run on meta tensors compiles later
        print(f"[kscope] {candidate.id}: Triton kernels compile when first called ({type(e).__name__}: {e})",
              file=sys.stderr)
        return False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, alarm)
        KernelInterface.__getitem__ = launch
