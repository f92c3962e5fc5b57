"""kscope.evaluate_many on a GPU: candidates that fault (an illegal address), hang on the GPU and on the
host, exhaust its memory, abort, segfault and exit end as crashed or timed_out with their message,
and the honest and gaming candidates around them still get their verdicts; a torch extension built by
a compile worker is loaded from its build by the measuring worker; Triton kernels are compiled ahead;
a GPU MODE problem (its reference.py, task.py, a utils.py one directory up and task.yml, as
reference-kernels lays them out) runs as written; the standby measuring worker holds no CUDA context
until it takes a dead worker's place."""

import json
import textwrap

import pytest

import batch_problems
import kscope

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
pytest.importorskip("triton")
try:
    import yaml  # noqa: F401 - GPU MODE's task.yml
except ImportError:
    yaml = None

TIMEOUT_S = 10.0
MIX = [  # (problem, kind, count): each failure is followed by honest candidates in the same batch
    ("scale_add", "torch", 2), ("scale_add", "triton", 1), ("scale_add", "cuda", 1),
    ("scale_add", "illegal_address", 1), ("scale_add", "hang_gpu", 1), ("scale_add", "out_of_memory", 1),
    ("scale_add", "abort", 1), ("scale_add", "unjoined_stream", 1), ("scale_add", "wrong", 1),
    ("relu", "torch", 1), ("relu", "unjoined_stream", 1), ("relu", "side_stream_synced", 1), ("relu", "hang_host", 1), ("relu", "segfault", 1), ("relu", "exit", 1),
    ("relu", "in_place", 1), ("relu", "cuda_compile_error", 1), ("matmul", "low_precision", 1),
    ("matmul", "torch", 1),
]

GPUMODE_FILES = {
    "utils.py": """
        import torch

        def make_match_reference(reference, rtol, atol):
            def check_implementation(data, output):
                return torch.allclose(reference(data), output, rtol=rtol, atol=atol)
            return check_implementation
    """,
    "grayscale_py/task.py": """
        from typing import TypeVar
        import torch

        input_t = TypeVar("input_t", bound=torch.Tensor)
        output_t = TypeVar("output_t", bound=torch.Tensor)
    """,
    "grayscale_py/reference.py": """
        import torch
        from task import input_t, output_t
        from utils import make_match_reference

        def ref_kernel(data: input_t) -> output_t:
            weights = torch.tensor([0.2989, 0.5870, 0.1140], device=data.device, dtype=data.dtype)
            return torch.sum(data * weights, dim=-1)

        def generate_input(size: int, seed: int) -> input_t:
            gen = torch.Generator(device="cuda")
            gen.manual_seed(seed)
            return torch.rand(size, size, 3, device="cuda", dtype=torch.float32, generator=gen).contiguous()

        check_implementation = make_match_reference(ref_kernel, rtol=1e-4, atol=1e-4)
    """,
    "grayscale_py/task.yml": """
        files:
          - {"name": "submission.py", "source": "@SUBMISSION@"}
          - {"name": "task.py", "source": "task.py"}
          - {"name": "utils.py", "source": "../utils.py"}
          - {"name": "reference.py", "source": "reference.py"}
        lang: "py"
        tests:
          - {"size": 128, "seed": 1001}
        benchmarks:
          - {"size": 1024, "seed": 93246}
          - {"size": 4096, "seed": 8841}
    """,
    "grayscale_py/submission.py": """
        import torch
        from task import input_t, output_t

        def custom_kernel(data: input_t) -> output_t:
            return data @ torch.tensor([0.2989, 0.5870, 0.1140], device=data.device, dtype=data.dtype)
    """,
    "grayscale_py/solutions/wrong/empty.py": """
        import torch
        from task import input_t, output_t

        def custom_kernel(data: input_t) -> output_t:
            return torch.empty(size=(data.shape[0], data.shape[1]), device=data.device, dtype=data.dtype)
    """,
}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu-batch")
    kinds = batch_problems.gpu_batch(root / "problems", batch_problems.buildable(MIX)[0])
    if yaml is not None:
        batch_problems.write(root / "problems", {name: textwrap.dedent(text) for name, text in GPUMODE_FILES.items()})
    table = kscope.evaluate_many(root / "problems", root / "out", runs=10, timeout_s=TIMEOUT_S, verbosity="silent")
    return table, kinds, root / "out"


def rows_of(table, candidate):
    return table[table["Candidate"] == candidate].reset_index(drop=True)


def test_every_kernelbench_candidate_gets_the_verdict_of_its_kind(batch):
    table, kinds, _ = batch
    wrong = []
    for candidate, kind in kinds.items():
        row = rows_of(table, candidate).iloc[0]
        if row["Verdict"] not in batch_problems.EXPECTED[kind]:
            wrong.append(f"{candidate}: {row['Verdict']} ({row['Reason']})")
        elif kind in batch_problems.MESSAGES and batch_problems.MESSAGES[kind] not in row["Reason"]:
            wrong.append(f"{candidate}: {row['Reason']!r} lacks {batch_problems.MESSAGES[kind]!r}")
        elif batch_problems.EXPECTED[kind] == batch_problems.HONEST_VERDICTS and row["Findings"]:
            wrong.append(f"{candidate}: an honest candidate with findings {row['Findings']}")
    assert wrong == []


def test_a_faulting_candidate_is_crashed_with_cudas_message_and_the_gpu_goes_on(batch):
    table, _, _ = batch
    fault = rows_of(table, "scale_add/illegal_address_0.py").iloc[0]
    assert fault["Verdict"] == "crashed" and "illegal memory access" in fault["Reason"]
    honest = table[table["Candidate"].str.contains("/torch_")]
    assert set(honest["Verdict"]) <= batch_problems.HONEST_VERDICTS and len(honest) == 4


def test_hangs_on_the_gpu_and_on_the_host_are_timed_out_at_the_timeout(batch):
    table, _, _ = batch
    for candidate in ("scale_add/hang_gpu_0.py", "relu/hang_host_0.py"):
        row = rows_of(table, candidate).iloc[0]
        assert row["Verdict"] == "timed_out" and f"{TIMEOUT_S:g} s to be measured" in row["Reason"]
        assert row["MeasureS"] >= TIMEOUT_S


def test_a_candidate_exhausting_gpu_memory_is_crashed_and_its_worker_gets_the_memory_back(batch):
    table, _, _ = batch
    row = rows_of(table, "scale_add/out_of_memory_0.py").iloc[0]
    assert row["Verdict"] == "crashed" and "out of GPU memory" in row["Reason"]
    assert "worker replaced" not in row["Restored"], row["Restored"]  # what it hoarded was freed


def test_a_torch_extension_is_built_ahead_and_loaded_from_its_build(batch):
    why = batch_problems.extensions_unbuildable()
    if why:
        pytest.skip(f"GPU test: {why}")
    table, _, out = batch
    row = rows_of(table, "scale_add/cuda_0.py").iloc[0]
    assert row["Verdict"] in batch_problems.HONEST_VERDICTS
    assert row["CompileS"] > 5 * row["LoadS"], "the measuring worker compiled it again"
    assert (out / "build" / "scale_add__cuda_0").is_dir()
    failed = rows_of(table, "relu/cuda_compile_error_0.py").iloc[0]
    assert failed["Verdict"] == "compile_failed" and "error" in failed["Reason"]


def test_triton_kernels_are_compiled_ahead_on_meta_tensors(batch):
    table, _, out = batch
    logs = "".join(p.read_text(errors="replace") for p in (out / "logs").glob("compile-*.log"))
    assert "scale_add/triton_0.py: Triton kernels compiled ahead" in logs
    assert rows_of(table, "scale_add/triton_0.py").iloc[0]["Verdict"] in batch_problems.HONEST_VERDICTS


def test_a_gpumode_problem_runs_as_reference_kernels_writes_it(batch):
    if yaml is None:
        pytest.skip("GPU test: PyYAML is not installed (pip install pyyaml): GPU MODE's task.yml needs it")
    table, _, _ = batch
    submission = rows_of(table, "grayscale_py/submission.py")
    assert [json.loads(c) for c in submission["Config"]] == [{"size": 1024, "seed": 93246}, {"size": 4096, "seed": 8841}]
    assert set(submission["Verdict"]) <= batch_problems.HONEST_VERDICTS and not submission["Findings"].any()
    assert set(rows_of(table, "grayscale_py/solutions/wrong/empty.py")["Verdict"]) == {"incorrect"}
    assert set(submission["Format"]) == {"gpumode"}


# A relu candidate that notes, as it is built in its measuring worker (the GPU its), which of the
# batch's measuring workers hold a CUDA context (nvidia-smi's compute processes).
PROBE = '''
import json, subprocess


def _probe():
    parent, measuring = os.getppid(), []  # the launcher, or the batch where workers are programs
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            name, ppid = stat[stat.index("(") + 1:stat.rindex(")")], int(stat.rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline") as f:
                command = f.read().split("\\0")
        except (OSError, ValueError, IndexError):
            continue
        forked = name == "kscope-measure"
        if ppid == parent and (forked or "kscope._worker_main" in command and "measure" in command):
            measuring.append(int(entry))
    listed = subprocess.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.split()
    note = {"self": os.getpid(), "measuring": measuring, "contexts": [int(p) for p in listed if p.isdigit()]}
    with open(os.path.join(os.environ["KSCOPE_TEST_PROBE_DIR"], f"{os.getpid()}-{time.monotonic_ns()}.json"), "w") as f:
        json.dump(note, f)
'''


def test_the_standby_worker_makes_no_cuda_context_until_it_takes_a_dead_workers_place(tmp_path, monkeypatch):
    """Two measuring workers and a standby: while candidates are measured, three measuring processes
    live and at most two hold a CUDA context; a segfault's worker is replaced by the standby."""
    monkeypatch.setenv("KSCOPE_TEST_PROBE_DIR", str(tmp_path))
    probe = batch_problems._torch_candidate("x", "return torch.clamp_min(x, 0.0)", prelude=PROBE, init="_probe()")
    files = {"relu/reference.py": batch_problems.gpu_reference("relu"),
             "relu/b_segfault.py": batch_problems.gpu_candidate("relu", "segfault")}
    files.update({f"relu/{group}_probe_{i}.py": probe for group in "ac" for i in range(4)})
    batch_problems.write(tmp_path / "problems", files)
    table = kscope.evaluate_many(tmp_path / "problems", tmp_path / "out", runs=10, timeout_s=TIMEOUT_S,
                                 compile_workers=1, verbosity="silent")
    verdicts = dict(zip(table["Candidate"], table["Verdict"]))
    assert verdicts.pop("relu/b_segfault.py") == "crashed"
    assert set(verdicts.values()) <= batch_problems.HONEST_VERDICTS, table[["Candidate", "Verdict", "Reason"]]
    s = table.attrs["schedule"]
    assert s["workers_replaced"] == 1 and s["workers_replaced_by_standby"] == 1, s
    notes = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert len(notes) >= 8, notes  # each probe built at least once
    if not any(n["self"] in n["contexts"] for n in notes):
        pytest.skip("GPU test: nvidia-smi lists no process of this PID namespace (a container), so which "
                    "worker holds a CUDA context cannot be seen here")
    for note in notes:
        with_context = set(note["measuring"]) & set(note["contexts"])
        assert len(with_context) <= 2 and note["self"] in with_context, note
    assert any(len(n["measuring"]) == 3 for n in notes), notes  # the standby lived beside the two
