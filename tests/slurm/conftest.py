"""Each Slurm scenario's verdict, seconds and notes, printed as a table at the end of the run (the
closing note of issue 42 quotes it)."""

import time

import pytest

_scenarios = []  # [name, verdict, seconds, notes]


@pytest.fixture
def report(request):
    """report(note) adds a line to this scenario's entry in the final table."""
    entry = [request.node.name.removeprefix("test_"), "not finished", 0.0, []]
    _scenarios.append(entry)
    start = time.monotonic()
    yield entry[3].append
    entry[2] = time.monotonic() - start


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    result = outcome.get_result()
    if result.when == "call":
        for entry in _scenarios:
            if entry[0] == item.name.removeprefix("test_"):
                entry[1] = result.outcome.upper()


def pytest_terminal_summary(terminalreporter):
    if not _scenarios:
        return
    terminalreporter.section("Slurm scenarios")
    for name, verdict, seconds, notes in _scenarios:
        terminalreporter.write_line(f"{verdict:7} {seconds:5.1f} s  {name}")
        for note in notes:
            terminalreporter.write_line(f"{'':16}{note}")
    total = sum(entry[2] for entry in _scenarios)
    terminalreporter.write_line(f"scenarios: {total:.1f} s in all")
