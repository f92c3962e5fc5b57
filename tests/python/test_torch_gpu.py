"""kscope.torch.install() with torch.compile(mode="max-autotune") itself on a GPU (torch 2.11):
Inductor's choice among a matmul's candidates (ATen's and Triton templates) made by a race, in this
process and with autotune_in_subproc, and its own benchmarking back after uninstall."""

import warnings

import pytest

import kscope
import kscope.torch

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
pytest.importorskip("triton")
inductor_config = pytest.importorskip("torch._inductor.config")
benchmarking = pytest.importorskip("torch._inductor.runtime.benchmarking")


def mm_relu(a, b, bias):
    return torch.relu(a @ b + bias)  # a matmul with a fused epilogue


@pytest.fixture
def fresh_inductor(monkeypatch):
    """Max-autotune from scratch: no cached graph or autotuning result, ATen and Triton candidates."""
    for name, value in (("fx_graph_cache", False), ("autotune_local_cache", False), ("autotune_remote_cache", False),
                        ("max_autotune_gemm_backends", "ATEN,TRITON")):
        if hasattr(inductor_config, name):
            monkeypatch.setattr(inductor_config, name, value)
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def inputs(size=2048):
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    return a, b, torch.randn(size, device="cuda", dtype=torch.float16)


def test_max_autotune_chooses_by_a_race_in_this_process(fresh_inductor):
    a, b, bias = inputs()
    with kscope.torch.install(runs=40) as installed:
        out = torch.compile(mm_relu, mode="max-autotune-no-cudagraphs")(a, b, bias)
    torch.testing.assert_close(out, mm_relu(a, b, bias), rtol=1e-2, atol=1e-1)
    raced = [d for d in installed.decisions if d.race is not None]
    assert raced, installed.decisions  # the matmul's candidates were raced
    decision = raced[0]
    assert decision.chosen in decision.candidates and len(decision.race) >= 2
    assert any(c.startswith("triton_") for c in decision.candidates)
    assert "benchmark_gpu" not in vars(benchmarking.benchmarker)  # Inductor's own benchmarker is back


def test_max_autotune_in_subprocesses_times_with_kscope_there(fresh_inductor, monkeypatch):
    autotune_process = pytest.importorskip("torch._inductor.autotune_process")
    monkeypatch.setattr(inductor_config, "autotune_in_subproc", True)
    sent, raised = [], []
    send, get = autotune_process.TuningProcess.send, autotune_process.TuningProcess.get

    def kept(obj, write_pipe, *args, **kwargs):  # torch 2.11 passes extra_env too
        sent.append(obj)
        return send(obj, write_pipe, *args, **kwargs)

    def answered(self, *args, **kwargs):  # what a job raised in its subprocess, which Inductor's warning leaves out
        try:
            return get(self, *args, **kwargs)
        except Exception as e:
            raised.append(f"{type(e).__name__}: {e}")
            raise

    monkeypatch.setattr(autotune_process.TuningProcess, "send", staticmethod(kept))
    monkeypatch.setattr(autotune_process.TuningProcess, "get", answered)
    a, b, bias = inputs(1536)  # another size than the test above: its choices are not reused
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with kscope.torch.install():
            out = torch.compile(mm_relu, mode="max-autotune-no-cudagraphs")(a, b, bias)
    torch.testing.assert_close(out, mm_relu(a, b, bias), rtol=1e-2, atol=1e-1)
    jobs = [obj for obj in sent if obj is not None]
    assert jobs and all(isinstance(job, kscope.torch._InstalledFirst) for job in jobs)  # kscope installs itself there
    failed = [str(w.message) for w in caught if "Failed to benchmark choice" in str(w.message)]
    # Each job ran, but for the configs that need more shared memory than the GPU has (on an H100, a
    # 128x128x128 tile of 4 stages), which Inductor leaves out with or without kscope: its parent
    # finds some as it precompiles, the subprocess the others (Triton's OutOfResources).
    assert len(failed) == len(raised), (failed, raised)
    assert all("out of resource" in r.lower() or "OutOfResources" in r for r in raised), raised
