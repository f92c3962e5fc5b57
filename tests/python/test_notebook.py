"""kscope in Jupyter: ProfileResults' HTML view and @kscope.analyze.plot's figure."""

import itertools
import re

import kscope
from kscope import _html, _notebook

QUIET = dict(verbosity=0)


def text_of(markup):
    return re.sub(r"<[^>]+>", " ", markup)


def test_html_has_the_session_line_and_flags_unstable_rows(sim):
    sim.set_clock_readings([(1980.0, 3201.0), (1755.0, 3201.0)])
    durations = itertools.cycle([100.0, 900.0, 100.0, 2000.0])

    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=4, **QUIET)
    def f(n):
        with kscope.annotate("steady"):
            sim.launch("steady_kernel", 100.0 * n)
        with kscope.annotate("noisy<&>"):
            sim.launch("noisy_kernel", next(durations) * n)

    results = f()
    markup = results._repr_html_()
    df = results.to_dataframe()
    session = text_of(markup)
    assert "backend test (simulated)" in session and "cache_control all" in session
    assert "clock_control none" in session and "observed SM clock" in session
    assert "<th>Flags</th>" in markup and "<th>n</th>" in markup
    rows = re.findall(r"<tr( style=[^>]*)?>(.*?)</tr>", markup.split("<tbody>")[1])
    assert len(rows) == len(df) == 4
    unstable = df["StableMeasurement"].eq(False).tolist()
    assert unstable == [False, True, False, True]  # the noisy annotation only
    for (style, cells), flagged in zip(rows, unstable):
        assert bool(style) == flagged and ("unstable" in cells) == flagged
    assert "noisy&lt;&amp;&gt;" in markup and "noisy<&>" not in markup  # escaped
    assert "4 rows, 2 flagged" in session


def test_html_cuts_long_results_and_names_what_it_left_out(sim):
    @kscope.analyze.kernel(configs=list(range(1, 41)), runs=2, **QUIET)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("k", 10.0 * n)

    markup = f()._repr_html_()
    assert markup.split("<tbody>")[1].count("<tr") == _html.MAX_ROWS
    assert "10 more rows" in markup


def test_flags_name_throttling_and_unconverged_rows_only_when_known():
    row = {"StableMeasurement": True, "ThrottledRuns": 2, "Converged": False, "ThermalPauses": 0}
    assert _html._flags(row) == "throttled 2, not converged"
    assert _html._flags({"StableMeasurement": None, "ThrottledRuns": float("nan"), "Converged": None}) == ""


def test_plot_returns_its_figure_for_styling_and_stays_out_of_a_terminal(sim, tmp_path):
    @kscope.analyze.plot(str(tmp_path / "p.png"))
    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=2, **QUIET)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("k", 100.0 * n)

    results = f()
    assert not _notebook.in_notebook()
    assert results.figure.get_axes()[0].get_legend().get_texts()[0].get_text() == "k"
    results.figure.savefig(tmp_path / "restyled.png")
    assert (tmp_path / "restyled.png").read_bytes()[:4] == b"\x89PNG"
