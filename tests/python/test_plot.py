"""@kscope.analyze.plot: files written, layouts, aggregates, metric choice and its errors."""

import itertools

import pytest

import kscope
from kscope import ConfigError

QUIET = dict(verbosity=0)
PNG = b"\x89PNG\r\n\x1a\n"


def profiled(sim, **options):
    """Two implementations over (n, block, dtype); Triton's time depends on the block size."""

    def body(n, block, dtype):
        with kscope.annotate("torch"):
            sim.launch("gemm", 100.0 * n)
        with kscope.annotate("triton"):
            sim.launch("matmul_kernel", 100.0 * n * (1 + 1 / block))

    configs = list(itertools.product([1, 2, 4], [16, 64], ["f16", "bf16"]))
    return kscope.analyze.kernel(configs=configs, runs=2, **QUIET, **options)(body)


def test_line_plot_with_panels_variants_and_callback(sim, tmp_path):
    seen = []
    path = tmp_path / "line.png"
    f = kscope.analyze.plot(str(path), row_panels=["dtype"], variant_fields=["block"], variant_annotations=["triton"],
                            show_aggregate="avg", annotate_points=True, plot_callback=seen.append,
                            print_data=True)(profiled(sim))
    results = f()
    assert isinstance(results, kscope.ProfileResults)
    assert path.read_bytes()[:8] == PNG
    fig = seen[0]
    axes = fig.get_axes()
    assert len(axes) == 2 and axes[0].get_title() == "dtype=f16"
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels == ["torch", "triton block=16", "triton block=64"]
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["n=1", "n=2", "n=4", "Avg"]
    assert "test__kernel_duration (ns)" in axes[0].get_ylabel() and "avg of 2 runs" in axes[0].get_ylabel()
    # The title, then the session's one headline (with the machine: plots of several hosts meet).
    assert fig._suptitle.get_text().split("\n") == ["kscope results", results._core.headline(with_machine=True)]
    assert "test (simulated)" in fig._suptitle.get_text()


def test_bar_plot_of_a_derived_metric_normalized(sim, tmp_path):
    seen = []
    path = tmp_path / "bar.png"
    kernel = profiled(sim, derive_metric=lambda t, n, block, dtype: (n / t, "1/ns"), normalize_against="torch")
    kscope.analyze.plot(str(path), metric="<lambda>", plot_type="bar", col_panels=["dtype", "block"],
                        show_aggregate="geomean", plot_callback=seen.append)(kernel)()
    assert path.read_bytes()[:8] == PNG
    axes = seen[0].get_axes()
    assert len(axes) == 4 and "relative to torch" in axes[0].get_ylabel()


def test_plot_x_keys(sim, tmp_path):
    seen = []
    kscope.analyze.plot(str(tmp_path / "x.png"), x_keys=["n", "block"], row_panels=["dtype"],
                        plot_callback=seen.append)(profiled(sim))()
    ticks = [t.get_text() for t in seen[0].get_axes()[0].get_xticklabels()]
    assert ticks[:2] == ["n=1, block=16", "n=1, block=64"]


def test_bare_plot_decorator_and_default_filename(sim, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @kscope.analyze.plot
    @kscope.analyze.kernel(configs=[1, 2], **QUIET)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0 * n)

    f()
    assert (tmp_path / "plot.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(), r"^Cannot visualize multiple metrics \(2 > 1\) with the @kscope\.analyze\.plot decorator\. Please "
                 r"specify a metric to plot\. The metrics found are: \['test__kernel_duration', 'd'\]"),
        (dict(metric="tflops"), r"^Metric 'tflops' not found in the profile results\. Please check the metric name "
                                r"and try again\. The metrics found are"),
        (dict(metric="d", x_keys=["size"]), r"Field 'size' is not present in the DataFrame. Available fields"),
        (dict(metric="d", x_keys=["n"], row_panels=["n"]), r"x_keys cannot contain fields used in row_panels"),
        (dict(metric="d", col_panels=["block"]), r"Field 'block' is not a config parameter"),
    ],
)
def test_plot_errors(sim, tmp_path, options, message):
    def d(t, n):
        return t / n, "ns"

    @kscope.analyze.plot(str(tmp_path / "e.png"), **options)
    @kscope.analyze.kernel(configs=[1, 2], derive_metric=d, **QUIET)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 1.0)

    with pytest.raises(ConfigError, match=message):
        f()


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(plot_type="pie"), "plot_type must be 'line', 'bar' or 'roofline'"),
        (dict(show_aggregate="median"), "show_aggregate must be None, 'avg' or 'geomean'"),
        (dict(row_panels="dtype"), r"row_panels must be a list of names, e.g. \['dtype'\]"),
    ],
)
def test_plot_option_errors(options, message):
    with pytest.raises(ConfigError, match=message):
        kscope.analyze.plot("p.png", **options)


def test_plot_needs_a_kernel_function():
    with pytest.raises(TypeError, match="put it above @kscope.analyze.kernel"):
        kscope.analyze.plot("p.png")(lambda: None)
