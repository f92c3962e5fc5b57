"""The edges of kscope's files, compare and merge, as a user meets them: a resume whose samples
were deleted, comparisons that cannot judge (too few values for the U test, runs that are all NaN),
an evaluation compared with a profile, load_evaluation's hints, and merge of a prefix measured
without shards."""

import json
import os

import numpy as np
import pytest

import kscope
from kscope import ConfigError

QUIET = dict(verbosity="silent")


def measured(sim, runs=2, **options):
    @kscope.analyze.kernel(**{"configs": [(1,), (2,)], "runs": runs, **QUIET, **options})
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 1000.0 * n)

    return f


def test_a_deleted_samples_file_is_warned_of_on_resume(sim, tmp_path):
    """It measured every config again without a word."""
    prefix = str(tmp_path / "out_")
    measured(sim, output_prefix=prefix)()
    os.remove(f"{prefix}f-0-samples.csv")
    with pytest.warns(kscope.ProfilerWarning) as caught:
        assert len(measured(sim, output_prefix=prefix, resume=True, verbosity="info")().to_dataframe()) == 2
    assert any(str(w.message) == f"'{prefix}f-0-samples.csv' is missing, but '{prefix}f-0-progress.jsonl' lists "
                                 f"finished configs: their samples are gone: the configs from there on are measured "
                                 f"again" for w in caught), [str(w.message) for w in caught]


def test_compare_never_calls_too_few_values_same_and_tells_nan_from_few_runs(sim):
    """min_samples=1 on runs=1 called a 2x slowdown 'same' (gate passed, no warning); six NaN runs were
    told to measure at least 5 runs."""
    def once(scale):
        @kscope.analyze.kernel(configs=[1], runs=1, **QUIET)
        def f(n):
            with kscope.annotate("k"):
                sim.launch("k", 1000.0 * scale)

        return f()

    with pytest.warns(kscope.CompareWarning, match=r"too few values for the U test to reach p < alpha \(0.05\) at "
                                                   r"all: measure both sides at least 4 times"):
        frame = kscope.compare(once(1), once(2), min_samples=1)
    assert list(frame["Verdict"]) == ["too_few_samples"] and frame.attrs["gate"] == "cannot_judge"
    assert frame["Reason"][0].startswith("with 1 and 1 valid values the U test cannot reach p < alpha (0.05)")

    @kscope.analyze.kernel(configs=[1], runs=6, **QUIET)
    def failing(n):
        with kscope.annotate("k", ignore_failures=True):
            raise RuntimeError("launch failed")

    with pytest.warns(kscope.SweepWarning):
        nan_runs = failing()
    with pytest.warns(kscope.CompareWarning) as caught:
        frame = kscope.compare(nan_runs, measured(sim, runs=6, configs=[(1,)])())
    assert frame["Reason"][0] == ("baseline has 0 valid values of 6 (6 NaN: runs that failed or recorded nothing), "
                                  "fewer than min_samples (5)")
    said = " ".join(str(w.message) for w in caught)
    assert "more runs will not help" in said and "measure both sides with at least" not in said


def test_an_evaluation_against_a_profile_is_named_as_such(sim, tmp_path):
    """It was refused as measured 'with different replay_mode'."""
    def normal(config, seed):
        return (np.random.default_rng(seed).standard_normal(8).astype(np.float32),)

    def reference(x):
        sim.launch("reference_kernel", 1000.0)
        return x * 2

    def candidate(x):
        sim.launch("candidate_kernel", 500.0)
        return x * 2

    evaluation = kscope.evaluate(candidate, reference, normal, [{"n": 1}], runs=6, **QUIET)
    evaluation.save(tmp_path / "evaluation.json")

    @kscope.analyze.kernel(configs=[(1,)], runs=6, **QUIET)
    def f(n):
        with kscope.annotate("gemm"):
            sim.launch("gemm", 500.0)

    for baseline in (evaluation, tmp_path / "evaluation.json"):
        with pytest.raises(ConfigError) as info:
            kscope.compare(baseline, f())
        assert str(info.value) == (
            "compare() cannot match an evaluation with a profile: the baseline holds an evaluation's measurements (its "
            "candidate and reference calls, each timed as one range), the candidate a profile's (annotations 'gemm'), "
            "so no row is measured on both sides. Compare an evaluation with another evaluation (an EvaluationResults "
            "or its saved file on both sides), and a profile with a profile")
    assert set(kscope.compare(evaluation, tmp_path / "evaluation.json")["Verdict"]) == {"same"}


def test_load_evaluation_names_its_own_writer(tmp_path):
    """Its hints named ProfileResults.save."""
    for text, words in (("not json", "is not JSON that kscope reads"),
                        (json.dumps({"format": "other"}), "is not a kscope results file")):
        (tmp_path / "x.json").write_text(text)
        with pytest.raises(ConfigError) as info:
            kscope.load_evaluation(tmp_path / "x.json")
        assert words in str(info.value)
        assert str(info.value).endswith("give a file written by EvaluationResults.save"), str(info.value)
        with pytest.raises(ConfigError, match=r"give a file written by ProfileResults.save$"):
            kscope.load(tmp_path / "x.json")


def test_merge_of_a_prefix_measured_without_shards_points_to_load(sim, tmp_path):
    """It said 'no results file' under a directory holding a function's results."""
    measured(sim, output_prefix=str(tmp_path) + os.sep)()
    with pytest.raises(ConfigError) as info:
        kscope.merge([tmp_path])
    results = f"{tmp_path}{os.sep}f-0-results.json"
    assert str(info.value) == (f"nothing to merge under '{tmp_path}': it holds the results of a sweep measured without "
                               f"shards ('{results}'), which are whole already: read them with kscope.load('{results}')")
