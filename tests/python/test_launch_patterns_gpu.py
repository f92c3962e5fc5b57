"""A kernel measures the same however it is launched from PyTorch: each launch pattern against the
same work launched plainly on the default stream, with the cupti, events and counters backends, and
evaluate() finding nothing in a correct program of it; two kernels on two streams at once, both
measured with their overlap reported; another process running kernels on the GPU, flagged.

torch.add of 2^24 floats (192 MiB moved, about 60 us cold on an H100) is memory-bound: beside
kscope's L2 flush it read 11% slow on a side stream before the flush was ordered with side streams.
Medians of 30 cold runs within 2% of the plain launch's; DRAM bytes within 1%. The events backend's
region holds a stream's wait for an event (microseconds), so it times 2^27 floats (about 0.5 ms). Its
value also holds any wait of the GPU for the host before the region's first work (Python enqueueing on
a side stream after the GPU reached the region's start event; a graph's launch; a thread starting),
which it flags per run with its size (HostGapNs): the value less that wait must be the plain launch's."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import kscope

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

N = 1 << 24
EVENTS_N = 1 << 27
RUNS = 30
DURATION_PCT, COUNTER_PCT = 2.0, 1.0
DURATION = {"cupti": "cupti__kernel_duration", "events": "events__region_duration"}
BYTES = ["dram__bytes_read.sum", "dram__bytes_write.sum"]


class Add:
    """c = a + b, and the streams, threads and graphs that launch it."""

    def __init__(self, n):
        self.a = torch.ones(n, device="cuda")
        self.b = torch.ones(n, device="cuda")
        self.c = torch.empty(n, device="cuda")
        self.side = torch.cuda.Stream()  # non-blocking, as every PyTorch stream
        self.graphs = {}

    def plain(self):
        torch.add(self.a, self.b, out=self.c)

    def on_side_stream(self):
        with torch.cuda.stream(self.side):
            torch.add(self.a, self.b, out=self.c)

    def joined_both_ways(self):
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            torch.add(self.a, self.b, out=self.c)
        torch.cuda.current_stream().wait_stream(self.side)

    def from_thread(self):
        thread = threading.Thread(target=self.plain)
        thread.start()
        thread.join()

    def from_thread_side_stream(self):
        thread = threading.Thread(target=self.on_side_stream)
        thread.start()
        thread.join()

    def graph(self, mode):
        if mode not in self.graphs:
            graph = torch.cuda.CUDAGraph()
            torch.cuda.synchronize()
            with torch.cuda.graph(graph, capture_error_mode=mode):  # captured on a side stream of torch's
                torch.add(self.a, self.b, out=self.c)
            torch.cuda.synchronize()
            self.graphs[mode] = graph
        return self.graphs[mode]

    def graph_on_side_stream(self, mode):
        graph = self.graph(mode)
        with torch.cuda.stream(self.side):
            graph.replay()


def patterns(add):
    """(name, launch, whether its work may stay on a side stream past the call)."""
    for mode in ("global", "thread_local"):
        add.graph(mode)  # captured before the measurement
    return [
        ("non-blocking stream", add.on_side_stream, True),
        ("side stream joined both ways", add.joined_both_ways, False),
        ("another thread", add.from_thread, False),
        ("another thread, side stream", add.from_thread_side_stream, True),
        ("graph on a side stream, captured global", lambda: add.graph_on_side_stream("global"), True),
        ("graph on a side stream, captured thread_local", lambda: add.graph_on_side_stream("thread_local"), True),
    ]


def profiled(launch, backend, **options):
    def body(n):
        with kscope.annotate("add"):
            launch()

    options.setdefault("cache_control", "all")
    return kscope.analyze.kernel(configs=[(1,)], runs=RUNS, backend=backend, verbosity="silent", **options)(body)()


def row(results, metric):
    df = results.to_dataframe()
    return df[df["Metric"] == metric].iloc[0]


def within(value, plain, pct, what):
    apart = 100 * (value - plain) / plain
    print(f"[result] {what}: {value:.4g} against {plain:.4g} plainly ({apart:+.2f}%)")
    return abs(apart) <= pct


@pytest.fixture(scope="module")
def add():
    return Add(N)


def measured_work(results, metric):
    """The summary row, and the median of each run's value less the GPU's flagged wait for the host
    (HostGapNs, events only: the value itself where the backend times kernels)."""
    samples = results.raw_dataframe()
    samples = samples[samples["Metric"] == metric]
    gaps = samples["HostGapNs"].astype(float)
    return row(results, metric), float((samples["Value"] - gaps.fillna(0)).median()), gaps


@pytest.mark.parametrize("backend", ["cupti", "events"])
def test_every_pattern_measures_as_the_plain_launch(backend, add):
    """cupti: each pattern's kernel within 2% of the plain launch's. events: each pattern's value
    within 2%, except by the GPU's wait for the host before the region's first work, which is flagged
    per run with its size (HostGapNs; HostGapRuns counts them): the value less it within 2%, or every
    run flagged."""
    work = add if backend == "cupti" else Add(EVENTS_N)
    metric = DURATION[backend]
    plain_row, plain, _ = measured_work(profiled(work.plain, backend), metric)
    print(f"[result] {backend}, plain launch: median {plain_row['Median']:.4g}, {plain_row['HostGapRuns']} of "
          f"{plain_row['NumRuns']} runs with a host gap")
    failed = []
    for name, launch, _ in patterns(work):
        r, less_gap, gaps = measured_work(profiled(launch, backend), metric)
        if backend == "events":
            assert gaps.notna().all(), f"{name}: the events backend did not tell whether the GPU waited for the host"
            print(f"[result] events, {name}: {r['HostGapRuns']} of {r['NumRuns']} runs flagged host_gap, median gap "
                  f"{gaps.median() / 1e3:.1f} us, median value {r['Median']:.4g}")
        else:
            assert gaps.isna().all() and r["HostGapRuns"] == 0, (name, r)  # cupti times the kernels alone
        close = within(less_gap, plain, DURATION_PCT, f"{backend}, {name}" + (" less the host gap" if backend == "events" else ""))
        # A region whose every run is flagged tells the user its value holds host time: with Python,
        # a thread that takes over also hands the GIL back and forth between the region's launches,
        # waits after the first work that no first-work probe sees (+2.5-3.1% on an H100).
        flagged_throughout = backend == "events" and r["HostGapRuns"] == r["NumRuns"]
        if not close and not flagged_throughout:
            failed.append(name)
        assert r["OverlappedRuns"] == 0, (name, r)
    assert not failed, f"{backend}: more than {DURATION_PCT}% from the plain launch: {failed}"


def test_counters_measure_every_pattern_as_the_plain_launch(add):
    for replay in ("kernel", "range"):
        plain = profiled(add.plain, "counters", metrics=BYTES, replay_mode=replay)
        for name, launch, _ in patterns(add):
            graph = name.startswith("graph")
            if graph and replay == "kernel":
                with pytest.raises(kscope.errors.SweepError, match="CUDA graph"):
                    profiled(launch, "counters", metrics=BYTES, replay_mode=replay)
                continue
            r = profiled(launch, "counters", metrics=BYTES, replay_mode=replay)
            for metric in BYTES:
                assert within(row(r, metric)["Median"], row(plain, metric)["Median"], COUNTER_PCT,
                              f"counters {metric} ({replay} replay), {name}"), name


def test_evaluate_finds_nothing_in_a_correct_program_of_each_pattern(add):
    def inputs(config, seed):
        generator = torch.Generator(device="cuda").manual_seed(seed)
        return (torch.rand(config["n"], device="cuda", generator=generator),)

    # Each copies the run's input where its launch (a graph among them) reads it, and returns a copy of
    # the sum: an output of its own, never the other side's or an earlier run's.
    for name, launch, leaves_side_work in patterns(add):
        def candidate(a, launch=launch, leaves_side_work=leaves_side_work):
            add.a.copy_(a)
            add.side.wait_stream(torch.cuda.current_stream())  # a side stream's launch reads the copy
            launch()
            if leaves_side_work:
                torch.cuda.current_stream().wait_stream(add.side)  # the caller's stream waits for it
            return add.c.clone()

        def reference(a):
            return torch.add(a, add.b)

        results = kscope.evaluate(candidate, reference, inputs, [{"n": N}], runs=10, verbosity="silent")
        r = results.to_dataframe().iloc[0]
        print(f"[result] evaluate, {name}: {r['Verdict']}, speedup {r['Speedup']:.3f}")
        assert results.findings().empty, (name, results.findings())
        assert r["Verdict"] not in ("suspect", "incorrect"), (name, r["Reason"])


def test_cublas_on_a_user_stream_measures_as_on_the_default_stream():
    n = 2048
    x, y = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    user = torch.cuda.Stream()

    def on_default():
        torch.matmul(x, y)

    def on_user_stream():
        with torch.cuda.stream(user):
            torch.matmul(x, y)

    on_default()
    torch.cuda.synchronize()
    summed = {"combine_kernel_metrics": lambda p, q: p + q}  # a GEMM may take more than one kernel
    for backend, metric in DURATION.items():  # events: less the GPU's flagged wait for the host, as above
        _, plain, _ = measured_work(profiled(on_default, backend, **summed), metric)
        r, less_gap, _ = measured_work(profiled(on_user_stream, backend, **summed), metric)
        assert within(less_gap, plain, DURATION_PCT, f"{backend}, cuBLAS on a user stream ({r['HostGapRuns']} runs "
                      f"flagged host_gap)")
    plain = row(profiled(on_default, "counters", metrics=BYTES[:1], **summed), BYTES[0])["Median"]
    assert within(row(profiled(on_user_stream, "counters", metrics=BYTES[:1], **summed), BYTES[0])["Median"], plain,
                  COUNTER_PCT, "counters, cuBLAS on a user stream")


def test_torch_compile_reduce_overhead_measures_as_its_kernel_launched_directly(add):
    torch._dynamo.mark_static_address(add.a)  # the CUDA graph reads them where they are: no input copies
    torch._dynamo.mark_static_address(add.b)

    def f():
        return add.a + add.b

    graphed = torch.compile(f, mode="reduce-overhead")
    direct = torch.compile(f)
    for _ in range(3):  # compile; then CUDA graph trees warm up, record, and replay from then on
        graphed()
        direct()
    torch.cuda.synchronize()
    plain = row(profiled(direct, "cupti"), DURATION["cupti"])
    r = row(profiled(graphed, "cupti"), DURATION["cupti"])
    assert r["Kernel"] == plain["Kernel"], (r["Kernel"], plain["Kernel"])
    assert within(r["Median"], plain["Median"], DURATION_PCT, "cupti, torch.compile(mode='reduce-overhead')")
    plain = profiled(direct, "counters", metrics=BYTES, replay_mode="range")
    r = profiled(graphed, "counters", metrics=BYTES, replay_mode="range")
    read, write = BYTES
    assert within(row(r, read)["Median"], row(plain, read)["Median"], COUNTER_PCT,
                  f"counters {read} (range replay), torch.compile(mode='reduce-overhead')")
    # DRAM writes are not comparable to 1%: the range ends with up to an L2 of the output still dirty
    # in the cache, and how much depends on where the output lies (the graph writes its static
    # output, the plain call a fresh block of the caching allocator: other L2 sets, other evictions;
    # 2.8% fewer bytes on an H100). What the hardware guarantees: every output byte not left in the
    # L2 was written, and nothing more than the output was.
    out_bytes = add.a.numel() * add.a.element_size()
    l2_bytes = torch.cuda.get_device_properties(add.a.device).L2_cache_size
    for results, how in ((plain, "without graphs"), (r, "reduce-overhead")):
        written = row(results, write)["Median"]
        print(f"[result] counters {write} (range replay), torch.compile {how}: {written:.4g}, "
              f"bound [{out_bytes - l2_bytes:.4g}, {out_bytes * (1 + COUNTER_PCT / 100):.4g}]")
        assert out_bytes - l2_bytes <= written <= out_bytes * (1 + COUNTER_PCT / 100), (how, written)


def test_two_kernels_at_once_on_two_streams_are_both_measured_with_their_overlap_reported():
    n = 2048
    x = torch.randn(n, n, device="cuda")
    first, second = torch.cuda.Stream(), torch.cuda.Stream()

    def pair():
        with torch.cuda.stream(first):
            torch.matmul(x, x)
        with torch.cuda.stream(second):
            torch.matmul(x, x)

    pair()
    torch.cuda.synchronize()
    results = profiled(pair, "cupti", combine_kernel_metrics=lambda p, q: p + q)
    r = row(results, DURATION["cupti"])
    samples = results.raw_dataframe()
    print(f"[result] two GEMMs at once: {r['Median'] / 1e3:.1f} us added, {r['OverlappedRuns']} of {r['NumRuns']} runs "
          f"overlapped, median overlap {samples['OverlapNs'].median() / 1e3:.1f} us")
    assert r["OverlappedRuns"] > 0 and (samples["OverlapNs"] > 0).any(), r
    assert "|" in r["Kernel"], r["Kernel"]  # both kernels measured


def test_another_process_running_kernels_is_flagged_on_the_runs_it_touched():
    spinner = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time, torch
        x = torch.randn(4096, 4096, device="cuda")
        x @ x; torch.cuda.synchronize()
        print("spinning", flush=True)
        end = time.time() + float(sys.argv[1])
        while time.time() < end:
            x @ x; torch.cuda.synchronize()
    """), "8"], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert spinner.stdout.readline().strip() == "spinning"
        time.sleep(1.5)  # NVML samples process utilization every 1/6 s to 1 s: let it see the spinner
        x = torch.ones(1 << 26, device="cuda")

        def scale():
            x.mul_(1.0)

        shared = row(profiled(scale, "cupti", cache_control="none"), DURATION["cupti"])
    finally:
        spinner.wait(timeout=60)
    time.sleep(0.5)
    alone = row(profiled(scale, "cupti", cache_control="none"), DURATION["cupti"])
    print(f"[result] another process on the GPU: {shared['OtherProcessRuns']} of {shared['NumRuns']} runs flagged; "
          f"after it exited {alone['OtherProcessRuns']}")
    assert shared["OtherProcessRuns"] > 0, shared
    assert alone["OtherProcessRuns"] == 0, alone
