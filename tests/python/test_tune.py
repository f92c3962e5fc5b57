"""kscope.tune (racing configs), compare's clock-aware verdicts and gate, and the simulated backend's
noise, on the simulated backend against its known truth."""

import os

import warnings

import pytest

import kscope

# Config n launches kernel "k<n>" of BASE[n] ns: 3 is the fastest, 4 within 1% of it.
BASE = {0: 70000, 1: 56000, 2: 90000, 3: 50000, 4: 50400, 5: 65000, 6: 120000, 7: 80000}


def noisy(sim, seed=3):
    sim.set_noise(seed=seed, jitter_pct=1.5, outlier_rate=0.01, clock_bound=0.8, clock_drops_per_s=5,
                  clock_drop_s=0.005)


def space(sim):
    def gemm(n):
        with kscope.annotate("gemm"):
            sim.launch(f"k{n}", BASE[n])

    return gemm


def test_tune_names_the_winner_its_ties_and_the_cost(sim):
    noisy(sim)
    race = kscope.tune(space(sim), configs=list(BASE), runs=60, verbosity="silent")
    assert race.winner in [(3,), (4,)]
    assert set(race.ties) <= {(3,), (4,)}
    assert race.confidence == pytest.approx(0.95)
    df = race.to_dataframe()
    assert list(df.columns) == ["n", "Outcome", "Round", "Runs", "MedianNs", "FinalMedianNs", "RatioToWinner",
                                "RatioCI_Lower", "RatioCI_Upper", "Reason"]
    assert list(df["n"]) == list(BASE)
    outcomes = dict(zip(df["n"], df["Outcome"]))
    assert {outcomes[n] for n in (0, 2, 5, 6, 7)} == {"eliminated"}
    assert df["Runs"].dtype == "int64"
    cost = race.cost
    assert cost["exhaustive_runs"] == 8 * 61
    assert cost["runs"] < cost["exhaustive_runs"] / 2
    assert 0 < cost["gpu_s"] < cost["exhaustive_gpu_s"]
    assert race.rounds[0] == {"kind": "screening", "configs": 8, "runs": 10, "eliminated": race.rounds[0]["eliminated"]}
    assert len(race.measurements.raw_dataframe()) == df["Runs"].sum()
    assert "winner: n=" in str(race)


def test_a_race_final_round_of_one_run_a_visit_warns_nothing_of_runs_1(sim):
    # The final's visits are one run each by design, judged across the visits: no "runs=1" advice.
    noisy(sim)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        race = kscope.tune(space(sim), configs=list(BASE), runs=60)
    assert any(r["kind"] == "final" for r in race.rounds)
    assert not [w for w in caught if "one recorded run" in str(w.message)], [str(w.message) for w in caught]


def test_tune_refuses_bad_options_in_pythons_words(sim):
    gemm = space(sim)
    with pytest.raises(kscope.ConfigError, match=r"^first_runs \(10\) is more than runs \(5\), the most runs a config "
                                                 r"gets before the final round: raise runs \(100, say\)"):
        kscope.tune(gemm, configs=[0, 1], runs=5, verbosity="silent")
    with pytest.raises(kscope.ConfigError, match=r"^first_runs is 1: it takes a count of at least 2"):
        kscope.tune(gemm, configs=[0, 1], first_runs=1)
    with pytest.raises(kscope.ConfigError, match=r"^alpha must be a number, not 'x'"):
        kscope.tune(gemm, configs=[0, 1], alpha="x")
    with pytest.raises(kscope.ConfigError, match=r"^annotation names 'other', which the body did not open"):
        kscope.tune(gemm, configs=[0, 1], annotation="other", verbosity="silent")


def test_a_backend_that_cannot_race_or_evaluate_is_refused_naming_those_that_can():
    """The registry's capabilities choose: refused before any backend is made, so on any machine."""
    def body(n):
        pass

    with pytest.raises(kscope.ConfigError, match=r"^the counters backend cannot serve tune in this process: the race "
                                                 r"decides by durations measured in this process; tune with "
                                                 r"backend='cupti' \(the default\)(,| or) backend='events'"):
        kscope.tune(body, configs=[0, 1], backend="counters", verbosity="silent")
    with pytest.raises(kscope.ConfigError, match=r"^the events backend cannot serve evaluate in this process: an "
                                                 r"evaluation times all the GPU work a call causes, on every stream, "
                                                 r"as it runs; evaluate with backend='cupti' \(the default\)"):
        kscope.evaluate(abs, abs, lambda config, seed: 1.0, backend="events", verbosity="silent")


def test_tune_takes_the_thermal_guards_options_as_kernel_does(sim):
    race = kscope.tune(space(sim), configs=list(BASE), thermal_mode="manual", thermal_wait=5.0, thermal_cont=10.0,
                       thermal_timeout=30.0, verbosity="silent")
    assert race.winner == (3,)


def test_a_failed_race_keeps_its_runs_and_resumes(sim, tmp_path):
    calls = []

    def flaky(n):
        calls.append(n)
        if len(calls) == 30:
            raise RuntimeError("the kernel crashed")
        with kscope.annotate("gemm"):
            sim.launch(f"k{n}", BASE[n])

    prefix = str(tmp_path / "race_")
    with pytest.raises(kscope.SweepError, match=r"^race round 1 \(screening\)") as failed:
        kscope.tune(flaky, configs=list(BASE), runs=40, output_prefix=prefix, verbosity="silent")
    assert isinstance(failed.value.partial_results, kscope.ProfileResults)
    assert len(failed.value.partial_results.raw_dataframe()) > 0
    before = len(calls)
    race = kscope.tune(flaky, configs=list(BASE), runs=40, output_prefix=prefix, resume=True, verbosity="silent")
    assert race.winner == (3,)
    assert len(calls) - before < race.cost["runs"]  # the configs finished before the failure were read back
    assert (tmp_path / "race_race.csv").exists() and (tmp_path / "race_results.json").exists()
    assert kscope.load(str(tmp_path / "race_results.json")).raw_dataframe().shape[0] == race.to_dataframe()["Runs"].sum()


def test_compare_gate_cannot_judge_results_of_one_run(sim):
    @kscope.analyze.kernel(configs=[1], runs=1, verbosity="silent")
    def once(n):
        with kscope.annotate("k"):
            sim.launch("k", 1000)

    a, b = once(), once()
    with pytest.warns(kscope.CompareWarning, match=r"1 row cannot be judged \(verdict too_few_samples\): 1 row with "
                                                   r"fewer than min_samples \(5\) runs on a side"):
        df = kscope.compare(a, b)
    assert list(df["Verdict"]) == ["too_few_samples"]
    assert df.attrs["gate"] == "cannot_judge"


def test_a_change_the_clock_explains_is_ambiguous():
    def measured(sim):
        @kscope.analyze.kernel(configs=[1], runs=20, verbosity="silent")
        def spin(n):
            with kscope.annotate("spin"):
                sim.launch("spin", 100000)

        return spin()

    with kscope.testing.simulated_backend() as steady:
        steady.set_noise(seed=1, jitter_pct=0.5)
        base = measured(steady)
    with kscope.testing.simulated_backend() as dropped:
        # The clock drops at once and stays low: the compute-bound kernel takes 1980/1755 longer.
        dropped.set_noise(seed=2, jitter_pct=0.5, clock_drops_per_s=1e9, clock_drop_s=1e3)
        slow = measured(dropped)
    with pytest.warns(kscope.CompareWarning, match="changed in time but not in cycles"):
        df = kscope.compare(base, slow)
    assert list(df["Verdict"]) == ["ambiguous"]
    assert df["Ratio"][0] == pytest.approx(1980 / 1755, rel=0.01)
    assert df["CyclesRatio"][0] == pytest.approx(1, abs=0.01)
    assert df.attrs["gate"] == "passed"


def test_set_noise_is_deterministic_and_checks_its_fields(sim):
    def durations(seed):
        with kscope.testing.simulated_backend() as s:
            s.set_noise(seed=seed, jitter_pct=2, per_kernel={"k": {"outlier_rate": 0.1}})

            @kscope.analyze.kernel(configs=[1], runs=30, verbosity="silent")
            def f(n):
                with kscope.annotate("k"):
                    s.launch("k", 1000)

            return list(f().raw_dataframe()["Value"])

    assert durations(7) == durations(7) != durations(8)
    with pytest.raises(kscope.ConfigError, match=r"per_kernel\['k'\] names 'jiter_pct'; a kernel's noise takes"):
        sim.set_noise(per_kernel={"k": {"jiter_pct": 1}})
    with pytest.raises(kscope.ConfigError, match=r"the simulated noise's jitter_pct is -1: it takes a percentage"):
        sim.set_noise(jitter_pct=-1)


def test_too_few_first_runs_to_eliminate_anything_are_warned_of(sim):
    with pytest.warns(kscope.ProfilerWarning, match=r"first_runs = 3: 3 runs a side can show a difference at p = 0.05 "
                                                    r"at best, not below the elimination level 0.00278 of 4 configs"):
        race = kscope.tune(space(sim), configs=[0, 1, 2, 3], runs=12, first_runs=3, verbosity="silent")
    assert race.winner == (3,)


class _StrOnly:
    """A config object that says what it is only through __str__, as triton.Config does."""

    def __init__(self, n):
        self.n = n

    def __str__(self):
        return f"BLOCK: {self.n}"


def test_a_config_object_is_shown_by_its_str_not_its_address(sim):
    configs = [_StrOnly(3), _StrOnly(6)]

    def gemm(config):
        with kscope.annotate("gemm"):
            sim.launch(f"k{config.n}", BASE[config.n])

    race = kscope.tune(gemm, configs=configs, runs=20, verbosity="silent")
    assert race.winner[0] is configs[0]
    text = str(race)
    assert "winner: config=BLOCK: 3" in text
    assert "object at 0x" not in text


def test_a_failure_mid_race_is_numbered_among_the_sweeps_configs_and_keeps_every_row(sim):
    calls = []

    def crashes_in_the_final(n):
        calls.append(n)
        if len(calls) == 110:  # the final round: 88 screening runs (8 x (1 + 10)), then passes of 2 finalists
            raise RuntimeError("the kernel crashed")
        with kscope.annotate("gemm"):
            sim.launch(f"k{n}", BASE[n])

    with pytest.raises(kscope.SweepError) as failed:
        kscope.tune(crashes_in_the_final, configs=list(BASE), runs=40, verbosity="silent")
    message = str(failed.value)
    assert message.startswith("race round 2 (final): config 5/8 (n=4) failed in run 1: RuntimeError: the kernel "
                              "crashed\n8 summary rows of the race's rounds so far are kept in the error's "
                              "partial_results"), message
    assert len(failed.value.partial_results.to_dataframe()) == 8


def test_a_resume_with_other_race_options_is_refused_by_name(sim, tmp_path):
    prefix = str(tmp_path / "race_")
    gemm = space(sim)
    kscope.tune(gemm, configs=list(BASE), runs=40, output_prefix=prefix, verbosity="silent")
    with pytest.raises(kscope.ConfigError, match=r"^cannot resume the race under output_prefix '.*race_': it was "
                                                 r"raced with threshold_pct=2, first_runs=10 \(this call gives 15, 5\), "
                                                 r"and only the options it was raced with take the same decisions "
                                                 r"again from its runs on disk: resume with threshold_pct=2, "
                                                 r"first_runs=10, or race again with overwrite=True"):
        kscope.tune(gemm, configs=list(BASE), runs=40, threshold_pct=15, first_runs=5, output_prefix=prefix,
                    resume=True, verbosity="silent")
    assert kscope.tune(gemm, configs=list(BASE), runs=40, output_prefix=prefix, resume=True,
                       verbosity="silent").winner == (3,)
    # Run again without resume: the finished race is moved aside, its options file with it.
    assert kscope.tune(gemm, configs=list(BASE), runs=40, output_prefix=prefix, verbosity="silent").winner == (3,)
    assert os.path.exists(f"{prefix}race-options.json.~1~") and os.path.exists(f"{prefix}race.csv.~1~")


def test_a_shard_with_nothing_to_race_answers_without_raising(sim):
    race = kscope.tune(space(sim), configs=[0, 1], runs=20, shard=(3, 4), verbosity="silent")
    assert race.winner is None and race.winner_index is None
    assert race.ties == [] and race.tie_indices == [] and len(race) == 0
    assert repr(race) == "<kscope.RaceResults: no config raced (a shard that holds none of the sweep's configs)>"
    assert "winner" not in str(race)
    assert race.to_dataframe().empty
