"""The derived results' DataFrames (a race's, a comparison's, an evaluation's) through the one
table-to-DataFrame conversion, typed by the engine's column tables; their enumerations' names from
the engine's name table; their str() without the engine's console writer."""

import pandas as pd
import pytest

import kscope
from kscope import _compare, _core, _evaluation
from kscope._results import DERIVED_COLUMN_TYPES, config_axes, frame_of

# The dtype each engine column type gives (strings: object with pandas 1 and 2, str with pandas 3).
DTYPES = {"integer": {"int64"}, "optional_integer": {"Int64"}, "real": {"float64"},
          "text": {"object", "str", "string"}, "boolean": {"bool"}}


def expect_typed(frame, kind, axes):
    """The frame's columns, `axes` left out, are the engine's column table of `kind`, of its types."""
    types = dict(_core.derived_columns()[kind])
    assert [c for c in frame.columns if c not in axes] == list(types)
    for column, kind_of in types.items():
        assert str(frame[column].dtype) in DTYPES[kind_of], (column, kind_of, frame[column].dtype)


def race(sim):
    def body(n):
        with kscope.annotate("k"):
            sim.launch("k", 1000.0 * n)

    return kscope.tune(body, configs=[1, 2, 3], runs=20, verbosity="silent")


def test_a_race_and_its_comparison_are_typed_by_their_column_tables(sim):
    raced = race(sim)
    frame = raced.to_dataframe()
    expect_typed(frame, "race", ["n"])
    assert list(frame["n"]) == [1, 2, 3]
    assert set(frame["Outcome"]) <= set(_core.enum_names()["RaceOutcome"])
    comparison = kscope.compare(raced.measurements, raced.measurements)
    expect_typed(comparison, "comparison", ["n"])
    assert set(comparison["Verdict"]) <= set(_core.enum_names()["Verdict"])


def test_a_race_prints_without_the_engine_console_writer(sim):
    raced = race(sim)
    text = str(raced)
    head = raced.measurements._core.headline()
    assert text.startswith(f"kscope race: {head}\nwinner: n=1")
    assert "| cache_control all | clock_control none" in head
    assert not hasattr(raced._core, "text")  # the console writer's text is not bound
    table = text.splitlines()[-4:]
    assert table[0].split()[:3] == ["n", "Outcome", "Round"]
    assert table[1].split()[:2] == ["1", "winner"]


def test_an_evaluation_table_is_typed_by_its_column_table():
    # The engine's cells of two configs, one with a failing seed: the conversion alone.
    names = [name for name, _ in _core.derived_columns()["evaluation"]]
    cells = {"Verdict": ["faster", "incorrect"], "Speedup": [1.5, None], "SpeedupCI_Lower": [1.4, None],
             "SpeedupCI_Upper": [1.6, None], "ReferenceMedianNs": [300.0, 200.0], "CandidateMedianNs": [200.0, None],
             "Runs": [10, 0], "Correct": [True, False], "MaxAbsError": [0.0, 2.0], "MaxRelError": [0.0, 1.0],
             "CheckedRuns": [11, 1], "MismatchedRuns": [0, 1], "FailingSeed": [None, 77], "Findings": ["", ""],
             "Reason": ["", "output 0 differs"], "Mismatch": ["", "output 0 differs"], "GPU": ["g", "g"],
             "Backend": ["b", "b"]}
    assert list(cells) == names
    frame = frame_of({"n": [1, 2], **cells}, DERIVED_COLUMN_TYPES["evaluation"],
                     config_axes([(8,), (16,)], ["n"], [1, 0]))
    expect_typed(frame, "evaluation", ["n"])
    assert list(frame["n"]) == [16, 8]
    assert frame["FailingSeed"].isna().tolist() == [True, False] and frame["FailingSeed"][1] == 77


def test_the_names_of_verdicts_sides_and_directions_come_from_the_engine():
    names = _core.enum_names()
    assert set(_evaluation._VERDICT_STYLE) == set(names["EvaluationVerdict"])
    assert set(_compare._VERDICT_COLOURS) <= set(names["Verdict"])
    assert _compare._DIRECTIONS == tuple(names["MetricDirection"]) == ("lower", "higher", "undefined")
    assert names["Side"] == ["candidate", "reference"]
    with pytest.raises(kscope.errors.ConfigError, match=r"must be 'lower', 'higher' or 'undefined', not 'up'"):
        _compare._directions({"gpu__time_duration": "up"})


def test_same_is_one_band_symmetric_in_the_log_of_the_ratio():
    lower, upper = _core.same_band(2)
    assert upper == 1.02 and lower == pytest.approx(1 / 1.02, rel=1e-15)
    assert lower * upper == pytest.approx(1)
