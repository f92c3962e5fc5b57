"""kscope.analyze.lines on the simulated backend's synthetic PC samples: the line table and its
attribution, the raw and per-kernel tables, the views (listing, notebook HTML, plot), save and load,
the comparison, and the refusals. Every count is exact: the simulated GPU shares a launch's
duration x SM clock x SMs / 2^period samples out over its code's stall weights."""

import math

import pandas as pd
import pytest

import kscope
from kscope import BackendError, ConfigError, SweepWarning
from test_derived_frames import expect_typed

FILE = "/src/softmax.py"
SOURCE = """@triton.jit
def softmax_kernel(out_ptr, in_ptr, n):
    row = tl.program_id(0)
    x = tl.load(in_ptr + row * n + tl.arange(0, 1024))
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    tl.store(out_ptr + row * n + tl.arange(0, 1024), e / s)
"""
FAST = dict(verbosity=0, runs=3)


def code(load=60.0):
    """The load on line 4, the reductions of tl.max and tl.sum inlined on lines 5 and 7, a store."""
    kernel = "softmax_kernel"
    return [
        dict(pc_offset=0x80, sass="LDG.E.128 R4, desc[UR4][R2.64]", source=[(FILE, 4, kernel)],
             stalls={"long_scoreboard": load, "selected": 2}, executed=64, thread_executed=2048),
        dict(pc_offset=0x100, sass="SHFL.BFLY PT, R9, R8, 0x10, 0x1f",
             source=[("/triton/language/standard.py", 190, "max"), (FILE, 5, kernel)],
             stalls={"short_scoreboard": 10}, executed=64, thread_executed=1024),
        dict(pc_offset=0x180, sass="MUFU.EX2 R10, R10", source=[(FILE, 6, kernel)], stalls={"mio_throttle": 8}),
        dict(pc_offset=0x200, sass="FADD R11, R10, R11",
             source=[("/triton/language/standard.py", 280, "sum"), (FILE, 7, kernel)], stalls={"wait": 12}),
        dict(pc_offset=0x280, sass="STG.E.128 desc[UR4][R6.64], R12", source=[(FILE, 8, kernel)],
             stalls={"lg_throttle": 8}),
    ]


def softmax(sim, **options):
    sim.set_code("softmax_kernel", code())
    sim.set_source_text(FILE, SOURCE)

    @kscope.analyze.lines(configs=[(1024,), (4096,)], **{**FAST, **options})
    def run(n):
        with kscope.annotate("softmax"):
            sim.launch("softmax_kernel", 10.0 * n)

    return run


def test_one_row_per_line_and_stall_reason_the_load_first(sim):
    df = softmax(sim)().to_dataframe()
    assert list(df.columns[:3]) == ["Annotation", "n", "Kernel"]
    first = df.iloc[0]
    assert (first.n, first.Line, first.StallReason) == (1024, 4, "long_scoreboard")
    assert first.LineText.strip() == "x = tl.load(in_ptr + row * n + tl.arange(0, 1024))"
    assert first.LineSharePct == pytest.approx(62.0, abs=0.1)
    assert df.groupby("n").SharePct.sum().tolist() == pytest.approx([100.0, 100.0])
    # 3 recorded runs of a 10.24 us launch at 2^10 cycles on 132 SMs at 1980 MHz.
    per_launch = round(10.0 * 1024 * 1.98 * 132 / 1024)
    assert df[df.n == 1024].Samples.sum() == 3 * per_launch


def test_inlined_helpers_count_on_the_calling_line(sim):
    df = softmax(sim)().to_dataframe()
    sum_line = df[(df.n == 1024) & (df.Line == 7)].iloc[0]
    assert sum_line.InlinedFrom == "sum (standard.py:280)"
    assert sum_line.File == FILE
    # Every sample is on a line of the user's file.
    assert (df.File == FILE).all()


def test_executed_instructions_and_thread_efficiency_per_line(sim):
    df = softmax(sim)().to_dataframe()
    load = df[(df.n == 1024) & (df.Line == 4)].iloc[0]
    assert load.InstExecuted == 3 * 64
    assert load.ThreadEfficiencyPct == pytest.approx(100.0)
    assert df[(df.n == 1024) & (df.Line == 5)].iloc[0].ThreadEfficiencyPct == pytest.approx(50.0)
    exp = df[(df.n == 1024) & (df.Line == 6)].iloc[0]  # its code given no executed count
    assert exp.InstExecuted == 0 and pd.isna(exp.ThreadEfficiencyPct)


def test_instructions_kernels_and_top(sim):
    results = softmax(sim)()
    raw = results.instructions()
    shfl = raw[(raw.n == 1024) & (raw.PcOffset == 0x100)].iloc[0]
    assert shfl.Sass == "SHFL.BFLY PT, R9, R8, 0x10, 0x1f"
    assert (shfl.File, shfl.Line, shfl.InlinedAt) == ("/triton/language/standard.py", 190, "softmax_kernel (softmax.py:5)")
    kernels = results.kernels()
    assert kernels.Launches.tolist() == [3, 3]
    assert kernels.SamplingPeriodCycles.tolist() == [1024, 1024]
    top = results.top(2)
    assert top.groupby("n").size().tolist() == [2, 2]
    assert top.iloc[0].DominantStall == "long_scoreboard"
    assert top.iloc[0].DominantStallPct == pytest.approx(100 * 60 / 62, abs=0.5)
    assert results.sweep.to_dataframe().Metric.iloc[0] == "test__kernel_duration"


def test_every_table_is_typed_by_its_engine_column_table(sim):
    # The columns and their types are the engine's (_core.derived_columns()), through the one conversion.
    results = softmax(sim)()
    expect_typed(results.to_dataframe(), "lines", ["n"])
    expect_typed(results.instructions(), "instructions", ["n"])
    expect_typed(results.kernels(), "line_kernels", ["n"])
    expect_typed(results.compare(results), "line_comparison", ["n"])
    assert results.to_dataframe()["Line"].dtype == "Int64" and results.kernels()["n"].tolist() == [1024, 4096]


def test_listing_html_and_plot(sim, tmp_path):
    results = softmax(sim)()
    text = str(results)
    assert "softmax [n=1024]  softmax_kernel" in text and "long_scoreboard" in text and "softmax.py:4" in text
    page = results._repr_html_()
    assert "x = tl.load(in_ptr + row * n + tl.arange(0, 1024))" in page
    assert "long_scoreboard" in page and "%" in page
    assert "def softmax_kernel(out_ptr, in_ptr, n):" in page  # the source around the sampled lines
    fig = results.plot(tmp_path / "top.png", top=3)
    assert (tmp_path / "top.png").stat().st_size > 0
    assert len(fig.axes) == 2  # a panel per kernel (one per config)
    assert len(fig.axes[0].get_yticklabels()) == 3


def test_saved_and_loaded(sim, tmp_path):
    results = softmax(sim)()
    path = tmp_path / "lines.json"
    results.save(path)
    back = kscope.load_lines(path)
    pd.testing.assert_frame_equal(back.to_dataframe(), results.to_dataframe())
    pd.testing.assert_frame_equal(back.kernels(), results.kernels())
    assert str(back) == str(results)
    assert len(kscope.load(path).to_dataframe()) == 2  # its sweep, as any results file


def test_compared_line_by_line(sim):
    before = softmax(sim)()
    sim.set_code("softmax_kernel", code(load=5.0))
    sim.set_source_text(FILE, SOURCE)

    @kscope.analyze.lines(configs=[(1024,), (4096,)], **FAST)
    def after(n):
        with kscope.annotate("softmax"):
            sim.launch("softmax_kernel", 10.0 * n)

    diff = after().compare(before)
    assert diff.iloc[0].Line == 4
    assert diff.iloc[0].DeltaPct < -30
    with pytest.raises(TypeError, match="compare"):
        after().compare("before")


def test_too_coarse_and_dropped_samples_are_said(sim):
    sim.set_dropped_samples(5)
    with pytest.warns(SweepWarning, match="too coarse"):
        results = softmax(sim, sampling_period=24)()
    note = results.kernels().Note.iloc[0]
    assert "too coarse" in note and "sampling_period=21" in note and "15 samples were dropped" in note


def test_refusals_name_the_fix(sim):
    with pytest.raises(ConfigError, match="sampling_period must be an integer from 5 to 31"):
        kscope.analyze.lines(sampling_period=3)
    with pytest.raises(ConfigError, match="does not take metrics="):
        kscope.analyze.lines(metrics=["dram__bytes_read.sum"])
    with pytest.raises(ConfigError, match="does not take output_prefix="):
        kscope.analyze.lines(output_prefix="out/")
    with pytest.raises(TypeError, match="unexpected keyword argument 'rnus'"):
        kscope.analyze.lines(rnus=3)
    sim.deny_sampling("ERR_NVGPUCTRPERM: profiling is restricted to administrators")
    with pytest.raises(BackendError, match="ERR_NVGPUCTRPERM"):
        softmax(sim)()


def test_stall_reasons_are_described():
    reasons = kscope.stall_reasons()
    assert {"long_scoreboard", "barrier", "math_pipe_throttle", "wait", "selected"} <= set(reasons.StallReason)
    assert reasons.Description.str.len().min() > 20


def test_the_docs_describe_every_stall_reason():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "lines.md").read_text()
    missing = [name for name in kscope.stall_reasons().StallReason if f"| `{name}` |" not in page]
    assert missing == [], f"docs/lines.md's table of stall reasons leaves out {missing}"
