"""The energy metrics from Python, on the simulated backend, whose GPU draws known power: 100 W idle,
300 W while a kernel runs (kscope.testing's SimulatedBackend.set_power). Every value has an exact
expectation, to the ~1 ms a window's ends are known to at idle power."""

import math

import pytest

import kscope
from kscope import AnnotationUseError, BackendError, ConfigError, SweepError

KERNEL_NS = 2e6  # 2 ms at 300 W: 0.6 J, 0.4 J above idle
FAST = dict(verbosity=0, runs=3, energy_window=0.1, metrics=kscope.energy_metrics())


def one_kernel(sim, **options):
    def body(n):
        with kscope.annotate("k"):
            for _ in range(n):
                sim.launch("k", KERNEL_NS)

    return kscope.analyze.kernel(configs=[1, 2], combine_kernel_metrics=lambda a, b: a + b, **{**FAST, **options})(body)


def rows(df, metric):
    return df[df.Metric == metric].set_index("n")


def test_energy_power_and_above_idle_beside_the_durations(sim):
    df = one_kernel(sim)().to_dataframe()
    assert list(dict.fromkeys(df.Metric)) == ["test__kernel_duration"] + kscope.energy_metrics()
    energy, power, above = (rows(df, m) for m in kscope.energy_metrics())
    assert energy.Unit.iloc[0] == "J" and power.Unit.iloc[0] == "W" and above.Unit.iloc[0] == "J"
    assert energy.AvgValue[1] == pytest.approx(0.6, rel=0.01)
    assert energy.AvgValue[2] == pytest.approx(1.2, rel=0.01)  # linear in the kernels a run launches
    assert power.AvgValue[1] == pytest.approx(300, rel=0.01)
    assert above.AvgValue[1] == pytest.approx(0.4, rel=0.02)
    assert (df.NumRuns == 3).all()  # windows, for the durations too
    assert rows(df, "test__kernel_duration").AvgValue[1] == KERNEL_NS
    assert df.IdlePowerW.iloc[0] == pytest.approx(100, abs=0.2)


def test_derive_metric_gets_the_energy_and_energy_efficiency_names_the_units(sim):
    seen = []

    def efficiency(ns, joules, watts, above_idle, n):
        seen.append((ns, joules, watts, above_idle, n))
        return kscope.energy_efficiency(joules, flop=2e12 * n, bytes=1e9 * n)

    df = one_kernel(sim, derive_metric=efficiency)().to_dataframe()
    assert len(seen) == 6  # per window, not per run
    flop = rows(df, "flop_per_joule")
    assert flop.Unit.iloc[0] == "FLOP/J"
    assert flop.AvgValue[1] == pytest.approx(2e12 / 0.6, rel=0.01)
    assert rows(df, "bytes_per_joule").Unit.iloc[0] == "B/J"
    assert kscope.energy_efficiency(2.0, flop=4.0) == {"flop_per_joule": (2.0, "FLOP/J")}


def test_declared_work_gives_flop_and_bytes_per_joule_without_derive_metric(sim):
    df = one_kernel(sim, work=lambda n: kscope.Work(flops=2e12 * n, bytes=1e9 * n))().to_dataframe()
    flop, per_byte = rows(df, "flop_per_joule"), rows(df, "bytes_per_joule")
    assert flop.Unit.iloc[0] == "FLOP/J" and per_byte.Unit.iloc[0] == "B/J"
    assert flop.AvgValue[1] == pytest.approx(2e12 / 0.6, rel=0.01)
    assert per_byte.AvgValue[2] == pytest.approx(2e9 / 1.2, rel=0.01)


def test_energy_plots_like_any_metric(sim, tmp_path):
    path = tmp_path / "energy.png"
    seen = []
    kscope.analyze.plot(str(path), metric="nvml__energy_per_run", plot_callback=seen.append)(one_kernel(sim))()
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert "nvml__energy_per_run (J)" in seen[0].get_axes()[0].get_ylabel()


def test_a_gpu_without_the_counter_says_why(sim):
    sim.remove_energy_counter("this GPU has no total-energy counter (Not Supported)")
    with pytest.raises(BackendError, match=r"this GPU has no total-energy counter \(Not Supported\)"):
        one_kernel(sim)()


def test_a_restarted_counter_drops_that_window_only(sim):
    calls = []

    def body(n):
        calls.append(n)
        if len(calls) == 60:  # in the second window (50 runs each, after one warm-up)
            sim.restart_energy_counter(0)
        with kscope.annotate("k"):
            sim.launch("k", KERNEL_NS)

    results = kscope.analyze.kernel(configs=[1], **FAST)(body)()
    energy = rows(results.to_dataframe(), "nvml__energy_per_run")
    assert energy.NumRuns[1] == 2 and energy.AvgValue[1] == pytest.approx(0.6, rel=0.01)
    raw = results.raw_dataframe()
    assert raw[raw.Metric == "nvml__energy_per_run"].Value.isna().tolist() == [False, True, False]


def test_every_run_opens_one_annotation(sim):
    def body(n):
        with kscope.annotate("torch"):
            sim.launch("a", KERNEL_NS)
        with kscope.annotate("triton"):
            sim.launch("b", KERNEL_NS)

    with pytest.raises(SweepError, match="every run must open exactly one annotation, the same one; this run opened "
                                         "'torch', 'triton'. Measure each annotation in its own function") as e:
        kscope.analyze.kernel(configs=[1], **FAST)(body)()
    assert isinstance(e.value.__cause__, AnnotationUseError)


def test_options_are_checked_in_pythons_words(sim):
    with pytest.raises(ConfigError, match="energy_window is 0: it must be a duration in seconds above 0"):
        kscope.analyze.kernel(metrics=kscope.energy_metrics(), energy_window=0)
    with pytest.raises(ConfigError, match="energy_window must be a number"):
        kscope.analyze.kernel(metrics=kscope.energy_metrics(), energy_window="1s")
    with pytest.raises(ConfigError, match="the energy metrics are measured beside kernel durations.*not with "
                                          "backend='counters'"):
        kscope.analyze.kernel(metrics=kscope.energy_metrics(), backend="counters")
    with pytest.raises(ConfigError, match=r"energy_window is 0.030 s, shorter than 5 updates of this GPU's energy "
                                          r"counter \(one every 10 ms\)"):
        one_kernel(sim, energy_window=0.03)()
