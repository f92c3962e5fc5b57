"""kscope.evaluate on a GPU with torch: each attack on a timing harness as the field's reports describe
it (shared/research/integrity-and-tuning.md: KernelBench EVAL.md and PR #82, GPU MODE
reference-kernels #162 and #104, llm.c PR #851), and honest candidates that must get no finding.

Bounds come from the hardware: a spin kernel of known cycles takes at least cycles / the highest SM
clock, a copy at least its bytes over the DRAM roof; never from one run's numbers."""

import ctypes
import threading
import time

import pytest

import kscope

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

N = 1 << 20
RUNS = 10


def vectors(config, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(config["n"], device="cuda", generator=g), torch.randn(config["n"], device="cuda", generator=g))


def matrices(config, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    n = config["n"]
    return (torch.randn(n, n, device="cuda", generator=g), torch.randn(n, n, device="cuda", generator=g))


def add(a, b):
    return a + b


def matmul(a, b):
    return a @ b


def evaluated(candidate, reference=add, inputs=vectors, n=N, **options):
    options.setdefault("verbosity", "silent")
    return kscope.evaluate(candidate, reference, inputs, [{"n": n}], runs=RUNS, **options)


def row(results):
    return results.to_dataframe().iloc[0]


def findings(results):
    return set(results.findings()["Finding"])


# ---- Attacks ---------------------------------------------------------------------------------------

def test_work_moved_to_a_stream_nobody_waits_for_is_timed_and_found():
    side = torch.cuda.Stream()

    def injected(a, b):
        with torch.cuda.stream(side):  # KernelBench PR #82: the timer's stream does not wait for this one
            return a @ b

    results = evaluated(injected, matmul, matrices, n=2048)
    r = row(results)
    assert "unjoined_work" in findings(results), results.findings()
    assert r["Verdict"] == "suspect"
    # The same GEMM on inputs of the same size: timed in full, it cannot take half the reference's time.
    assert r["CandidateMedianNs"] > 0.5 * r["ReferenceMedianNs"], r


def test_short_work_on_an_unjoined_stream_is_found_and_joined_or_synchronized_side_streams_are_not():
    """A few microseconds of work (256K elements) ends long before the host has returned through
    Python, so it would end before kscope's marker on the caller's stream too: the streams' order
    (event records and waits, the host's synchronizations) finds it all the same."""
    side = torch.cuda.Stream()

    def unjoined(a, b):
        out = torch.empty_like(a)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            out.copy_(a + b)
        return out

    def joined(a, b):
        out = unjoined(a, b)
        torch.cuda.current_stream().wait_stream(side)
        return out

    def synchronized(a, b):
        out = unjoined(a, b)
        side.synchronize()
        return out

    flagged = evaluated(unjoined, n=1 << 18)
    assert "unjoined_work" in findings(flagged) and row(flagged)["Verdict"] == "suspect", flagged.findings()
    for honest in (joined, synchronized):
        results = evaluated(honest, n=1 << 18)
        assert not findings(results) and row(results)["Verdict"] != "suspect", (honest.__name__, results.findings())


def test_a_thread_filling_the_output_after_the_call_returned_is_never_faster():
    def late(a, b):
        out = torch.empty_like(a)

        def fill():  # GPU MODE #162: the output is written after the timer stopped
            time.sleep(0.002)
            torch.add(a, b, out=out)

        threading.Thread(target=fill).start()
        return out

    results = evaluated(late)
    r = row(results)
    assert r["Verdict"] in ("suspect", "incorrect"), r["Reason"]
    if r["Verdict"] == "suspect":
        assert "work_after_return" in findings(results)


def test_work_on_some_calls_only_is_incorrect_on_fresh_inputs():
    kept = {}

    def every_tenth(a, b):  # GPU MODE PR #104: real work on some calls, a cached answer on the others
        kept["calls"] = kept.get("calls", 0) + 1
        if kept["calls"] % 10 == 1 or "out" not in kept:
            kept["out"] = a + b
        return kept["out"]

    assert row(evaluated(every_tenth))["Verdict"] in ("incorrect", "suspect")


def test_a_cheat_on_half_the_runs_is_caught_when_a_random_subset_of_runs_is_read():
    """checked_runs reads the warm-up and 8 of the 10 recorded runs: a candidate wrong in 5 of them
    cannot escape: at least 3 of the 8 read runs are among its 5 wrong ones. 0 reads all 11."""
    calls = []

    def every_other(a, b):
        calls.append(None)
        out = a + b
        if len(calls) % 2 == 0:  # calls 2, 4, ..., 10: recorded runs 1, 3, ..., 9
            out[0] += 1.0
        return out

    r = row(evaluated(every_other, checked_runs=8))
    assert r["Verdict"] == "incorrect" and r["CheckedRuns"] == 9 and 3 <= r["MismatchedRuns"] <= 5, r["Reason"]
    honest_every = row(evaluated(torch.add, checked_runs=0))
    assert honest_every["CheckedRuns"] == RUNS + 1 and honest_every["Correct"], honest_every["Reason"]


def test_answers_cached_by_input_address_are_incorrect():
    cache = {}

    def by_address(a, b):  # GPU MODE #162
        key = (a.data_ptr(), b.data_ptr())
        if key not in cache:
            cache[key] = a + b
        return cache[key]

    assert row(evaluated(by_address))["Verdict"] == "incorrect"


def test_the_answer_written_into_the_input_is_found():
    def in_place(a, b):  # KernelBench EVAL.md: inputs overwritten with the answer
        return a.add_(b)

    results = evaluated(in_place)
    assert {"output_aliases_input", "input_mutated"} <= findings(results), results.findings()


def test_an_uninitialised_output_hoping_for_the_references_memory_is_incorrect():
    def hopeful(a, b):  # KernelBench: reuse of the reference's memory; the candidate always runs first
        return torch.empty_like(a)

    assert row(evaluated(hopeful))["Verdict"] in ("incorrect", "suspect")


def test_lower_precision_is_incorrect():
    def in_half(a, b):
        return (a.half() @ b.half()).float()

    r = row(evaluated(in_half, matmul, matrices, n=1024))
    assert r["Verdict"] == "incorrect", r["Reason"]


def test_a_cuda_graph_replaying_the_first_inputs_is_incorrect():
    state = {}

    def replayed(a, b):
        if "graph" not in state:
            state["a"], state["b"] = a, b
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                state["out"] = state["a"] + state["b"]
            state["graph"] = graph
        state["graph"].replay()
        return state["out"]

    assert row(evaluated(replayed))["Verdict"] == "incorrect"


def test_a_patched_event_timer_is_found():
    original = torch.cuda.Event.elapsed_time

    def patched(a, b):
        torch.cuda.Event.elapsed_time = lambda self, end: 0.001  # GPU MODE #162
        return a + b

    try:
        results = evaluated(patched)
    finally:
        torch.cuda.Event.elapsed_time = original
    assert "timer_patched" in findings(results)


def test_a_persisting_l2_window_is_reset_and_found():
    cuda = ctypes.CDLL("libcuda.so.1")

    class AccessPolicyWindow(ctypes.Structure):
        _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t), ("hitRatio", ctypes.c_float),
                    ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]

    class LaunchAttributeValue(ctypes.Union):
        _fields_ = [("accessPolicyWindow", AccessPolicyWindow), ("pad", ctypes.c_char * 64)]

    CU_LIMIT_PERSISTING_L2_CACHE_SIZE, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 0x06, 1
    CU_ACCESS_PROPERTY_PERSISTING, CU_ACCESS_PROPERTY_STREAMING = 2, 1

    def persisting(a, b):  # llm.c PR #851: inputs kept in L2 across the cold-cache flush
        assert cuda.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(a.numel() * 8)) == 0
        value = LaunchAttributeValue()
        value.accessPolicyWindow = AccessPolicyWindow(a.data_ptr(), a.numel() * 4, 1.0, CU_ACCESS_PROPERTY_PERSISTING,
                                                      CU_ACCESS_PROPERTY_STREAMING)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        assert cuda.cuStreamSetAttribute(stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, ctypes.byref(value)) == 0
        return a + b

    results = evaluated(persisting)
    assert "persisting_l2" in findings(results), results.findings()


def test_no_gpu_work_is_found():
    def identity_for_free(a, b):
        return a  # the reference copies; this returns its input without any GPU work

    results = evaluated(identity_for_free, lambda a, b: a.clone())
    assert {"no_work", "output_aliases_input"} <= findings(results), results.findings()


def test_work_done_by_memory_copies_is_timed():
    def by_copy(a, b):
        out = torch.empty_like(a)
        out.copy_(a)  # a device-to-device copy, no kernel of the candidate's own
        return out

    results = evaluated(by_copy, lambda a, b: a.clone(), n=1 << 24)
    r = row(results)
    assert r["Verdict"] in ("faster", "slower", "same"), (r["Reason"], results.findings())
    roofs = results.measurements.roofs().set_index("Roof")
    # The 2^24 floats read come from DRAM (the L2 was flushed); of those written, as many as the L2
    # holds may still be in it when the copy ends (on an H100 the copy ran at 100.2% of the DRAM
    # roof counting every byte written).
    size = 4 * (1 << 24)
    from_dram = size + max(0, size - torch.cuda.get_device_properties(0).L2_cache_size)
    assert r["CandidateMedianNs"] >= from_dram / (roofs.loc["DRAM", "AtRatedClocks"] * 1e9) * 1e9


# ---- Honest candidates: a verdict, and no finding ---------------------------------------------------

def honest(results):
    r = row(results)
    assert results.findings().empty, results.findings()
    assert r["Verdict"] in ("faster", "slower", "same"), r["Reason"]
    return r


def test_a_side_stream_joined_before_returning_is_honest():
    side = torch.cuda.Stream()

    def joined(a, b):
        current = torch.cuda.current_stream()
        side.wait_stream(current)
        with torch.cuda.stream(side):
            out = a @ b
        current.wait_stream(side)
        out.record_stream(current)
        return out

    honest(evaluated(joined, matmul, matrices, n=2048))


def test_a_host_late_to_launch_the_second_kernel_in_some_runs_is_honest():
    """As a measuring worker beside busy compile workers: the call's time grows by the host's delay
    (about 30x here), its GPU work does not, and that is not varying_time."""
    calls = {"n": 0}

    def late_in_some_runs(a, b):
        calls["n"] += 1
        out = a.clone()
        if calls["n"] % 3 == 0:
            until = time.perf_counter() + 300e-6
            while time.perf_counter() < until:
                pass
        return out.add_(b)

    honest(evaluated(late_in_some_runs))


def test_several_kernels_per_call_in_place_on_its_own_buffers_and_cublas_are_honest():
    def fused_by_hand(a, b):
        out = a @ b  # cuBLAS
        out.add_(1.0)  # in place, on its own buffer
        return torch.relu(out)

    honest(evaluated(fused_by_hand, lambda a, b: torch.relu(a @ b + 1.0), matrices, n=1024))


def test_a_triton_kernel_is_honest():
    triton = pytest.importorskip("triton", reason="GPU test: triton is not installed")
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(out + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

    def triton_add(a, b):
        out = torch.empty_like(a)
        add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK=1024)
        return out

    honest(evaluated(triton_add))


def test_a_spin_of_known_cycles_is_timed_at_least_that_long():
    cycles = 2_000_000

    def spin_then_add(a, b):
        torch.cuda._sleep(cycles)
        return a + b

    results = evaluated(spin_then_add)
    r = row(results)
    rated_mhz = results.measurements.roofs().set_index("Roof").iloc[-1]["RatedClockMHz"]
    # No SM clock exceeds the rated (maximum) one: the spin takes at least cycles / that clock, less
    # what the timestamps may miss: the 2 us that tests/gpu/spin_bounds.hpp allows below a spin
    # (kGlobalTimerTickNs; an H100 once gave 1,009,490 ns for 2e6 cycles at 1980 MHz, 611 ns short).
    assert r["CandidateMedianNs"] >= cycles / rated_mhz * 1e3 - 2000, r
    assert r["Verdict"] == "slower", r["Reason"]


# ---- Tolerances and outputs on the GPU ------------------------------------------------------------

def attention_inputs(config, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    n = config["n"]
    return torch.randn(n, 64, device="cuda", generator=g), torch.randn(n, 64, device="cuda", generator=g)


def test_an_attention_mask_fill_never_blinds_the_tolerance_on_the_gpu():
    """Scores masked with finfo(float32).min made atol ~1e34: a candidate 50% wrong elsewhere was faster."""
    lowest = torch.finfo(torch.float32).min

    def causal(n):
        return torch.ones(n, n, dtype=torch.bool, device="cuda").triu(1)

    def reference(q, k):
        return (q @ k.T).masked_fill(causal(q.shape[0]), lowest)

    def reordered(q, k):  # the same scores, another kernel
        return torch.einsum("id,jd->ij", q, k).masked_fill(causal(q.shape[0]), lowest)

    def half_wrong(q, k):
        return (1.5 * (q @ k.T)).masked_fill(causal(q.shape[0]), lowest)

    def other_fill(q, k):
        return (q @ k.T).masked_fill(causal(q.shape[0]), -1e38)

    honest(evaluated(reordered, reference, attention_inputs, n=1024))
    for wrong in (half_wrong, other_fill):
        r = row(evaluated(wrong, reference, attention_inputs, n=1024))
        assert r["Verdict"] == "incorrect", (wrong.__name__, r["Reason"])


def test_dict_outputs_on_the_gpu_are_compared_by_key():
    def reference(a, b):
        return {"sum": a + b, "product": a * b}

    def reordered(a, b):
        return {"product": torch.mul(a, b), "sum": torch.add(a, b)}

    honest(evaluated(reordered, reference))
