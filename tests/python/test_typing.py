"""The package is typed (py.typed, the kscope._core stub): mypy accepts the package, mypy with
--strict's checks accepts typed user code (every call form of the decorators included) and reports the mistakes in
typed_misuse.py on exactly their lines, and the stub names exactly what the built extension exports."""

import inspect
import re
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest

import kscope._core
import kscope.analyze
from conftest import missing_reason
from kscope import _options

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python"
HERE = Path(__file__).resolve().parent
STUBS = PACKAGE / "kscope" / "_core"

try:
    import mypy  # noqa: F401
except ImportError:
    mypy = None
needs_mypy = pytest.mark.skipif(mypy is None, reason=missing_reason("import:mypy"))


# The flags of mypy --strict that may be set per module (--strict itself is global only): typed
# user code is checked with them, the package with python/mypy.ini's own.
STRICT_PER_MODULE = ["disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls",
                     "disallow_untyped_defs", "disallow_incomplete_defs", "disallow_untyped_decorators",
                     "warn_return_any", "no_implicit_reexport", "strict_equality", "strict_concatenate"]
USER_CODE = {"typed_usage": HERE / "typed_usage.py", "typed_misuse": HERE / "typed_misuse.py"}


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory):
    """One mypy run over the package and the typed user code (a run costs minutes on two cores):
    {file name: [error lines]}."""
    tmp = tmp_path_factory.mktemp("mypy")
    config = tmp / "mypy.ini"
    config.write_text((PACKAGE / "mypy.ini").read_text().replace("$MYPY_CONFIG_FILE_DIR", str(PACKAGE)) +
                      f"\n[mypy-{','.join(USER_CODE)}]\n" + "".join(f"{flag} = True\n" for flag in STRICT_PER_MODULE))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp / "cache"),
         "--no-error-summary", "--show-error-codes", "kscope", *map(str, USER_CODE.values())],
        cwd=PACKAGE, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    errors: dict[str, list[str]] = {}
    for line in (result.stdout + result.stderr).splitlines():
        m = re.match(r"(.+?):\d+: error:", line)
        if m:
            errors.setdefault(Path(m.group(1)).name, []).append(line)
        # mypy 1.7 and later warn that Unpack, which python/mypy.ini enables for older ones, is on already.
        elif ": note:" not in line and line.strip() and "is already enabled by default" not in line:
            errors.setdefault("(mypy)", []).append(line)  # a crash or a bad option: nothing passes
    return errors


@needs_mypy
def test_the_package_type_checks(mypy_errors):
    in_package = {f: e for f, e in mypy_errors.items() if f not in ("typed_usage.py", "typed_misuse.py")}
    assert not in_package, "\n".join(line for e in in_package.values() for line in e)


@needs_mypy
def test_typed_usage_type_checks_strictly(mypy_errors):
    assert "typed_usage.py" not in mypy_errors, "\n".join(mypy_errors["typed_usage.py"])


@needs_mypy
def test_misuse_is_reported_on_exactly_the_marked_lines(mypy_errors):
    path = USER_CODE["typed_misuse"]
    expected = {n for n, line in enumerate(path.read_text().splitlines(), 1) if line.endswith("# expect-error")}
    out = "\n".join(mypy_errors.get("typed_misuse.py", []))
    reported = {int(m.group(1)) for m in re.finditer(r"typed_misuse\.py:(\d+): error:", out)}
    assert expected, "typed_misuse.py marks no line"
    assert reported == expected, f"missed {sorted(expected - reported)}, unexpected {sorted(reported - expected)}:\n{out}"


def test_the_decorators_keep_their_options_at_run_time():
    """The typing of kernel's and plot's call forms is static only: at run time they are the plain
    functions, whose signatures (help(), an IDE) list every option with its default."""
    kernel = inspect.signature(kscope.analyze.kernel).parameters
    plot = inspect.signature(kscope.analyze.plot).parameters
    assert list(kernel)[:3] == ["_func", "configs", "runs"] and kernel["warmup_runs"].default == 1
    assert list(plot)[:2] == ["filename", "metric"] and plot["plot_type"].default == "line"


def stub_names(path):
    """The public names a stub file defines at its top level."""
    names = set()
    for line in path.read_text().splitlines():
        m = re.match(r"(?:class|def) (\w+)|(\w+):|from \. import \w+ as (\w+)", line)
        if m:
            names.add(next(g for g in m.groups() if g))
    return {n for n in names if not n.startswith("_") or n == "__version__"}


def module_names(module):
    return {n for n, v in vars(module).items()
            if (not n.startswith("_") or n == "__version__") and not inspect.ismodule(v) or n == "testing"}


@pytest.mark.parametrize("module, stub", [(kscope._core, "__init__.pyi"), (kscope._core.testing, "testing.pyi")])
def test_stub_names_what_the_module_exports(module, stub):
    in_stub = stub_names(STUBS / stub) - {"Cell"}  # Cell: a type alias of the stub only
    in_module = module_names(module)
    assert in_stub == in_module, (
        f"python/kscope/_core/{stub} lacks {sorted(in_module - in_stub)} and has {sorted(in_stub - in_module)} "
        f"that {module.__name__} does not export: update the stub with the bindings in python/src/")


def test_stub_classes_name_the_members_of_the_module():
    for name, cls in vars(kscope._core).items():
        if not inspect.isclass(cls) or name.startswith("_"):
            continue
        # An enum's name and value are declared once, on the stub's _Enum.
        members = set(cls.__members__) if hasattr(cls, "__members__") else {m for m in vars(cls) if not m.startswith("_")}
        text = (STUBS / "__init__.pyi").read_text()
        body = re.search(rf"^class {name}\b.*?:\n((?:    .*\n|\n)*)", text, re.M)
        assert body, f"no class {name} in the stub"
        in_stub = set(re.findall(r"^    (?:def )?(\w+)[:(]", body.group(1), re.M)) - {"__init__", "__len__"}
        in_stub = {m for m in in_stub if not m.startswith("_")}
        if name in ("Backend", "Settings"):
            # Backend's attributes are the engine's registered backends: the stub declares kscope's
            # own, which must be there; a backend registered besides them needs no line in the stub.
            # Settings' are the engine's fields: the stub types those the package names.
            assert in_stub <= members, (name, sorted(members), sorted(in_stub))
        else:
            assert in_stub == members, (name, sorted(members), sorted(in_stub))


def test_backend_names_come_from_the_engine():
    """backend='s choices are the engine's registry's; the Literal type checkers see is written by
    hand, so it must list exactly them, and analyze.kernel's help describes each."""
    engine = {d.python_name: d for d in kscope._core.backends() if d.python_name}
    assert list(_options.BACKENDS) == list(engine)
    assert list(typing.get_args(_options.BackendName)) == list(engine)
    assert typing.get_type_hints(_options.KernelOptions)["backend"] == _options.BackendName | None
    help_text = " ".join((kscope.analyze.kernel.__doc__ or "").split())
    for name, d in engine.items():
        assert f"'{name}' ({d.summary})" in help_text, name


def runtime_classes(python_type):
    """The classes a value of a stub's type may have: "tuple[int, int] | None" -> (tuple, NoneType)."""
    hint = eval(python_type, vars(kscope._core))
    alternatives = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    return tuple(typing.get_origin(a) or a for a in alternatives)


def test_settings_fields_come_from_the_engine():
    """The engine's one table of Settings fields: each field that has a Python type is bound, from
    the table, with a value of that type; the stub's Settings types some of them, as the table
    does; and analyze.kernel takes each Python name."""
    fields = kscope._core.settings_fields()
    typed = {name: python_type for name, _, python_type, _, _ in fields if python_type}
    assert {m for m in vars(kscope._core.Settings) if not m.startswith("_")} == set(typed)
    settings = kscope._core.Settings()
    for name, python_type in typed.items():
        assert isinstance(getattr(settings, name), runtime_classes(python_type)), (name, python_type)
        setattr(settings, name, getattr(settings, name))
    text = (STUBS / "__init__.pyi").read_text()
    body = re.search(r"^class Settings\b.*?:\n((?:    .*\n|\n)*)", text, re.M).group(1)
    in_stub = dict(re.findall(r"^    (\w+): (.+)$", body, re.M))
    assert in_stub and in_stub.items() <= typed.items(), sorted(in_stub.items() - typed.items())
    assert {python_name for _, python_name, *_ in fields if python_name} <= set(_options.OPTIONS)
    assert {role for *_, role, _ in fields} == {"measurement", "summary", "session"}


def test_the_option_table_makes_kernels_keywords_options_and_help():
    """analyze.kernel's options are one table: its keywords are the table's, in its signature with
    the table's defaults; each option sets Settings fields the engine has; its help lists each one;
    a choice's values are the engine enumeration's, as the Literal type checkers see spells them."""
    kernel = inspect.signature(kscope.analyze.kernel).parameters
    keywords = {name: p for name, p in kernel.items() if name not in ("_func", "configs")}
    assert set(keywords) == set(_options.OPTIONS)
    engine_fields = {name for name, *_ in kscope._core.settings_fields()}
    # help() shows the options in the table's order, typed as type checkers see them, evaluated.
    hints = typing.get_type_hints(_options.KernelOptions)
    assert list(keywords) == list(_options.OPTIONS) and set(hints) == set(_options.OPTIONS)
    for name, parameter in keywords.items():
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.annotation == hints[name], name
    assert inspect.signature(kscope.analyze.kernel).return_annotation != "None"
    help_text = kscope.analyze.kernel.__doc__ or ""
    for name, option in _options.OPTIONS.items():
        assert keywords[name].default == option.default, name
        assert set(option.fields) <= engine_fields, (name, option.fields)
        assert f"\n    {name}" in help_text, name
        if option.choices is not None:
            spelt = {a for arg in typing.get_args(hints[name]) for a in typing.get_args(arg) or (arg,)}
            assert set(option.choices.choices) == spelt, (name, option.choices.choices, spelt)
    engine = _options.Options(runs=3, thermal_mode="off", adaptive={"criterion": "rsd"}).settings()
    assert (engine.runs, engine.thermal_mode, engine.sampling, engine.adaptive.criterion) == (
        3, kscope._core.ThermalMode.off, kscope._core.Sampling.adaptive, kscope._core.StopCriterion.named("rsd"))


@pytest.mark.parametrize("entry", ["tune", "evaluate"])
def test_tune_and_evaluate_take_the_option_tables_options_typed_as_kernels(entry):
    """tune's and evaluate's options come from the option table: they take exactly the options the
    engine's entry for them neither refuses nor sets itself (each refusal with its reason, on a
    Settings field Python names), typed for type checkers by their class (TuneOptions,
    EvaluateOptions: `**options: Unpack[...]`) as analyze.kernel types them, and listed in their
    signature at run time with the table's default or the entry's own; their other parameters are
    their own, not the table's. typed_usage.py and typed_misuse.py type-check their calls."""
    function = getattr(kscope, entry)
    parameters = inspect.signature(function).parameters
    taken = [name for name in parameters if name in _options.OPTIONS]
    assert taken == _options.entry_options(entry), (entry, taken)
    rules = kscope._core.entry_options()[entry]
    python_names = {python_name for _, python_name, *_ in kscope._core.settings_fields() if python_name}
    assert rules["refused"] and set(rules["refused"]) | set(rules["fixed"]) <= python_names
    assert all(why.strip() for why in rules["refused"].values())
    declared = typing.get_type_hints(function)
    assert declared["options"] == typing.Unpack[_options.ENTRY_TYPES[entry]], declared["options"]
    hints, kernel_hints = typing.get_type_hints(_options.ENTRY_TYPES[entry]), typing.get_type_hints(_options.KernelOptions)
    assert set(hints) == set(taken), (entry, sorted(set(hints) ^ set(taken)))
    for name in taken:
        assert parameters[name].default == _options.entry_default(entry, name), (entry, name)
        assert parameters[name].annotation == hints[name], (entry, name)
        if name not in _options.ENTRY_FORMS.get(entry, ()):
            assert hints[name] == kernel_hints[name], (entry, name, hints[name], kernel_hints[name])
    assert kscope._core.entry_options()["profile"] == {"refused": {}, "fixed": []}


@pytest.mark.parametrize("entry", ["tune", "evaluate"])
def test_an_option_tune_or_evaluate_does_not_take_is_refused_with_the_reason(entry):
    """A keyword the entry does not take is Python's TypeError, with the engine's reason for a
    refused option and the nearest option for a misspelt one."""
    function = getattr(kscope, entry)

    def call(**given):
        return function(print, print, lambda config, seed: 1, **given) if entry == "evaluate" else function(print, **given)

    refused, why = next(iter(kscope._core.entry_options()[entry]["refused"].items()))
    with pytest.raises(TypeError, match=re.escape(f"{entry}() got an unexpected keyword argument {refused!r}: "
                                                  f"{entry} does not take it ({why})")):
        call(**{refused: None})
    with pytest.raises(TypeError, match=re.escape(f"{entry}() got an unexpected keyword argument 'warmup': did "
                                                  f"you mean 'warmup_runs'?")):
        call(warmup=1)


def test_the_engines_names_are_the_pythons():
    """Names the engine exports once, checked where Python spells them: the collection scopes of
    kscope.CollectionScope, the error classes the engine's errors become (each in kscope.errors, and
    every ProfilerException there is one of them), the enumerations' members (the stub's _Enum)."""
    assert {s.value for s in kscope.CollectionScope} == set(kscope._core.collection_scopes())
    engine_errors = kscope._core.error_classes()
    assert set(engine_errors) <= set(kscope.errors.__all__)
    raised_by_python = {"SweepInterrupted"}  # Ctrl-C: not a kscope.Error in the engine either
    profiler_errors = {name for name in kscope.errors.__all__
                       if isinstance(getattr(kscope.errors, name), type)
                       and issubclass(getattr(kscope.errors, name), kscope.errors.ProfilerException)}
    assert profiler_errors - raised_by_python == set(engine_errors)
    assert list(kscope._core.InfoCollectorErrors.__members__) == ["warn", "raise_"]


def test_stopping_rules_come_from_the_engine():
    """adaptive={'criterion': ...} takes the names of the engine's table of stopping rules, each one
    set as that rule in the engine's Settings; another name is refused with the table's names, which
    analyze.kernel's help lists too."""
    rules = kscope._core.stopping_rules()
    assert rules[:2] == ["ci_halfwidth", "rsd"]  # kscope's own, as results files name them
    for name in rules:
        criterion = _options.Options(adaptive={"criterion": name}).settings().adaptive.criterion
        assert criterion == kscope._core.StopCriterion.named(name) and criterion.name == name
    listed = " or ".join(map(repr, rules))
    with pytest.raises(kscope.ConfigError, match=re.escape(f"adaptive['criterion'] must be {listed}, not 'noise'")):
        _options.Options(adaptive={"criterion": "noise"})
    with pytest.raises(kscope.ConfigError, match="no stopping rule is named 'noise': the registered ones are "
                                                 "'ci_halfwidth', 'rsd'"):
        kscope._core.StopCriterion.named("noise")
    assert " | ".join(map(repr, rules)) in " ".join((kscope.analyze.kernel.__doc__ or "").split())


def test_an_option_added_to_the_table_is_checked_set_and_described(monkeypatch, sim):
    """The option recipe's Python row, walked: a row added to the table is checked with the others,
    has its entry in the help, and sets its engine field, which reaches the engine through the
    Settings bound from the engine's table: analyze.kernel takes it with no change of its own (its
    type for type checkers, in _options.KernelOptions, is the row's file)."""
    toy = _options.Option("toy_warmups", 2, lambda o, v: _options._count(o, v, 0), ["warmup_runs"],
                          label="kscope", help="a toy option that sets the warm-up runs.")
    monkeypatch.setitem(_options.OPTIONS, toy.name, toy)
    assert _options.Options().settings().warmup_runs == 2
    with pytest.raises(kscope.ConfigError, match="toy_warmups must be an integer from 0"):
        _options.Options(toy_warmups=-1)
    assert "    toy_warmups (kscope): a toy option that sets the warm-up runs." in _options.options_help()
    calls = []

    def body(n):
        calls.append(n)
        with kscope.annotate("k"):
            sim.launch("k", 1.0)

    kscope.analyze.kernel(configs=[(1,)], runs=2, toy_warmups=3, verbosity=0)(body)()
    assert len(calls) == 2 + 3


def test_an_unknown_option_is_named_with_the_nearest_one():
    with pytest.raises(TypeError, match=r"^kernel\(\) got an unexpected keyword argument 'warmup': did you mean "
                                        r"'warmup_runs'\?$"):
        kscope.analyze.kernel(warmup=2)
    with pytest.raises(TypeError, match=r"^kernel\(\) got an unexpected keyword argument 'xyzzy'; its options: runs, "):
        kscope.analyze.kernel(xyzzy=2)
