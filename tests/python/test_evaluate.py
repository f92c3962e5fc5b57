"""kscope.evaluate on the simulated backend: the Python side's own findings (outputs that are not
plain, timers replaced), its values (NumPy arrays, torch CPU tensors, numbers, tuples and dicts), the
results object, failing inputs saved for replay, and the errors it gives."""

import json
import math
import os
import re
import sys
import time
import types

import numpy as np
import pandas as pd
import pytest

import kscope
from conftest import need
from kscope import _core
from kscope.errors import ConfigError, SweepError

torch = need("torch")


def normal(config, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(config["n"]).astype(np.float32),)


def sides(sim, reference_ns=1000.0, candidate_ns=500.0):
    def reference(x):
        sim.launch("reference_kernel", reference_ns)
        return x * 2

    def candidate(x):
        sim.launch("candidate_kernel", candidate_ns)
        return x * 2

    return candidate, reference


def evaluated(candidate, reference, inputs=normal, configs=({"n": 64},), **options):
    options.setdefault("verbosity", "silent")
    return kscope.evaluate(candidate, reference, inputs, list(configs), **options)


def findings_of(results):
    return set(results.findings()["Finding"])


def test_an_honest_faster_candidate_is_faster_with_the_configs_as_given():
    with kscope.testing.simulated_backend() as sim:
        results = evaluated(*sides(sim), configs=[{"n": 64, "dtype": "f32"}, {"n": 128, "dtype": "f32"}])
    df = results.to_dataframe()
    assert list(df.columns[:3]) == ["n", "dtype", "Verdict"]
    assert list(df["n"]) == [64, 128]
    assert results.verdicts() == ["faster", "faster"]
    assert list(df["Speedup"]) == [2.0, 2.0]
    assert df["Runs"].dtype == "int64" and list(df["Runs"]) == [20, 20]
    assert df["Correct"].all() and df["FailingSeed"].isna().all()
    assert results.findings().empty
    assert set(results.measurements.to_dataframe()["Annotation"]) == {"candidate", "reference"}


def test_checked_runs_reads_the_warm_ups_and_that_many_recorded_runs_and_zero_reads_every_run():
    with kscope.testing.simulated_backend() as sim:
        subset = evaluated(*sides(sim), runs=12, warmup_runs=2, checked_runs=3).to_dataframe().iloc[0]
        every = evaluated(*sides(sim), runs=12, warmup_runs=2, checked_runs=0).to_dataframe().iloc[0]
    assert subset["CheckedRuns"] == 5 and every["CheckedRuns"] == 14
    assert subset["Verdict"] == every["Verdict"] == "faster"
    with kscope.testing.simulated_backend() as sim:
        for bad in (-1, 2.5, True):
            with pytest.raises(ConfigError, match=r"checked_runs must be an integer >= 0 \(0: every run\)"):
                evaluated(*sides(sim), checked_runs=bad)


def test_a_config_that_is_not_a_dict_is_one_column():
    with kscope.testing.simulated_backend() as sim:
        candidate, reference = sides(sim)
        results = evaluated(candidate, reference, inputs=lambda n, seed: normal({"n": n}, seed), configs=[16, 32])
    df = results.to_dataframe()
    assert list(df["config"]) == [16, 32]


def test_an_output_that_is_not_a_plain_tensor_is_a_finding():
    class Lazy(torch.Tensor):
        """A tensor subclass, as lazy outputs computed when read are made."""

    with kscope.testing.simulated_backend() as sim:
        def reference(x):
            sim.launch("reference_kernel", 1000)
            return x * 2

        def candidate(x):
            sim.launch("candidate_kernel", 500)
            return (x * 2).as_subclass(Lazy)

        results = evaluated(candidate, reference, inputs=lambda c, seed: torch.randn(
            c["n"], generator=torch.Generator().manual_seed(seed)))
    assert results.verdicts() == ["suspect"]
    assert "output_not_plain" in findings_of(results)


@pytest.mark.parametrize("clock", ["perf_counter", "time_ns", "monotonic_ns"])
def test_a_timer_replaced_during_the_call_is_a_finding(monkeypatch, clock):
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)

        def candidate(x):
            sim.launch("candidate_kernel", 500)
            monkeypatch.setattr(time, clock, lambda: 0)
            return x * 2

        results = evaluated(candidate, reference)
        monkeypatch.undo()
    assert "timer_patched" in findings_of(results)
    detail = results.findings().set_index("Finding").loc["timer_patched", "Detail"]
    assert f"time.{clock} was replaced during the candidate's call" in detail


def _triton_testing(do_bench):
    """A module named triton.testing holding do_bench (Triton itself is not needed)."""
    module = types.ModuleType("triton.testing")
    module.do_bench = do_bench
    return module


def _without_triton_testing(monkeypatch):
    """No triton.testing loaded, as before this test, once it ends."""
    monkeypatch.setitem(sys.modules, "triton.testing", None)  # restores the entry as it was, or its absence
    monkeypatch.delitem(sys.modules, "triton.testing")


def _own_do_bench(fn):
    return 1.0


_own_do_bench.__module__ = "triton.testing"


@pytest.mark.parametrize("replaced_in_the_importing_call", [True, False])
def test_a_timer_of_a_module_the_candidate_imports_is_watched_from_then(monkeypatch, replaced_in_the_importing_call):
    _without_triton_testing(monkeypatch)
    calls = []
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)

        def candidate(x):
            sim.launch("candidate_kernel", 500)
            calls.append(None)
            if len(calls) == 1:
                sys.modules["triton.testing"] = _triton_testing(_own_do_bench)
            if len(calls) == (1 if replaced_in_the_importing_call else 3):
                sys.modules["triton.testing"].do_bench = lambda fn: 0.0
            return x * 2

        results = evaluated(candidate, reference)
    detail = results.findings().set_index("Finding").loc["timer_patched", "Detail"]
    assert "triton.testing.do_bench was replaced during the candidate's call" in detail


def test_a_timer_of_a_module_the_candidate_imports_and_leaves_alone_is_no_finding(monkeypatch):
    _without_triton_testing(monkeypatch)
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)

        def candidate(x):
            sim.launch("candidate_kernel", 500)
            sys.modules.setdefault("triton.testing", _triton_testing(_own_do_bench))
            return x * 2

        results = evaluated(candidate, reference)
    assert results.verdicts() == ["faster"]
    assert "timer_patched" not in findings_of(results)


def test_the_answer_written_into_the_input_is_found_and_in_place_on_both_sides_is_not():
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)

        def in_its_input(x):
            sim.launch("candidate_kernel", 500)
            x *= 2
            return x

        cheating = evaluated(in_its_input, reference)

        def reference_in_place(x):
            sim.launch("reference_kernel", 1000)
            x *= 2
            return x

        honest = evaluated(in_its_input, reference_in_place)
    assert {"output_aliases_input", "input_mutated"} <= findings_of(cheating)
    assert honest.verdicts() == ["faster"], honest.findings()


def test_an_output_handed_back_again_is_found_while_kscope_holds_the_earlier_one():
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)
        kept = np.empty(64, dtype=np.float32)

        def candidate(x):
            sim.launch("candidate_kernel", 500)
            np.multiply(x, 2, out=kept)
            return kept

        results = evaluated(candidate, reference)
    assert "output_aliases_earlier_output" in findings_of(results)


def test_work_moved_to_an_unjoined_stream_and_work_after_return_are_found():
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)

        def on_a_side_stream(x):
            sim.launch("side_kernel", 3000, stream=5)
            return x * 2

        unjoined = evaluated(on_a_side_stream, reference)

        def joined(x):
            sim.launch("side_kernel", 300, stream=5)
            sim.join(5, 0)
            return x * 2

        honest = evaluated(joined, reference)

        late = []

        def returns_early(x):
            sim.launch("candidate_kernel", 100)
            late.append(True)
            return x * 2

        sim.during_synchronize(lambda: late and (late.clear(), sim.launch("late_kernel", 900)))
        after = evaluated(returns_early, reference)
        sim.during_synchronize(None)
    assert "unjoined_work" in findings_of(unjoined)
    assert unjoined.to_dataframe()["CandidateMedianNs"][0] == 3000  # timed all the same
    assert honest.verdicts() == ["faster"], honest.findings()
    assert "work_after_return" in findings_of(after)


def test_short_unjoined_work_is_found_however_slowly_the_host_returns():
    """The side stream's kernel ends long before the host returns (a Python return path, a loaded
    CPU), so kscope's marker on the caller's stream starts after it: the streams' order finds it."""
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)

        def short_side_work(x):
            sim.launch("side_kernel", 300, stream=5)
            sim.host_work(50_000)
            return x * 2

        unjoined = evaluated(short_side_work, reference)

        def waited_for(x):
            sim.launch("side_kernel", 300, stream=5)
            sim.host_wait(5)  # side.synchronize() before returning
            sim.host_work(50_000)
            return x * 2

        waited = evaluated(waited_for, reference)
    assert "unjoined_work" in findings_of(unjoined), unjoined.findings()
    assert waited.verdicts() == ["faster"], waited.findings()


def test_a_candidate_that_raises_is_incorrect_and_a_reference_that_raises_stops_with_partial_results():
    with kscope.testing.simulated_backend() as sim:
        candidate, reference = sides(sim)

        def broken(x):
            raise ValueError("no kernel for this size")

        failed = evaluated(broken, reference)
        assert failed.verdicts() == ["incorrect"]
        assert "ValueError: no kernel for this size" in failed.to_dataframe()["Reason"][0]

        def reference_breaks_at_128(x):
            if x.size == 128:
                raise RuntimeError("reference broken")
            return reference(x)

        with pytest.raises(SweepError) as caught:
            evaluated(candidate, reference_breaks_at_128, configs=[{"n": 64}, {"n": 128}])
    partial = caught.value.partial_results
    assert isinstance(partial, kscope.EvaluationResults)
    assert partial.verdicts() == ["faster"]


def test_wrong_outputs_are_incorrect_with_the_failing_inputs_saved_for_replay(tmp_path):
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)

        def low_precision(x):
            sim.launch("candidate_kernel", 500)
            return (x.astype(np.float16) * 2).astype(np.float32)

        results = evaluated(low_precision, reference, failing_inputs=tmp_path)
    row = results.to_dataframe().iloc[0]
    assert row["Verdict"] == "incorrect" and not row["Correct"]
    assert row["MaxRelError"] > kscope._core.default_rtol("float32")
    [path] = results.failing_inputs
    assert os.path.basename(path) == f"failing-0-seed{row['FailingSeed']}.pt"
    saved = torch.load(path, weights_only=False)
    assert saved["seed"] == row["FailingSeed"] and saved["config"] == {"n": 64}
    np.testing.assert_array_equal(saved["inputs"][0], normal({"n": 64}, int(row["FailingSeed"]))[0])
    np.testing.assert_array_equal(saved["reference_outputs"], saved["inputs"][0] * 2)


def test_outputs_of_another_count_shape_or_dtype_are_incorrect():
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)

        def as_float64(x):
            sim.launch("candidate_kernel", 500)
            return (x * 2).astype(np.float64)

        def two_outputs(x):
            sim.launch("candidate_kernel", 500)
            return x * 2, x

        for candidate, words in ((as_float64, "is float64, the reference's float32"),
                                 (two_outputs, "returned 2 outputs, the reference 1")):
            results = evaluated(candidate, reference)
            assert results.verdicts() == ["incorrect"]
            assert words in results.to_dataframe()["Reason"][0]


def test_tuples_dicts_numbers_and_torch_tensors_are_outputs():
    with kscope.testing.simulated_backend() as sim:
        def make(config, seed):
            g = torch.Generator().manual_seed(seed)
            return {"a": torch.randn(8, generator=g), "b": torch.randn(8, generator=g)}

        def reference(a, b):
            sim.launch("reference_kernel", 1000)
            return {"sum": a + b, "total": float((a + b).sum())}

        def candidate(a, b):
            sim.launch("candidate_kernel", 500)
            s = torch.add(a, b)
            return {"sum": s, "total": float(s.sum())}

        results = evaluated(candidate, reference, inputs=make, configs=[None])
    assert results.verdicts() == ["faster"], results.to_dataframe()["Reason"][0]


def test_the_evaluation_saves_loads_and_compares(tmp_path):
    with kscope.testing.simulated_backend() as sim:
        results = evaluated(*sides(sim))
    path = tmp_path / "evaluation.json"
    results.save(path)
    back = kscope.load_evaluation(path)
    assert isinstance(back, kscope.EvaluationResults)
    assert set(kscope.load(path).to_dataframe()["Annotation"]) == {"candidate", "reference"}
    pd.testing.assert_frame_equal(back.to_dataframe(), results.to_dataframe())
    table = kscope.compare(results, back)
    assert set(table["Verdict"]) == {"same"}
    # The file's rows and the DataFrame hold the engine's columns of the table, the views those it marks shown.
    columns = [name for name, _ in _core.derived_columns()["evaluation"]]
    saved = json.loads(path.read_text())["evaluation"]["rows"][0]
    assert list(saved) == ["Config", *columns]
    assert list(back.to_dataframe().columns) == ["n", *columns]
    shown = ["n", *_core.evaluation_view_columns()]
    assert str(results).splitlines()[1].split() == shown
    assert re.findall(r"<th>(\w+)</th>", results._repr_html_()) == shown
    assert "faster" in str(results)


def test_output_prefix_writes_a_file_load_evaluation_reads(tmp_path):
    with kscope.testing.simulated_backend() as sim:
        evaluated(*sides(sim), output_prefix=str(tmp_path) + os.sep)
    assert kscope.load_evaluation(tmp_path / "results.json").verdicts() == ["faster"]


@pytest.mark.parametrize("change, words", [
    (dict(inputs=3), "inputs must be a function"),
    (dict(inputs=lambda config: None), "does not accept two arguments"),
    (dict(configs=[{"n": 1}, {"m": 1}]), "the same keys"),
    (dict(configs=[]), "configs is empty"),
    (dict(rtol=-1.0), "rtol must be a finite number >= 0"),
    (dict(seed=-1), "seed must be an integer"),
    (dict(confidence=2.0), "confidence is 2"),
    (dict(runs=0), "runs"),
])
def test_bad_options_are_config_errors_naming_them(change, words):
    with kscope.testing.simulated_backend() as sim:
        candidate, reference = sides(sim)
        arguments = dict(inputs=normal, configs=[{"n": 8}])
        arguments.update(change)
        with pytest.raises(ConfigError, match=None) as caught:
            kscope.evaluate(candidate, reference, arguments.pop("inputs"), arguments.pop("configs"),
                            verbosity="silent", **arguments)
    assert words in str(caught.value)


def test_inputs_that_ignore_the_seed_are_refused():
    with kscope.testing.simulated_backend() as sim:
        with pytest.raises(ConfigError, match="the same inputs for two different seeds"):
            evaluated(*sides(sim), inputs=lambda config, seed: (np.ones(8, dtype=np.float32),))


def test_an_output_that_is_no_array_makes_the_candidate_incorrect():
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)
        results = evaluated(lambda x: "not an array", reference)
    assert results.verdicts() == ["incorrect"]
    assert "output is a str, not a tensor or array" in results.to_dataframe()["Reason"][0]


# ---- Tolerances a few elements cannot blind ---------------------------------------------------------

LOWEST = float(np.finfo(np.float32).min)


@pytest.mark.parametrize("special, value", [
    (lambda i: i % 4 == 0, lambda x: np.full_like(x, LOWEST)),           # a mask's fill, finfo.min
    (lambda i: i % 4 == 0, lambda x: np.full_like(x, -np.inf)),          # -inf
    (lambda i: i % 4 == 0, lambda x: np.full_like(x, -1e9)),             # masked_fill(mask, -1e9)
    (lambda i: i % 4 != 0, lambda x: np.zeros_like(x)),                  # padding in three of four
    (lambda i: i % 16 == 0, lambda x: 1e6 * x),                          # a few elements far larger
], ids=["finfo-min-mask", "minus-inf-mask", "minus-1e9-mask", "padding", "mixed-magnitudes"])
def test_a_mask_padding_or_a_few_large_elements_never_blind_the_tolerance(special, value):
    """A reference holding finfo(float32).min in every fourth element made atol ~1e34: a candidate
    50% wrong everywhere else was 'faster', Correct, with MaxRelError 2.2e-38."""
    def output(x, factor):
        return np.where(special(np.arange(x.size)), value(x), factor * 2 * x).astype(np.float32)

    with kscope.testing.simulated_backend() as sim:
        def reference(x):
            sim.launch("reference_kernel", 1000)
            return output(x, 1)

        def right(x):
            sim.launch("candidate_kernel", 500)
            return output(x, 1)

        def half_wrong(x):
            sim.launch("candidate_kernel", 500)
            return output(x, 1.5)

        honest, wrong = evaluated(right, reference), evaluated(half_wrong, reference)
    assert honest.verdicts() == ["faster"], honest.to_dataframe()["Reason"][0]
    row = wrong.to_dataframe().iloc[0]
    assert row["Verdict"] == "incorrect" and not row["Correct"], row["Reason"]
    assert row["MaxRelError"] > 0.3


def test_an_attention_mask_filled_with_the_dtypes_minimum_must_match_and_never_blinds():
    def scores(config, seed):
        g = torch.Generator().manual_seed(seed)
        return torch.randn(32, 16, generator=g), torch.randn(32, 16, generator=g)

    causal = torch.ones(32, 32, dtype=torch.bool).triu(1)
    lowest = torch.finfo(torch.float32).min

    with kscope.testing.simulated_backend() as sim:
        def reference(q, k):
            sim.launch("reference_kernel", 1000)
            return (q @ k.T).masked_fill(causal, lowest)

        def reordered(q, k):  # honest: another summation order
            sim.launch("candidate_kernel", 500)
            return torch.einsum("id,jd->ij", q, k).masked_fill(causal, lowest)

        def half_wrong(q, k):
            sim.launch("candidate_kernel", 500)
            return (1.5 * (q @ k.T)).masked_fill(causal, lowest)

        def other_fill(q, k):
            sim.launch("candidate_kernel", 500)
            return (q @ k.T).masked_fill(causal, -1e38)

        results = {f.__name__: evaluated(f, reference, inputs=scores, configs=[None])
                   for f in (reordered, half_wrong, other_fill)}
    assert results["reordered"].verdicts() == ["faster"], results["reordered"].to_dataframe()["Reason"][0]
    for name in ("half_wrong", "other_fill"):
        row = results[name].to_dataframe().iloc[0]
        assert row["Verdict"] == "incorrect", (name, row["Reason"])
    assert "against -3.40282e+38" in results["other_fill"].to_dataframe()["Reason"][0]


# ---- Outputs by name --------------------------------------------------------------------------------

def test_dict_outputs_are_compared_by_key_and_other_keys_are_named():
    """The same dict with its keys in another order was 'incorrect': outputs were paired by position."""
    with kscope.testing.simulated_backend() as sim:
        def reference(x):
            sim.launch("reference_kernel", 1000)
            return {"scaled": x * 2, "shifted": x + 100}

        def reordered(x):
            sim.launch("candidate_kernel", 500)
            return {"shifted": x + 100, "scaled": x * 2}

        def renamed(x):
            sim.launch("candidate_kernel", 500)
            return {"scaled": x * 2, "moved": x + 100}

        def nested(x):
            sim.launch("candidate_kernel", 500)
            return {"scaled": x * 2, "shifted": [x + 100]}

        def wrong_shift(x):
            sim.launch("candidate_kernel", 500)
            return {"shifted": x + 101, "scaled": x * 2}

        results = {f.__name__: evaluated(f, reference) for f in (reordered, renamed, nested, wrong_shift)}
    assert results["reordered"].verdicts() == ["faster"], results["reordered"].to_dataframe()["Reason"][0]
    reason = results["renamed"].to_dataframe()["Reason"][0]
    assert results["renamed"].verdicts() == ["incorrect"]
    assert "it lacks output['shifted'], and returns output['moved'], which the reference does not return" in reason, reason
    reason = results["nested"].to_dataframe()["Reason"][0]
    assert "it lacks output['shifted'], and returns output['shifted'][0]" in reason, reason
    reason = results["wrong_shift"].to_dataframe()["Reason"][0]
    assert "output['shifted']: 64 of 64 elements outside" in reason, reason  # a mismatch names its output


# ---- failing_inputs= ----------------------------------------------------------------------------

def counting_sides(sim):
    calls = []

    def reference(x):
        calls.append("reference")
        sim.launch("reference_kernel", 1000)
        return x * 2

    def wrong(x):
        calls.append("candidate")
        sim.launch("candidate_kernel", 500)
        return x * 3

    return wrong, reference, calls


@pytest.mark.parametrize("where, words", [
    ("a-file", "is a regular file, not a directory"),
    ("/dev/null", "is a character device, not a directory"),
    ("/dev/null/failing", "cannot be made: '/dev/null' is a character device, not a directory"),
    ("a-file/failing", "cannot be made: '{tmp}/a-file' is a regular file, not a directory"),
])
def test_failing_inputs_where_no_directory_can_be_fails_before_the_first_run(tmp_path, where, words):
    """It failed after every run, with a bare [Errno 20], and the whole evaluation was lost."""
    (tmp_path / "a-file").write_text("x")
    path = where if where.startswith("/") else str(tmp_path / where)
    with kscope.testing.simulated_backend() as sim:
        wrong, reference, calls = counting_sides(sim)
        with pytest.raises(ConfigError) as caught:
            evaluated(wrong, reference, failing_inputs=path)
    assert calls == []
    message = str(caught.value)
    assert f"failing_inputs {path!r}" in message and words.format(tmp=tmp_path) in message, message
    assert "give a directory kscope can write in" in message


def test_failing_inputs_in_a_read_only_directory_fails_before_the_first_run(unprivileged):
    """Run as another user where the tests run as root (who may write anywhere)."""
    scratch, run = unprivileged
    directory = scratch / "ro"
    directory.mkdir()
    code = ("import sys, numpy as np, kscope\n"
            "calls = []\n"
            "with kscope.testing.simulated_backend() as sim:\n"
            "    def reference(x):\n"
            "        calls.append(1); sim.launch('r', 1000); return x * 2\n"
            "    def wrong(x):\n"
            "        calls.append(1); sim.launch('c', 500); return x * 3\n"
            "    inputs = lambda c, seed: (np.random.default_rng(seed).standard_normal(8).astype(np.float32),)\n"
            "    try:\n"
            "        kscope.evaluate(wrong, reference, inputs, [None], verbosity='silent', failing_inputs=sys.argv[1])\n"
            "    except kscope.ConfigError as e:\n"
            "        print(e, len(calls))\n")
    directory.chmod(0o555)
    try:
        inside, itself = run(code, directory / "failing"), run(code, directory)
    finally:
        directory.chmod(0o755)
    assert f"failing_inputs '{directory}/failing' cannot be made: '{directory}' is not writable" in inside.stdout, inside
    assert inside.stdout.rstrip().endswith(" 0"), inside  # no function was called
    assert f"failing_inputs '{directory}' is not writable" in itself.stdout, itself


def test_a_reproducer_that_cannot_be_saved_keeps_the_results_with_a_warning(tmp_path):
    """A failure to save after the runs lost the whole EvaluationResults."""
    directory = tmp_path / "failing"
    with kscope.testing.simulated_backend() as sim:
        wrong, reference, calls = counting_sides(sim)

        def wrong_and_in_the_way(x):
            if directory.is_dir():  # the directory is taken away while the evaluation runs
                directory.rmdir()
                directory.write_text("in the way")
            return wrong(x)

        with pytest.warns(kscope.ProfilerWarning, match="could not save the failing inputs of config 1") as warned:
            results = evaluated(wrong_and_in_the_way, reference, failing_inputs=directory)
    assert results.verdicts() == ["incorrect"]
    assert results.failing_inputs == []
    assert "the evaluation's results are complete" in str(warned[0].message)


def test_inputs_that_cannot_be_copied_are_made_again_and_a_generator_of_inputs_is_refused(tmp_path):
    """A generator among the inputs failed with "cannot pickle 'generator' object"."""
    with kscope.testing.simulated_backend() as sim:
        def with_a_generator(config, seed):
            x = normal({"n": 8}, seed)[0]
            return x, (float(v) for v in x)

        def reference(x, values):
            sim.launch("reference_kernel", 1000)
            return np.array(list(values), dtype=np.float32) * 2

        def candidate(x, values):
            sim.launch("candidate_kernel", 500)
            return np.array(list(values), dtype=np.float32) * 2

        assert evaluated(candidate, reference, inputs=with_a_generator, configs=[None]).verdicts() == ["faster"]

        with pytest.raises(SweepError) as caught:
            evaluated(*sides(sim), inputs=lambda config, seed: (x for x in normal({"n": 8}, seed)), configs=[None])
    message = str(caught.value)
    assert "in inputs(config, seed): ConfigError: inputs(config, seed) returned a generator" in message, message
    assert "return a tuple or list" in message


# ---- Which function failed --------------------------------------------------------------------------

def test_the_function_that_raised_is_named():
    """Only "ValueError: ..." was said, not whether inputs(), the reference or the candidate raised."""
    def bad_inputs(config, seed):
        raise ValueError("no such size")

    with kscope.testing.simulated_backend() as sim:
        candidate, reference = sides(sim)
        with pytest.raises(SweepError) as from_inputs:
            evaluated(candidate, reference, inputs=bad_inputs)

        def bad_reference(x):
            raise ValueError("reference broken")

        with pytest.raises(SweepError) as from_reference:
            evaluated(candidate, bad_reference)

        def returns_text(x):
            return "done"

        with pytest.raises(SweepError) as from_reference_outputs:
            evaluated(candidate, returns_text)

        def bad_candidate(x):
            raise ValueError("candidate broken")

        failed = evaluated(bad_candidate, reference)
    assert "failed in warm-up run 1, in inputs(config, seed): ValueError: no such size" in str(from_inputs.value)
    assert "failed in warm-up run 1, in the reference: ValueError: reference broken" in str(from_reference.value)
    assert "in the reference: ConfigError: output is a str, not a tensor or array" in str(from_reference_outputs.value)
    assert "the candidate raised ValueError: candidate broken" in failed.to_dataframe()["Reason"][0]


def test_a_reference_failing_on_the_candidates_inputs_says_it_was_given_them():
    """In the runs that are not read the reference is given the candidate's inputs: its failure there
    says so, in Python's words, since the candidate may have changed them (here, emptied a list)."""
    kept = []

    def inputs(config, seed):
        return ([np.random.default_rng(seed).standard_normal(config["n"]).astype(np.float32)],)

    with kscope.testing.simulated_backend() as sim:
        def candidate(xs):
            sim.launch("candidate_kernel", 500.0)
            kept.append(xs[0])  # its memory stays: kscope still reads it in the runs it checks
            out = xs[0] * 2
            xs.clear()
            return out

        def reference(xs):
            sim.launch("reference_kernel", 1000.0)
            return xs[0] * 2

        with pytest.raises(SweepError) as caught:
            evaluated(candidate, reference, inputs=inputs, runs=6, checked_runs=1)
    message = str(caught.value)
    assert "in the reference (given the candidate's inputs after its call, which may have changed them): " \
           "IndexError" in message, message
    assert "Contest::" not in message


def test_inputs_that_differ_for_one_seed_are_refused():
    """The reference got a clone of the candidate's inputs, so the same-seed check could never fail."""
    with kscope.testing.simulated_backend() as sim:
        with pytest.raises(ConfigError, match="different inputs for the same seed"):
            evaluated(*sides(sim), inputs=lambda config, seed: (np.random.default_rng().standard_normal(8),))


# ---- Long values in messages ------------------------------------------------------------------------

def test_long_values_are_cut_in_evaluate_messages():
    """100 KB and 1 MB values were echoed whole."""
    huge = "x" * 1_000_000
    with kscope.testing.simulated_backend() as sim:
        candidate, reference = sides(sim)
        refused = []
        for arguments in (dict(candidate=huge), dict(rtol=huge), dict(seed=huge), dict(configs=[{huge: 1}]),
                          dict(work=lambda config: huge)):
            call = dict(candidate=candidate, reference=reference, inputs=normal, configs=[{"n": 8}])
            call.update(arguments)
            with pytest.raises((ConfigError, SweepError)) as caught:
                kscope.evaluate(call.pop("candidate"), call.pop("reference"), call.pop("inputs"), call.pop("configs"),
                                verbosity="silent", **call)
            refused.append(str(caught.value))

        def bad_inputs(config, seed):
            raise ValueError("no inputs for this config")

        with pytest.raises(SweepError) as caught:
            evaluated(candidate, reference, inputs=bad_inputs, configs=[{"n": "y" * 100_000}])
        refused.append(str(caught.value))

        def keyed(x):
            sim.launch("candidate_kernel", 500)
            return {huge: x * 2}

        refused.append(evaluated(keyed, reference).to_dataframe()["Reason"][0])
    for message in refused:
        assert len(message) < 2000 and "characters)" in message, message[:300]


# ---- The simulated backend in Python's words --------------------------------------------------------

def test_a_negative_or_endless_simulated_duration_is_refused_in_python_terms():
    """A negative duration was accepted (as 0 ns); the refusal of inf named SimulatedBackend::launch."""
    with kscope.testing.simulated_backend() as sim:
        for duration, words in ((-5.0, "duration_ns is -5: a kernel takes 0 ns or more"),
                                (math.inf, "duration_ns is inf, beyond what the simulated GPU clock counts")):
            with pytest.raises(ConfigError) as caught:
                sim.launch("k", duration)
            assert str(caught.value).startswith("SimulatedBackend.launch: " + words), str(caught.value)
        with pytest.raises(ConfigError, match="gap_ns is -1: a gap takes 0 ns or more"):
            sim.launch("k", 10.0, gap_ns=-1.0)
