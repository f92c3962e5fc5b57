"""Custom information collectors (Nsight Python HEAD's nsight.experimental.collect, CollectionScope,
InfoCollector, info_collectors=): when each scope is called and with what, the columns and their
aggregation (the numbers of Nsight Python's integration tests), the accepted forms, every
validation error, and a collector that raises."""

import math

import numpy as np
import pandas as pd
import pytest

import kscope
from kscope import CollectionScope, ConfigError, InfoCollector, SweepError
from kscope.experimental import collect

QUIET = dict(verbosity=0)


def two_annotations(sim):
    def body(n):
        with kscope.annotate("add"):
            sim.launch("add_kernel", 10.0)
        with kscope.annotate("mul"):
            sim.launch("mul_kernel", 20.0)

    return body


def profile(sim, collectors, configs=((512,), (1024,)), runs=3, body=None, **options):
    f = kscope.analyze.kernel(configs=list(configs), runs=runs, info_collectors=collectors, **QUIET, **options)
    return f(body or two_annotations(sim))()


def row(df, annotation, n):
    (index,) = df.index[(df["Annotation"] == annotation) & (df["n"] == n)]
    return df.loc[index]


# --- collect, CollectionScope, InfoCollector -----------------------------------------------------


def test_collect_marks_the_function_as_decorator_and_as_direct_call():
    @collect(scope=CollectionScope.RUN)
    def temperature(*config):
        return 40

    def power(*config):
        return 300.0

    assert collect(power, scope="annotation") is power
    assert temperature._kscope_collector_scope == "run" and temperature._kscope_collector_name == "temperature"
    assert power._kscope_collector_scope == "annotation"
    assert temperature(1) == 40  # the function itself, unchanged


@pytest.mark.parametrize("scope", ["sometimes", None, 3, ["run"]])
def test_collect_refuses_a_bad_scope_before_decorating(scope):
    with pytest.raises(ConfigError, match=r"Invalid collection scope .* Expected one of 'once', 'config', 'run', "
                                          r"'annotation' or a kscope.CollectionScope"):
        collect(scope=scope)
    with pytest.raises(ValueError):  # Nsight Python's exception type
        collect(lambda: 1, scope=scope)


def test_collect_refuses_what_is_not_callable():
    with pytest.raises(TypeError, match="collect can only decorate a callable"):
        collect(42, scope="once")


def test_scopes_and_info_collector_are_nsights():
    assert [s.value for s in CollectionScope] == ["once", "config", "run", "annotation"]
    assert kscope.CollectionScope is kscope.info_collector.CollectionScope
    once = InfoCollector("version", lambda: "v1", CollectionScope.ONCE)
    per_run = InfoCollector("total", lambda *a: sum(a), CollectionScope.RUN)
    assert once.collect(1, 2) == "v1" and per_run.collect(1, 2) == 3  # ONCE gets no arguments


# --- when each scope is called, and what it gets ------------------------------------------------


def test_once_is_called_once_per_call_and_constant_on_every_row(sim):
    calls = []

    @collect(scope=CollectionScope.ONCE)
    def version():
        calls.append(1)
        return "v1.0.0"

    r = profile(sim, [version])
    df = r.to_dataframe()
    assert len(calls) == 1
    assert df["version"].tolist() == ["v1.0.0"] * 4 and "version_Avg" not in df.columns
    assert r.raw_dataframe()["version"].unique().tolist() == ["v1.0.0"]
    profile(sim, [version])
    assert len(calls) == 2  # once per profiled call


def test_config_is_called_once_per_config_with_its_values(sim):
    seen = []

    @collect(scope=CollectionScope.CONFIG)
    def doubled(n):
        seen.append(n)
        return n * 2

    df = profile(sim, [doubled], runs=2).to_dataframe()
    assert seen == [512, 1024]
    assert row(df, "add", 512)["doubled_Avg"] == 1024 and row(df, "mul", 1024)["doubled_Avg"] == 2048
    assert row(df, "add", 512)["doubled_Std"] == 0 and row(df, "add", 512)["doubled_Max"] == 1024


def test_run_is_called_before_each_recorded_run_not_for_warm_ups(sim):
    seen = []

    @collect(scope=CollectionScope.RUN)
    def run_number(n):
        seen.append(n)
        return len(seen)

    df = profile(sim, [run_number], runs=3, warmup_runs=2).to_dataframe()
    assert seen == [512] * 3 + [1024] * 3  # the 2 warm-ups of each config call nothing
    first = row(df, "add", 512)
    assert (first["run_number_Min"], first["run_number_Max"], first["run_number_Avg"]) == (1, 3, 2)
    assert first["run_number_Std"] == 1.0  # n - 1, as pandas
    assert row(df, "mul", 1024)["run_number_Min"] == 4  # the run's value is on each of its annotations


def test_annotation_counts_as_in_nsight_pythons_test(sim):
    """test_annotation_scope_reference_bug: add gets 1,3,5 and mul 2,4,6 in config 512; 7.. in 1024."""
    count = {"n": 0}

    @collect(scope=CollectionScope.ANNOTATION)
    def exec_counter(annotation_name, *config_args):
        count["n"] += 1
        return count["n"]

    df = profile(sim, [exec_counter]).to_dataframe()
    assert (row(df, "add", 512)["exec_counter_Min"], row(df, "add", 512)["exec_counter_Max"]) == (1, 5)
    assert (row(df, "mul", 512)["exec_counter_Min"], row(df, "mul", 512)["exec_counter_Max"]) == (2, 6)
    assert (row(df, "add", 1024)["exec_counter_Min"], row(df, "add", 1024)["exec_counter_Max"]) == (7, 11)
    assert (row(df, "mul", 1024)["exec_counter_Min"], row(df, "mul", 1024)["exec_counter_Max"]) == (8, 12)
    assert count["n"] == 12  # the warm-up run (warmup_runs=1) entered its annotations uncounted


def test_annotation_gets_its_name_and_the_config(sim):
    seen = []

    @collect(scope="annotation")
    def ann_info(annotation_name, n):
        seen.append((annotation_name, n))
        return f"{annotation_name}_{n}"

    df = profile(sim, [ann_info], runs=2).to_dataframe()
    assert seen[:2] == [("add", 512), ("mul", 512)]
    assert row(df, "add", 512)["ann_info"] == "add_512" and row(df, "mul", 1024)["ann_info"] == "mul_1024"


def test_replay_passes_call_no_collector_again(sim):
    """Counter metrics that need several passes run the body once per pass: a run is still one run."""
    sim.set_passes(3)
    count = {"run": 0, "annotation": 0}

    @collect(scope="run")
    def runs(n):
        count["run"] += 1
        return count["run"]

    @collect(scope="annotation")
    def entered(name, n):
        count["annotation"] += 1
        return count["annotation"]

    df = profile(sim, [runs, entered], configs=[(1,)], runs=4).to_dataframe()
    assert count == {"run": 4, "annotation": 8}
    assert row(df, "add", 1)["entered_Max"] == 7 and row(df, "mul", 1)["runs_Max"] == 4


def test_batched_runs_each_keep_their_values(sim):
    sim.set_max_batch_runs(4)
    seen = []

    @collect(scope="run")
    def order(n):
        seen.append(n)
        return len(seen)

    raw = profile(sim, [order], configs=[(1,)], runs=6).raw_dataframe()
    assert raw[raw["Annotation"] == "add"]["order"].tolist() == [1, 2, 3, 4, 5, 6]


def test_fixed_arity_collectors_get_as_many_config_values_as_they_take(sim):
    seen = {}

    @collect(scope="config")
    def first_only(n):
        seen["first"] = n
        return n

    @collect(scope="run")
    def everything(*config):
        seen["all"] = config
        return len(config)

    def body(n, dtype="f32"):
        with kscope.annotate("k"):
            sim.launch("kern", 1.0)

    df = kscope.analyze.kernel(configs=[(8,)], info_collectors=[first_only, everything], **QUIET)(body)()
    assert seen == {"first": 8, "all": (8, "f32")}  # the default pads the config, as in Nsight Python
    assert df.to_dataframe()["everything_Avg"].iloc[0] == 2


# --- columns --------------------------------------------------------------------------------------


def test_numeric_values_give_four_columns_and_others_the_first_value(sim):
    values = iter([150, 110, 190, 120, 130])

    @collect(scope="run")
    def numeric(n):
        return next(values)

    @collect(scope="run")
    def text(n):
        return f"config_{n}"

    r = profile(sim, [numeric, text], configs=[(512,)], runs=5, body=lambda n: kscope_one(sim))
    df = r.to_dataframe()
    summary = [c for c in df.columns if c.startswith(("numeric", "text"))]
    assert summary == ["numeric_Avg", "numeric_Std", "numeric_Min", "numeric_Max", "text"]
    assert list(df.columns[-5:]) == summary  # after the schema's columns
    assert df["numeric_Avg"].iloc[0] == 140 and df["numeric_Min"].iloc[0] == 110 and df["numeric_Max"].iloc[0] == 190
    assert math.isclose(df["numeric_Std"].iloc[0], np.std([150, 110, 190, 120, 130], ddof=1))
    assert df["text"].iloc[0] == "config_512"
    raw = r.raw_dataframe()
    assert raw["numeric"].tolist() == [150, 110, 190, 120, 130] and raw["numeric"].dtype == np.int64
    assert list(raw.columns[-2:]) == ["numeric", "text"]


def kscope_one(sim):
    with kscope.annotate("k"):
        sim.launch("kern", 1.0)


def test_derived_metric_rows_carry_the_collectors_too(sim):
    @collect(scope="once")
    def static_version():
        return "v9.9.9"

    @collect(scope="config")
    def config_value(n):
        return n * 3

    def double(time_ns, n):
        return time_ns * 2.0, "ns2"

    df = profile(sim, [static_version, config_value], runs=2, derive_metric=double).to_dataframe()
    derived = df[df["Metric"] == "double"]
    assert len(derived) == 4
    assert (derived["static_version"] == "v9.9.9").all()
    assert row(derived, "add", 512)["config_value_Avg"] == 1536


def test_values_become_table_cells(sim):
    @collect(scope="run")
    def np_int(n):
        return np.int64(7)

    @collect(scope="run")
    def nothing(n):
        return None

    @collect(scope="once")
    def an_object():
        return (1, 2)

    r = profile(sim, [np_int, nothing, an_object], configs=[(1,)], runs=2)
    df = r.to_dataframe()
    assert df["np_int_Avg"].iloc[0] == 7.0
    assert df["nothing"].isna().all()  # no value: one empty column
    assert df["an_object"].iloc[0] == "(1, 2)"  # neither a number, a bool nor a str: its str()


def test_collector_columns_reach_the_csv_files(sim, tmp_path):
    @collect(scope="config")
    def elements(n):
        return n * n

    prefix = str(tmp_path / "run_")
    profile(sim, [elements], output_csv=True, output_prefix=prefix)
    processed = pd.read_csv(prefix + "processed_data-body-0.csv")
    profiled = pd.read_csv(prefix + "profiled_data-body-0.csv")
    assert processed["elements_Avg"].tolist() == [512 * 512, 1024 * 1024] * 2  # by annotation, then config
    assert profiled["elements"].iloc[0] == 512 * 512


def test_the_readable_view_shows_the_collectors(sim):
    @collect(scope="once")
    def driver():
        return "580.1"

    text = str(profile(sim, [driver], configs=[(1,)], runs=2))
    assert "driver" in text.splitlines()[1] and "580.1" in text.splitlines()[2]


# --- forms and validation ---------------------------------------------------------------------------


def test_decorated_functions_objects_and_tuples_are_accepted(sim):
    @collect(scope="once")
    def decorated():
        return 1

    collectors = [decorated, InfoCollector("as_object", lambda n: n, CollectionScope.CONFIG),
                  ("as_tuple", lambda name, n: name, "annotation"), ("enum_tuple", lambda n: 2, CollectionScope.RUN)]
    df = profile(sim, collectors, configs=[(3,)], runs=2).to_dataframe()
    assert row(df, "mul", 3)[["decorated", "as_object_Avg", "as_tuple", "enum_tuple_Avg"]].tolist() == [1, 3, "mul", 2]


def test_no_collectors_add_no_columns(sim):
    plain = profile(sim, None, configs=[(1,)]).to_dataframe()
    assert list(profile(sim, [], configs=[(1,)]).to_dataframe().columns) == list(plain.columns)


@pytest.mark.parametrize(
    "collectors, error, message",
    [
        ([("a", lambda: 1, "once"), ("a", lambda n: 2, "run")], ConfigError, r"Duplicate info collector name 'a'"),
        ([("AvgValue", lambda: 1, "once")], ConfigError,
         r"Info collector name 'AvgValue' collides with a reserved profiler column. Reserved names: .*'Annotation'"),
        ([("Value", lambda: 1, "once")], ConfigError, r"'Value' collides with a reserved profiler column"),
        ([("Backend", lambda: 1, "once")], ConfigError, r"'Backend' collides with a reserved profiler column"),
        ([("t", lambda n: 1, "run"), ("t_Avg", lambda n: 1, "run")], ConfigError,
         r"'t_Avg' collides with a column of collector 't'"),
        ([lambda: 1], ConfigError, r"Collector function <lambda> is missing @kscope.experimental.collect\(scope=...\)"),
        ([("a", lambda: 1, "sometimes")], ConfigError,
         r"Invalid scope 'sometimes' for collector 'a'. Expected one of \['annotation', 'config', 'once', 'run'\]"),
        ([InfoCollector("a", lambda: 1, "weekly")], ConfigError, r"Invalid scope 'weekly' for collector 'a'"),
        ([("a", lambda: 1)], ConfigError, r"Tuple-format info collector must be \(name, callback, scope\)"),
        ([("a", 1, "once")], TypeError, r"must be \(str name, callable callback, scope\)"),
        ([3], TypeError, r"Invalid collector type: <class 'int'>"),
        ("version", ConfigError, r"info_collectors must be a list of collectors"),
    ],
)
def test_invalid_collectors_are_refused_at_decoration(collectors, error, message):
    with pytest.raises(error, match=message):
        kscope.analyze.kernel(info_collectors=collectors)
    if error is ConfigError:
        with pytest.raises(ValueError):  # Nsight Python raises ValueError or ProfilerException: both hold
            kscope.analyze.kernel(info_collectors=collectors)


def test_a_collector_named_like_a_parameter_is_refused_at_decoration():
    decorate = kscope.analyze.kernel(info_collectors=[("n", lambda: 1, "once")])
    with pytest.raises(ConfigError, match=r"Info collector name 'n' collides with the parameter 'n', whose column it "
                                          r"would shadow: rename the collector"):
        decorate(lambda n: None)
    decorate(lambda m: None)  # fine for another function


def test_decorating_checks_the_options_once(monkeypatch):
    # The engine's checks, observed where Python calls them: once for the options, however many
    # functions they decorate (each function's parameters are checked against the collectors' names).
    checks = []
    real_validate = kscope._core.validate
    monkeypatch.setattr(kscope._core, "validate", lambda *args: (checks.append(args), real_validate(*args))[1])
    decorate = kscope.analyze.kernel(runs=3, info_collectors=[("t", lambda: 1, "once")])
    decorate(lambda n: None)
    decorate(lambda m: None)
    assert len(checks) == 1


def test_collectors_are_refused_with_the_ncu_backend():
    with pytest.raises(ConfigError, match=r"info_collectors cannot be used with backend='ncu'.*Use backend='counters'"):
        kscope.analyze.kernel(backend="ncu", info_collectors=[("v", lambda: 1, "once")])


# --- a collector that raises ---------------------------------------------------------------------


@pytest.mark.parametrize("scope, fail_at, fails_in", [
    # config 512 takes 3 runs; config 1024's run 2 is then call 5 (run), call 9 (2 annotations per run)
    ("run", 5, "config 2/2 (n=1024) failed in run 2, in info collector 'flaky' (run scope)"),
    ("annotation", 9, "config 2/2 (n=1024) failed in run 2, in info collector 'flaky' (annotation scope)"),
    ("config", 2, "config 2/2 (n=1024) failed in info collector 'flaky' (config scope), before its first run"),
])
def test_with_raise_a_raising_collector_fails_the_sweep_naming_it_and_keeps_what_was_measured(
        sim, scope, fail_at, fails_in):
    calls = []

    def flaky(*args):
        calls.append(args)
        if len(calls) == fail_at:
            raise ValueError("sensor unplugged")
        return 1

    with pytest.raises(SweepError) as info:
        profile(sim, [("flaky", flaky, scope)], info_collector_errors="raise")
    assert fails_in in str(info.value) and "ValueError: sensor unplugged" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)  # the collector's own exception
    partial = info.value.partial_results.to_dataframe()
    assert partial[partial["n"] == 512]["NumRuns"].tolist() == [3, 3]
    # The runs of the failing config before the failure are kept too.
    assert partial[partial["n"] == 1024]["NumRuns"].tolist() == ([] if scope == "config" else [1, 1])
    assert (partial["flaky_Avg"] == 1.0).all()
    # The next call works.
    assert len(profile(sim, [("fine", lambda *a: 1, scope)])) == 4


def test_a_raising_once_collector_fails_before_any_run(sim):
    runs = []

    def body(n):
        runs.append(n)
        kscope_one(sim)

    with pytest.raises(SweepError, match=r"config 1/2 \(n=512\) failed in info collector 'broken' \(once scope\), "
                                         r"before its first run: RuntimeError: no driver"):
        profile(sim, [("broken", lambda: (_ for _ in ()).throw(RuntimeError("no driver")), "once")], body=body,
                info_collector_errors="raise")
    assert runs == []


@pytest.mark.parametrize("scope, fail_at", [("once", 1), ("config", 2), ("run", 5), ("annotation", 9)])
def test_by_default_a_raising_collector_is_missing_where_it_failed_with_one_warning(sim, scope, fail_at):
    # Nsight Python's handling: the value is None (here: missing) and a RuntimeWarning per collector.
    calls = []

    def flaky(*args):
        calls.append(args)
        if len(calls) >= fail_at:
            raise ValueError("sensor unplugged")
        return 1

    with pytest.warns(RuntimeWarning) as record:
        results = profile(sim, [("flaky", flaky, scope)])
    ours = [str(w.message) for w in record if "flaky" in str(w.message)]
    assert ours == [f"Info collector 'flaky' ({scope} scope) raised ValueError: sensor unplugged. Its value is "
                    f"missing where it fails; info_collector_errors='raise' stops the sweep instead"]
    assert all(issubclass(w.category, kscope.SweepWarning) for w in record)
    raw = results.raw_dataframe()
    assert raw["Value"].notna().all()  # every run measured
    assert raw["flaky"].isna().sum() > 0 and (raw["flaky"].dropna() == 1).all()
    with pytest.raises(ValueError):
        kscope.analyze.kernel(info_collector_errors="ignore")
