"""Issue 39: the readers of kscope's files, fuzzed. Whatever a results file, a manifest, a progress
file or a samples file holds (valid files mutated in their structure and in their bytes: values of
other types, numbers beyond a double, nesting far deeper than kscope writes, truncation, UTF-16, a
BOM, binary), reading it either works or raises ConfigError or OSError naming the file (or its
prefix) in Python's terms: never another exception, a crash, a hang or memory beyond a bound.

The budget is fixed, so that CI is deterministic and quick: EXAMPLES examples per reader (690 in
all, about 25 s on one core of the 2-core CI machine: a resume measures what it drops again),
drawn with derandomize=True (the same examples at every run), each reader's test stopped by
faulthandler after HANG_S seconds (a hang ends the run with a traceback instead of blocking CI).
Each test prints its examples, seconds and memory growth (pytest -s shows them).
"""

import faulthandler
import json
import os
import resource
import tempfile
import time
import warnings
from pathlib import Path

import pytest

from conftest import need

need("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

import kscope
from kscope import ConfigError

# Hypothesis keeps caches in .hypothesis/ under the working directory: not in the source tree.
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "kscope-hypothesis"))

EXAMPLES = {"results": 300, "manifest": 150, "progress": 120, "samples": 120}
HANG_S = 120  # a reader's whole test; its examples take seconds
MEMORY_GROWTH_LIMIT = 1 << 30  # peak resident memory the fuzzing may add, in bytes


def fuzz(reader):
    return settings(max_examples=EXAMPLES[reader], derandomize=True, database=None, deadline=None, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

CONFIGS = [(1,), (2,), (3,)]

# JSON text json.dumps never writes, and kscope's readers must still refuse in words.
RAW_TOKENS = ["1e999", "-1e999", "1e-999", "9" * 400, "-9223372036854775809", "18446744073709551616", "NaN",
              "Infinity", "-0", "[" * 100000, "[" * 100000 + "]" * 100000, "[" * 65 + "]" * 65, '{"a":' * 70 + "1" + "}" * 70, '"\\ud800"',
              '"\\u0000"', '"\xff"', "", "tru", '"unterminated', "{", "]"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
replacements = json_values.map(json.dumps) | st.sampled_from(RAW_TOKENS)
PLACEHOLDER = "\x00kscope-fuzz\x00"


def paths_in(node, path=()):
    """Every path to a value of a parsed JSON document."""
    yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from paths_in(child, path + (key,))


def replaced(document, path, text, indent):
    """The document's JSON text with the value at `path` replaced by `text` (which may be no JSON)."""
    copy = json.loads(json.dumps(document))
    if not path:
        return text
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = PLACEHOLDER
    return json.dumps(copy, indent=indent).replace(json.dumps(PLACEHOLDER), text)


def json_mutation(data, text, indent=1):
    """`text` (one JSON document, `indent` as json.dumps takes it) with one value replaced, or one
    member dropped."""
    document = json.loads(text)
    paths = list(paths_in(document))
    path = data.draw(st.sampled_from(paths), label="path")
    if path and data.draw(st.booleans(), label="drop"):
        copy = json.loads(text)
        parent = copy
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
        return json.dumps(copy, indent=indent)
    return replaced(document, path, data.draw(replacements, label="replacement"), indent)


def byte_mutation(data, raw):
    """`raw` cut short, re-encoded, or with bytes changed, inserted or dropped."""
    kind = data.draw(st.sampled_from(["truncate", "utf-16", "utf-16-le", "bom", "binary", "flip", "insert", "zero"]),
                     label="byte mutation")
    at = data.draw(st.integers(0, len(raw)), label="at")
    if kind == "truncate":
        return raw[:at]
    if kind in ("utf-16", "utf-16-le"):
        return raw.decode("utf-8", "replace").encode(kind)
    if kind == "bom":
        return b"\xef\xbb\xbf" + raw
    if kind == "binary":
        return data.draw(st.binary(max_size=200), label="bytes")
    if kind == "zero":
        return bytes(len(raw))
    chunk = data.draw(st.binary(min_size=1, max_size=8), label="chunk")
    return raw[:at] + chunk + raw[at + (len(chunk) if kind == "flip" else 0):]


def line_mutation(data, raw, mutate_line):
    """`raw` (lines) with a line dropped, repeated, or changed by mutate_line(data, line)."""
    lines = raw.decode("utf-8", "surrogateescape").split("\n")
    at = data.draw(st.integers(0, len(lines) - 1), label="line")
    kind = data.draw(st.sampled_from(["drop", "repeat", "change"]), label="line mutation")
    if kind == "drop":
        del lines[at]
    elif kind == "repeat":
        lines.insert(at, lines[at])
    elif lines[at]:
        lines[at] = mutate_line(data, lines[at])
    return "\n".join(lines).encode("utf-8", "surrogateescape")


# Fields of other values, CSV's own characters, and bytes that are no UTF-8 (as surrogate escapes).
CSV_FIELDS = st.sampled_from(["", "nan", "inf", "-inf", "1e999", "9" * 400, "-1", "true", "x", '"', '""', ",", "\n",
                              "\r", "\x00", "k", "1.5", "\udcff\udcfe", "caf\udce9"]) | st.text(max_size=10)


def csv_line_mutation(data, line):
    fields = line.split(",")
    at = data.draw(st.integers(0, len(fields) - 1), label="field")
    fields[at] = data.draw(CSV_FIELDS, label="field text")
    return ",".join(fields)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A finished sweep's files, as bytes by file name."""
    directory = tmp_path_factory.mktemp("pristine")
    with kscope.testing.simulated_backend() as sim:
        sweep(sim, directory)()
    return {path.name.removeprefix("f-0-"): path.read_bytes() for path in directory.iterdir()
            if path.name.startswith("f-0-")}


def sweep(sim, directory, **options):
    @kscope.analyze.kernel(configs=CONFIGS, runs=2, verbosity=0, output_prefix=f"{directory}/", **options)
    def f(n):
        with kscope.annotate("k"):
            sim.launch("kern", 10.0 * n)

    return f


@pytest.fixture
def watched():
    """A hang ends the run with a traceback; memory may grow by at most MEMORY_GROWTH_LIMIT."""
    faulthandler.dump_traceback_later(HANG_S, exit=True)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.monotonic()
    yield
    faulthandler.cancel_dump_traceback_later()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    print(f"fuzz budget: {time.monotonic() - started:.1f} s, peak memory +{grown >> 20} MiB")
    assert grown < MEMORY_GROWTH_LIMIT


def resumed_with(pristine, name, content):
    """Resumes the pristine sweep with `name` replaced by `content`: its results, or the refusal."""
    with tempfile.TemporaryDirectory() as directory:
        for file, raw in pristine.items():
            Path(directory, f"f-0-{file}").write_bytes(content if file == name else raw)
        with kscope.testing.simulated_backend() as sim, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what resuming says of what it dropped
            try:
                return len(sweep(sim, directory, resume=True)().to_dataframe()), f"{directory}/f-0-"
            except (ConfigError, OSError) as e:
                message = str(e)
                assert f"{directory}/f-0-" in message, message
                return message, f"{directory}/f-0-"


def mutated(data, raw, line_mutator=None):
    kinds = ["json", "bytes"] if line_mutator is None else ["lines", "bytes"]
    if data.draw(st.sampled_from(kinds), label="mutation") == "bytes":
        return byte_mutation(data, raw)
    if line_mutator is None:
        return json_mutation(data, raw.decode()).encode("utf-8", "surrogatepass")
    return line_mutation(data, raw, line_mutator)


@fuzz("results")
@given(data=st.data())
def test_the_results_file_reader(pristine, watched, data):
    content = mutated(data, pristine["results.json"])
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory, "results.json")
        path.write_bytes(content)
        try:
            results = kscope.load(path)
        except (ConfigError, OSError) as e:
            assert str(path) in str(e), str(e)
            return
        results.to_dataframe()
        results.raw_dataframe()


@fuzz("manifest")
@given(data=st.data())
def test_the_manifest_reader(pristine, watched, data):
    outcome, _ = resumed_with(pristine, "manifest.json", mutated(data, pristine["manifest.json"]))
    assert outcome == len(CONFIGS) or isinstance(outcome, str)


@fuzz("progress")
@given(data=st.data())
def test_the_progress_reader(pristine, watched, data):
    """Whatever progress.jsonl holds, the configs it does not vouch for are measured again."""
    outcome, _ = resumed_with(pristine, "progress.jsonl",
                              mutated(data, pristine["progress.jsonl"], lambda d, line: json_mutation(d, line, None)))
    assert outcome == len(CONFIGS), outcome


@fuzz("samples")
@given(data=st.data())
def test_the_samples_reader(pristine, watched, data):
    """A samples.csv of other columns is refused naming it; otherwise what it does not hold intact is
    measured again (a record changed into another valid one, another annotation say, is taken)."""
    outcome, prefix = resumed_with(pristine, "samples.csv", mutated(data, pristine["samples.csv"], csv_line_mutation))
    assert isinstance(outcome, int) or f"cannot resume from '{prefix}samples.csv'" in outcome, outcome
