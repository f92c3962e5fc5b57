"""Launch patterns on the simulated backend (CPU): its streams made with CUDA's flags, the L2 flush
that slows a kernel it overlaps, kernels of one region at the same time, and another process on the
GPU; the columns that report them in both tables."""

import pytest

import kscope

QUIET = {"verbosity": "silent", "runs": 4}


def measured(sim, launch, **options):
    @kscope.analyze.kernel(configs=[(1,)], **{**QUIET, "cache_control": "all", **options})
    def f(n):
        with kscope.annotate("k"):
            launch()

    return f()


def test_a_kernel_measures_the_same_on_every_stream_and_thread(sim):
    import threading

    sim.make_stream(20)  # non-blocking, as a PyTorch side stream
    sim.make_stream(21, non_blocking=False)
    plain = measured(sim, lambda: sim.launch("k", 10_000.0)).to_dataframe()["Median"].iloc[0]
    assert plain == 10_000.0

    def from_thread():
        thread = threading.Thread(target=lambda: sim.launch("k", 10_000.0, stream=20))
        thread.start()
        thread.join()

    for launch in (lambda: sim.launch("k", 10_000.0, stream=20), lambda: sim.launch("k", 10_000.0, stream=21),
                   lambda: sim.launch("k", 10_000.0, stream=2), from_thread):
        df = measured(sim, launch).to_dataframe()
        assert df["Median"].iloc[0] == plain
        assert df["OverlappedRuns"].iloc[0] == 0


def test_the_default_streams_cannot_be_remade(sim):
    with pytest.raises(kscope.ConfigError, match="the default stream"):
        sim.make_stream(0)


def test_kernels_at_the_same_time_are_measured_with_their_overlap(sim):
    def pair():
        sim.launch("first", 30_000.0, stream=20)
        sim.launch("second", 10_000.0, stream=21)

    with pytest.warns(kscope.SweepWarning, match="ran at the same time"):
        results = measured(sim, pair, combine_kernel_metrics=lambda a, b: a + b)
    row = results.to_dataframe().iloc[0]
    assert row["Median"] == 40_000.0 and row["OverlappedRuns"] == 4
    assert (results.raw_dataframe()["OverlapNs"] == 10_000.0).all()
    span = measured(sim, pair, replay_mode="range").to_dataframe().iloc[0]
    assert span["Median"] == 30_000.0 and span["OverlappedRuns"] == 4


def test_runs_during_which_another_process_ran_are_flagged(sim):
    sim.set_max_batch_runs(2)
    sim.set_other_processes([[], [4242], []])  # batches [warm-up, 1], [2, 3], [4]
    with pytest.warns(kscope.SweepWarning, match="pid 4242"):
        results = measured(sim, lambda: sim.launch("k", 100.0), cache_control="none")
    assert results.to_dataframe()["OtherProcessRuns"].iloc[0] == 2
    assert results.raw_dataframe()["OtherProcess"].tolist() == [False, True, True, False]


def test_a_regions_wait_for_the_host_before_its_first_work_is_flagged_with_its_size(sim):
    """Timed as the events backend times a region (from its start on the default stream), a side
    stream's first launch the host issues 5 us after the GPU reached the region's start leaves the
    GPU waiting inside the region: the value holds the wait, HostGapNs says how long, HostGapRuns
    counts the runs, and a warning names the work and the backend that times the kernels alone."""
    sim.set_region_timing()
    sim.make_stream(20)
    plain = measured(sim, lambda: sim.launch("k", 10_000.0))
    assert plain.to_dataframe()["HostGapRuns"].iloc[0] == 0
    assert (plain.raw_dataframe()["HostGapNs"] == 0).all()
    with pytest.warns(kscope.SweepWarning, match=r"waited 5\.00 us for the host before the first work of annotation "
                      r"'k' \(SimulatedBackend\.launch on a non-blocking stream\).*backend='cupti' times the kernels"):
        late = measured(sim, lambda: sim.launch("k", 10_000.0, gap_ns=5_000.0, stream=20))
    row = late.to_dataframe().iloc[0]
    assert row["Metric"] == "test__region_duration"
    assert row["Median"] == 15_000.0 and row["HostGapRuns"] == 4
    samples = late.raw_dataframe()
    assert (samples["HostGapNs"] == 5_000.0).all()
    assert ((samples["Value"] - samples["HostGapNs"]) == plain.raw_dataframe()["Value"]).all()
    assert "host gap 4" in late._repr_html_()  # among the row's flags in a notebook
