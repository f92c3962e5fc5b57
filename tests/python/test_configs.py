"""Config binding: Nsight Python's rules for where configs come from and how they bind, and the
user's values (any Python object) back in the DataFrame's config columns."""

import warnings

import numpy as np
import pandas as pd
import pytest

import kscope
from kscope import ConfigError, ProfilerException

QUIET = dict(verbosity=0)


def launcher(sim, seen=None):
    """A body recording its arguments and launching one simulated kernel."""

    def launch(*args, **kwargs):
        if seen is not None:
            seen.append((args, kwargs))
        with kscope.annotate("k"):
            sim.launch("kern", 100.0)

    return launch


def test_decorator_with_and_without_parentheses(sim):
    @kscope.analyze.kernel
    def bare():
        with kscope.annotate("k"):
            sim.launch("kern", 10.0)

    @kscope.analyze.kernel()
    def empty():
        with kscope.annotate("k"):
            sim.launch("kern", 10.0)

    assert bare.__name__ == "bare"
    for f in (bare, empty):
        df = f().to_dataframe()
        assert df["AvgValue"].tolist() == [10.0]


def test_decoration_time_configs_bind_in_declaration_order(sim):
    seen = []

    @kscope.analyze.kernel(configs=[(1, "a"), (2, "b")], runs=2, warmup_runs=0, **QUIET)
    def f(n, name):
        launcher(sim, seen)(n, name)

    df = f().to_dataframe()
    assert [a for a, _ in seen] == [(1, "a"), (1, "a"), (2, "b"), (2, "b")]  # config-major
    assert df["n"].tolist() == [1, 2] and df["name"].tolist() == ["a", "b"]


def test_call_time_configs_and_positional_call(sim):
    seen = []

    @kscope.analyze.kernel(warmup_runs=0, **QUIET)
    def f(n, m=7):
        launcher(sim, seen)(n, m)

    f(configs=[(1,), (2,)])
    assert [a for a, _ in seen] == [(1, 7), (2, 7)]  # padded with the default
    seen.clear()
    f(5)
    f(n=6, m=8)
    assert [a for a, _ in seen] == [(5, 7), (6, 8)]


def test_mismatched_config_lengths(sim):
    @kscope.analyze.kernel(**QUIET)
    def f(n, m=7):
        launcher(sim)(n, m)

    with pytest.raises(ConfigError, match=r"All configs must have the same number of arguments. Found lengths: \[1, 2, 1\]"):
        f(configs=[(1,), (2, 3), (4,)])


def test_scalar_configs_for_one_parameter_functions(sim):
    seen = []

    @kscope.analyze.kernel(configs=[1, 2, (3,)], warmup_runs=0, **QUIET)
    def f(n):
        launcher(sim, seen)(n)

    assert f().to_dataframe()["n"].tolist() == [1, 2, 3]


def test_keyword_only_parameters_are_passed_as_keywords(sim):
    seen = []

    @kscope.analyze.kernel(configs=[(1, 2.5)], warmup_runs=0, **QUIET)
    def f(n, *, scale):
        launcher(sim, seen)(n, scale=scale)

    f()
    assert seen == [((1,), {"scale": 2.5})]


def test_defaults_pad_short_configs_including_keyword_only(sim):
    seen = []

    @kscope.analyze.kernel(configs=[(1,)], warmup_runs=0, **QUIET)
    def f(n, m=2, *args, k=3, **kwargs):
        launcher(sim, seen)(n, m, k=k)

    df = f().to_dataframe()
    assert seen == [((1, 2), {"k": 3})]
    assert list(df.columns[:4]) == ["Annotation", "n", "m", "k"]  # *args/**kwargs are no columns


def test_generator_configs_are_materialised_once(sim):
    @kscope.analyze.kernel(configs=((n,) for n in (1, 2)), **QUIET)
    def f(n):
        launcher(sim)(n)

    assert f().to_dataframe()["n"].tolist() == [1, 2]
    assert f().to_dataframe()["n"].tolist() == [1, 2]  # a second call sees them again


def test_function_without_parameters_needs_no_configs(sim):
    @kscope.analyze.kernel(**QUIET)
    def f():
        launcher(sim)()

    df = f().to_dataframe()
    assert len(df) == 1 and list(df.columns[:2]) == ["Annotation", "Metric"]


@pytest.mark.parametrize(
    "configs, message",
    [
        (None, r"^You have provided no configs\. Provide configs at decoration time or at runtime: f\(\) has "
               r"required parameters \['n'\]"),
        ([], r"configs cannot be empty"),
        ([(1, 2, 3)], r"^Configs have 3 arguments, but function expects between 1 and 2: f\(\) has the parameters"),
        (5, r"configs must be a list of configurations, not int"),
    ],
)
def test_config_errors_name_the_fix(sim, configs, message):
    @kscope.analyze.kernel(**QUIET)
    def f(n, m=1):
        launcher(sim)(n, m)

    with pytest.raises(ProfilerException, match=message):
        f(configs=configs) if configs is not None else f()


def test_exact_arity_message_at_the_call():
    @kscope.analyze.kernel(configs=[(1,)])  # decorating never fails for configs, as in Nsight Python
    def g(a, b):
        pass

    with pytest.raises(ConfigError, match=r"^Configs have 1 arguments, but function expects 2: g\(\) has the "
                                          r"parameters \['a', 'b'\]"):
        g()


def test_configs_in_two_places_are_refused(sim):
    @kscope.analyze.kernel(configs=[(1,)], **QUIET)
    def f(n):
        launcher(sim)(n)

    with pytest.raises(ProfilerException, match="configs at decoration time and at runtime"):
        f(configs=[(2,)])
    with pytest.raises(ConfigError, match=r"called with arguments and also has configs"):
        f(3)


def test_bad_call_arguments_name_the_function(sim):
    @kscope.analyze.kernel(**QUIET)
    def f(n):
        launcher(sim)(n)

    with pytest.raises(ConfigError, match=r"f\(\) was called with arguments that do not fit"):
        f(1, 2)


def test_no_parameter_function_has_one_config():
    @kscope.analyze.kernel(configs=[(), ()])
    def f():
        pass

    with pytest.raises(ConfigError, match="has no parameters"):
        f()


class Dtype:
    """Stands for an object the engine cannot hold (a torch dtype, say)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"dtype.{self.name}"


def test_config_columns_keep_python_objects_and_dtypes(sim):
    f16, bf16 = Dtype("f16"), Dtype("bf16")
    shape = (64, 32)

    @kscope.analyze.kernel(configs=[(1, 0.5, True, "x", f16, shape, 1), (2, 1.5, False, "y", bf16, shape, 2.5)],
                           runs=2, **QUIET)
    def f(n, alpha, flag, label, dtype, shape, mixed):
        launcher(sim)()

    r = f()
    for df in (r.to_dataframe(), r.raw_dataframe()):
        assert df["n"].dtype == np.int64
        assert df["alpha"].dtype == np.float64
        assert df["flag"].dtype == bool
        assert pd.api.types.is_string_dtype(df["label"]) or df["label"].dtype == object
        assert df["dtype"].dtype == object and df["dtype"].iloc[0] is f16 and df["dtype"].iloc[-1] is bf16
        assert df["shape"].iloc[0] is shape  # a tuple stays one tuple
        assert df["mixed"].tolist()[0] == 1 and df["mixed"].tolist()[-1] == 2.5
    # The engine itself saw labels for the objects (in its messages and console table).
    assert "dtype.f16" in str(r)


class LooksAlike:
    """Objects that print alike and are not equal (tensors whose repr() is cut short, say)."""

    def __repr__(self):
        return "LooksAlike()"


def test_unhashable_and_identical_looking_configs_stay_apart(sim):
    a, b = LooksAlike(), LooksAlike()  # one label, two configs

    @kscope.analyze.kernel(configs=[(a, [1]), (b, [1])], **QUIET)
    def f(value, values):
        launcher(sim)()

    results = f()
    df = results.to_dataframe()
    assert len(df) == 2 and df["value"].iloc[0] is a and df["value"].iloc[1] is b
    assert results._core.configs() == [("LooksAlike()", "[1]"), ("LooksAlike() #2", "[1]")]  # told apart when saved


def test_a_config_given_twice_is_refused_naming_both(sim):
    """Issue 25: measured twice, it broke kscope.compare (rows reported as added and removed)."""
    @kscope.analyze.kernel(configs=[(1, [2]), (2, [2]), (1, [2])], **QUIET)
    def f(n, sizes):
        launcher(sim)()

    with pytest.raises(kscope.ConfigError, match=r"^configs 1 and 3 are the same \(n=1, sizes=\[2\]\): each config is "
                                                 r"measured once; remove the repeat$"):
        f()
    with pytest.raises(kscope.ConfigError, match=r"^configs 1 and 2 are the same \(n=4\)"):
        kscope.analyze.kernel(configs=[4, 4], **QUIET)(lambda n: launcher(sim)())()


def test_numpy_scalars_are_engine_values(sim):
    @kscope.analyze.kernel(configs=[(np.int32(4), np.float32(0.5), np.bool_(True))], **QUIET)
    def f(n, x, flag):
        launcher(sim)()

    df = f().to_dataframe()
    assert df["n"].dtype == np.int64 and df["x"].dtype == np.float64 and df["flag"].dtype == bool


def test_return_value_warns_once(sim):
    @kscope.analyze.kernel(configs=[(1,), (2,)], runs=3, **QUIET)
    def f(n):
        launcher(sim)()
        return n

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "Function 'f' returns a value" in messages[0]
