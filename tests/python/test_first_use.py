"""What a first-time user meets: help(), `python -m kscope`, the options table of docs/python.md,
an option given to the call instead of the decorator, runs=1 (Nsight Python's default), the
printed table against the DataFrame, and the kscope program's words without a GPU."""

import ast
import os
import pydoc
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import kscope
from kscope import ConfigError
from kscope._options import OPTIONS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_PATH = str(Path(kscope.__file__).resolve().parents[1])
PROGRAM = Path(kscope.__file__).resolve().parents[2] / "kscope"  # the build tree's kscope program


def test_help_shows_the_options_with_their_types_and_what_kernel_returns():
    signature = pydoc.render_doc(kscope.analyze.kernel, renderer=pydoc.plaintext).splitlines()[2]
    assert "-> 'None'" not in signature and "-> None" not in signature, signature
    assert "ProfiledFunction" in signature and "KernelDecorator" in signature, signature
    assert "runs: int = 1" in signature, signature  # evaluated, not the string 'int'
    assert "'int'" not in signature, signature


def test_python_dash_m_kscope_runs_the_kscope_command():
    done = subprocess.run([sys.executable, "-m", "kscope", "--version"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=PACKAGE_PATH), timeout=60)
    if "has no kscope program" in done.stderr:
        pytest.skip(f"this kscope package holds no program: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"kscope {kscope.__version__}"), done.stdout


def test_the_options_table_of_the_python_guide_has_every_option_with_its_default():
    text = (ROOT / "docs" / "python.md").read_text()
    section = text[text.index("## Options"):text.index("## Semantics worth knowing")]
    documented = {}
    for names, default in re.findall(r"^\| ((?:`\w+`(?:, )?)+) \| `([^`]*)` \|", section, re.M):
        for name in re.findall(r"`(\w+)`", names):
            documented[name] = ast.literal_eval(default)
    assert set(documented) == set(OPTIONS) | {"configs"}
    for name, option in OPTIONS.items():
        assert option.check(name, documented[name]) == option.check(name, option.default), name
    assert "runs=1" not in section or "gives no statistics" in section


def test_an_option_given_to_the_call_is_named_as_the_decorators(sim):
    @kscope.analyze.kernel
    def g(n):
        with kscope.annotate("k"):
            sim.launch("k", 100.0 * n)

    with pytest.raises(ConfigError) as info:
        g(configs=[1], runs=5)
    assert isinstance(info.value, TypeError)
    assert str(info.value) == ("g() got runs=5: an option of kscope.analyze.kernel, not a parameter of g. Give it to "
                               "the decorator, @kscope.analyze.kernel(runs=5); a call takes only configs=[...] or one "
                               "config's values")
    assert len(g(configs=[1]).to_dataframe()) == 1  # the call itself was fine


def test_a_parameter_named_like_an_option_is_the_functions(sim):
    @kscope.analyze.kernel
    def g(runs):
        with kscope.annotate("k"):
            sim.launch("k", 100.0 * runs)

    assert g(runs=3).to_dataframe()["runs"].tolist() == [3]


def test_one_recorded_run_says_that_it_gives_no_statistics(sim):
    @kscope.analyze.kernel(configs=[1, 2], runs=1)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("k", 100.0 * n)

    with pytest.warns(kscope.ProfilerWarning) as caught:
        df = f().to_dataframe()
    assert df["StdDev"].isna().all()
    [message] = [str(w.message) for w in caught if "one recorded run" in str(w.message)]
    assert message == ("every row rests on one recorded run (runs = 1): one sample has no spread, so StdDev, the "
                       "95% CI and RelativeStdDevPct are NaN and a comparison cannot judge them. Record more runs: "
                       "runs=10 or more gives an interval worth reading")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kscope.analyze.kernel(configs=[1], runs=2)(f.__wrapped__)()  # two runs: nothing to say


def test_the_printed_table_shows_the_dataframes_statistics(sim):
    @kscope.analyze.kernel(configs=[1], runs=20)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("k", 10000.123456789)  # equal durations: their sum / 20 is not exactly one of them

    results = f()
    df = results.to_dataframe()
    assert df["StdDev"].tolist() == [0.0] and df["AvgValue"].tolist() == [10000.123456789]
    assert "e-1" not in str(results), str(results)
    assert repr(results).startswith("<kscope.ProfileResults: 1 summary row>\n")


def test_the_kscope_program_without_a_gpu_points_at_its_own_doctor_and_chip_flag():
    if not os.access(PROGRAM, os.X_OK):
        pytest.skip(f"no kscope program at {PROGRAM}")
    doctor = subprocess.run([str(PROGRAM), "doctor"], capture_output=True, text=True, timeout=120)
    assert "Backend::" not in doctor.stdout and "automatic" not in doctor.stdout, doctor.stdout
    if doctor.returncode != 2:
        pytest.skip("a GPU can measure here: kscope metrics reads it")
    metrics = subprocess.run([str(PROGRAM), "metrics"], capture_output=True, text=True, timeout=120)
    assert metrics.returncode != 0
    assert "Run `kscope doctor`" in metrics.stderr and "kscope.doctor()" not in metrics.stderr, metrics.stderr
    assert "--chip GH100" in metrics.stderr, metrics.stderr
