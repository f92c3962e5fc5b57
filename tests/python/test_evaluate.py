"""kscope.evaluate on the simulated backend: the Python side's own findings (outputs that are not
plain, timers replaced), its values (NumPy arrays, torch CPU tensors, numbers, tuples and dicts), the
results object, failing inputs saved for replay, and the errors it gives."""

import os
import time

import numpy as np
import pandas as pd
import pytest

import kscope
from conftest import need
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


def test_a_timer_replaced_during_the_call_is_a_finding():
    with kscope.testing.simulated_backend() as sim:
        _, reference = sides(sim)
        original = time.perf_counter

        def candidate(x):
            sim.launch("candidate_kernel", 500)
            time.perf_counter = lambda: 0.0
            return x * 2

        try:
            results = evaluated(candidate, reference)
        finally:
            time.perf_counter = original
    assert "timer_patched" in findings_of(results)
    detail = results.findings().set_index("Finding").loc["timer_patched", "Detail"]
    assert "time.perf_counter" in detail


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
    assert "<table>" in results._repr_html_() and "faster" in str(results)


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
    assert "output 0 is a str, not a tensor or array" in results.to_dataframe()["Reason"][0]
