"""kscope.Tool / activate / deactivate / get_active_tool: Nsight Python 1.1's activation rules,
kscope's differences (nothing active after import, NCU can be deactivated), the default backend
each tool chooses and the metrics it maps."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kscope
from kscope import BackendError, ConfigError, Tool
from kscope.tools import default_backend, tool_metrics


@pytest.fixture(autouse=True)
def no_tool():
    kscope.deactivate()
    yield
    kscope.deactivate()


def test_importing_kscope_activates_no_tool():
    # Nsight Python 1.1 activates NCU at import unless NSPY_NCU_INIT_AT_IMPORT=0; kscope's import
    # has no side effects, whatever that variable says.
    package_parent = str(Path(kscope.__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if k != "NSPY_NCU_INIT_AT_IMPORT"}
    env["PYTHONPATH"] = package_parent
    code = "import kscope; print(kscope.get_active_tool(), kscope.tools.default_backend())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "None"]


def test_tool_is_nsights_string_enum():
    assert [t.value for t in Tool] == ["ncu", "cupti"]
    assert Tool("cupti") is Tool.CUPTI and Tool.NCU == "ncu" and isinstance(Tool.NCU, str)


@pytest.mark.parametrize("tool, backend", [(Tool.NCU, "counters"), (Tool.CUPTI, "cupti")])
def test_activate_chooses_the_default_backend(tool, backend):
    assert kscope.get_active_tool() is None and default_backend() is None
    kscope.activate(tool)
    assert kscope.get_active_tool() is tool
    assert default_backend() == backend


def test_activating_the_active_tool_again_is_a_no_op():
    kscope.activate(Tool.CUPTI)
    kscope.activate(Tool.CUPTI)
    assert kscope.get_active_tool() is Tool.CUPTI


@pytest.mark.parametrize("first, second", [(Tool.NCU, Tool.CUPTI), (Tool.CUPTI, Tool.NCU)])
def test_switching_tools_while_one_is_active_is_refused(first, second):
    kscope.activate(first)
    with pytest.raises(BackendError, match=rf"kscope.Tool.{first.name} is already active; cannot switch to "
                                           rf"kscope.Tool.{second.name}: call kscope.deactivate\(\) first"):
        kscope.activate(second)
    assert kscope.get_active_tool() is first
    with pytest.raises(RuntimeError):  # 1.1's exception type, for code that catches it
        kscope.activate(second)


@pytest.mark.parametrize("value", ["cupti", None, 1, "Tool.NCU"])
def test_activate_takes_only_a_tool(value):
    with pytest.raises(ConfigError, match=r"activate\(\) takes a kscope.Tool \(kscope.Tool.NCU or kscope.Tool.CUPTI\)"):
        kscope.activate(value)
    with pytest.raises(ValueError):  # 1.1's exception type
        kscope.activate(value)
    assert kscope.get_active_tool() is None


@pytest.mark.parametrize("tool", list(Tool))
def test_deactivate_ends_either_tool_and_allows_another(tool):
    # 1.1 keeps NCU active (its injection library stays loaded); kscope loads nothing to keep.
    kscope.activate(tool)
    kscope.deactivate()
    assert kscope.get_active_tool() is None and default_backend() is None
    other = Tool.CUPTI if tool is Tool.NCU else Tool.NCU
    kscope.activate(other)
    assert kscope.get_active_tool() is other


def test_deactivate_without_a_tool_is_a_no_op():
    kscope.deactivate()
    kscope.deactivate()
    assert kscope.get_active_tool() is None


@pytest.mark.parametrize("metrics", [None, ["gpu__time_duration.sum"], ["dram__bytes_read.sum"]])
def test_without_a_tool_metrics_are_unchanged(metrics):
    assert tool_metrics(metrics) == (metrics, None)


def test_ncu_measures_nsights_default_metric_when_none_are_given():
    kscope.activate(Tool.NCU)
    assert tool_metrics(None) == (["gpu__time_duration.sum"], None)
    assert tool_metrics(("sm__cycles_elapsed.avg",)) == (["sm__cycles_elapsed.avg"], None)


def test_cupti_measures_gpu_time_duration_as_the_kernel_duration_with_a_note():
    kscope.activate(Tool.CUPTI)
    assert tool_metrics(None) == (["cupti__kernel_duration"], None)
    assert tool_metrics(["cupti__kernel_duration"]) == (["cupti__kernel_duration"], None)
    metrics, note = tool_metrics(["gpu__time_duration.sum"])
    assert metrics == ["cupti__kernel_duration"]
    assert "kscope.Tool.CUPTI is active" in note and "rows say 'cupti__kernel_duration'" in note
    assert "kscope.Tool.NCU or pass backend='counters'" in note


def test_cupti_leaves_other_metrics_to_the_metric_check():
    kscope.activate(Tool.CUPTI)
    assert tool_metrics(["dram__bytes_read.sum"]) == (["dram__bytes_read.sum"], None)



# --- analyze.kernel consults the active tool at each call -----------------------------------------


def call_settings(**given):
    """The engine settings of a call made now of a function decorated with `given`, and the note."""
    f = kscope.analyze.kernel(verbosity=0, **given)(lambda n: None)
    backend, metrics, note, _ = f._kscope_profiled.options.for_call()
    return f._kscope_profiled.options.settings("", backend, metrics), note


def test_without_a_tool_the_engine_chooses_from_the_metrics():
    settings, note = call_settings()
    assert settings.backend == kscope._core.Backend.from_metrics and note is None
    assert kscope._core.chosen_backend(settings) == kscope._core.Backend.cupti
    settings, _ = call_settings(metrics=["sm__cycles_elapsed.avg"])
    assert kscope._core.chosen_backend(settings) == kscope._core.Backend.counters


@pytest.mark.parametrize("tool, backend, metrics", [
    (Tool.NCU, "counters", ["gpu__time_duration.sum"]),
    (Tool.CUPTI, "cupti", ["cupti__kernel_duration"]),
])
def test_the_active_tool_chooses_backend_and_metrics_at_the_call(tool, backend, metrics):
    f = kscope.analyze.kernel(verbosity=0)(lambda n: None)  # decorated before activation
    kscope.activate(tool)
    b, m, note, chooser = f._kscope_profiled.options.for_call()
    settings = f._kscope_profiled.options.settings("", b, m)
    assert settings.backend == getattr(kscope._core.Backend, backend) and list(settings.metrics) == metrics
    assert chooser == f"kscope.activate(kscope.Tool.{tool.name})"
    kscope.deactivate()
    assert f._kscope_profiled.options.for_call() == (None, None, None, None)  # decided again at every call


@pytest.mark.parametrize("value, tool, backend, metrics", [
    ("ncu", Tool.NCU, "counters", ["gpu__time_duration.sum"]),
    (" CUPTI ", Tool.CUPTI, "cupti", ["cupti__kernel_duration"]),
])
def test_kscope_tool_in_the_environment_chooses_as_activate_does(monkeypatch, value, tool, backend, metrics):
    f = kscope.analyze.kernel(verbosity=0)(lambda n: None)
    monkeypatch.setenv("KSCOPE_TOOL", value)
    assert kscope.get_active_tool() is tool
    b, m, _, chooser = f._kscope_profiled.options.for_call()
    settings = f._kscope_profiled.options.settings("", b, m)
    assert settings.backend == getattr(kscope._core.Backend, backend) and list(settings.metrics) == metrics
    assert chooser == f"KSCOPE_TOOL={tool.value}"
    monkeypatch.setenv("KSCOPE_TOOL", "")  # empty: no tool
    assert kscope.get_active_tool() is None


def test_activate_wins_over_the_environment_and_deactivate_gives_it_back(monkeypatch):
    monkeypatch.setenv("KSCOPE_TOOL", "ncu")
    kscope.activate(Tool.CUPTI)  # not refused: the environment's tool is no activation
    assert kscope.get_active_tool() is Tool.CUPTI and default_backend() == "cupti"
    kscope.deactivate()
    assert kscope.get_active_tool() is Tool.NCU and default_backend() == "counters"


def test_an_unknown_tool_in_the_environment_is_named():
    os.environ["KSCOPE_TOOL"] = "nsys"  # the conftest fixture removes it again
    with pytest.raises(ConfigError, match=r"KSCOPE_TOOL='nsys' names no tool: set it to 'ncu' .* or 'cupti' "
                                          r"\(CUPTI kernel durations\), or unset it"):
        kscope.get_active_tool()


def test_an_explicit_backend_wins_over_the_active_tool():
    kscope.activate(Tool.NCU)
    settings, note = call_settings(backend="cupti")
    assert settings.backend == kscope._core.Backend.cupti and list(settings.metrics) == [] and note is None


def test_cupti_tool_measures_gpu_time_duration_as_the_kernel_duration_with_a_note():
    kscope.activate(Tool.CUPTI)
    settings, note = call_settings(metrics=["gpu__time_duration.sum"])
    assert list(settings.metrics) == ["cupti__kernel_duration"] and "kscope.Tool.CUPTI is active" in note


def test_the_cupti_tool_refuses_counter_metrics_at_the_call():
    @kscope.analyze.kernel(configs=[(1,)], metrics=["dram__bytes_read.sum"], verbosity=0)
    def f(n):
        with kscope.annotate("k"):
            pass

    kscope.activate(Tool.CUPTI)
    # Refused before anything touches a GPU: the cupti backend measures only its duration.
    with pytest.raises(ConfigError, match=r"the cupti backend measures only 'cupti__kernel_duration'"):
        f()


def test_the_simulated_backend_ignores_the_tool(sim):
    kscope.activate(Tool.CUPTI)

    @kscope.analyze.kernel(configs=[(1,)], verbosity=0)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 5.0)

    df = f().to_dataframe()
    assert df["Metric"].tolist() == ["test__kernel_duration"] and df["Backend"].iloc[0] == "test (simulated)"


def test_the_cupti_note_is_shown_once_per_process(recwarn):
    import kscope.analyze

    kscope.analyze._notes_shown.clear()
    kscope.activate(Tool.CUPTI)

    @kscope.analyze.kernel(configs=[(1,)], metrics=["gpu__time_duration.sum"], verbosity=0)
    def f(n):
        with kscope.annotate("k"):  # no GPU here: the call fails after the note; with one, the empty region does
            pass

    for _ in range(2):
        with pytest.raises(kscope.ProfilerException):
            f()
    notes = [w for w in recwarn if "kscope.Tool.CUPTI is active" in str(w.message)]
    assert len(notes) == 1 and notes[0].category is kscope.ProfilerWarning


def test_an_unknown_tool_names_the_tools():
    """Tool('nvprof') said only "'nvprof' is not a valid Tool"."""
    with pytest.raises(ConfigError) as caught:
        Tool("nvprof")
    message = str(caught.value)
    assert "'nvprof' is not a kscope.Tool" in message and "'ncu'" in message and "'cupti'" in message, message
    assert isinstance(caught.value, ValueError)  # as Enum's own refusal
    assert Tool("CUPTI") is Tool.CUPTI  # as KSCOPE_TOOL, in any case
