"""kscope in Jupyter: ProfileResults' HTML view and @kscope.analyze.plot's figure."""

import itertools
import sys
import re

import pytest

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
    assert unstable == [False, False, True, True]  # the noisy annotation only (its rows after the steady ones)
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


def test_plain_progress_lines_per_config_with_eta_when_tqdm_is_missing(sim, monkeypatch, capsys):
    monkeypatch.setattr(_notebook, "in_notebook", lambda: True)
    monkeypatch.setattr(_notebook, "_progress_bar_class", lambda: None)

    @kscope.analyze.kernel(runs=3)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("k", 100.0 * n)

    f(configs=[(1,), (2,)])
    lines = capsys.readouterr().err.splitlines()
    assert "[kscope] config 1/2 (n=1): run 0/4, elapsed" in lines[0] and lines[0].endswith("ETA --")
    assert any(line.startswith("[kscope] config 2/2 (n=2): run 4/4") and "ETA 0.0 s" in line for line in lines)
    assert lines[-1].startswith("[kscope] profiled 2 configs in")
    f(configs=[(3,)])  # a second call draws its own progress
    assert "config 1/1 (n=3)" in capsys.readouterr().err


def test_progress_is_off_when_silent(sim, monkeypatch, capsys):
    monkeypatch.setattr(_notebook, "in_notebook", lambda: True)

    @kscope.analyze.kernel(configs=[(1,)], runs=2, **QUIET)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("k", 100.0)

    f()
    assert capsys.readouterr().err == ""


def test_an_interrupt_inside_the_progress_display_stops_the_sweep_and_keeps_what_was_measured(sim, monkeypatch):
    monkeypatch.setattr(_notebook, "in_notebook", lambda: True)

    interrupts = [KeyboardInterrupt()]  # one, in the first call

    class Interrupting(_notebook.NotebookProgress):
        def __call__(self, event, state):
            if event == "config_finished" and interrupts:
                raise interrupts.pop()
            super().__call__(event, state)

    monkeypatch.setattr(_notebook, "progress_display", lambda show: Interrupting(None, sys.stderr))

    @kscope.analyze.kernel(runs=2)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("k", 100.0 * n)

    with pytest.raises(kscope.SweepInterrupted) as caught:
        f(configs=[(1,), (2,), (3,)])
    kept = caught.value.partial_results.to_dataframe()
    assert kept["n"].tolist() == [1]
    assert len(f(configs=[(4,)])) == 1  # the next profiled call works
