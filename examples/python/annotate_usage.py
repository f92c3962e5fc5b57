"""kscope.annotate as a context manager and as a decorator, and ignore_failures.

A region marked ignore_failures=True records a run that raises as NaN (left out of NumRuns, with
a warning) instead of stopping the sweep: here the "blocked" implementation rejects sizes that
are not a multiple of its block. Outside a profiled call, annotated code runs as usual.

Run: python examples/python/annotate_usage.py
"""

import kscope
from kscope.testing import workloads

BLOCK = 1 << 12


@kscope.annotate("blocked", ignore_failures=True)
def blocked_add(x, y, n):
    if n % BLOCK:
        raise ValueError(f"blocked_add needs a multiple of {BLOCK} elements, got {n}")
    return workloads.add(x, y)


@kscope.analyze.kernel(configs=[1 << 16, (1 << 16) + 1], runs=5)
def compare(n):
    x, y = workloads.vectors(n)
    with kscope.annotate("plain"):
        workloads.add(x, y)
    blocked_add(x, y, n)


def main():
    df = compare().to_dataframe()
    print(df[["Annotation", "n", "AvgValue", "NumRuns"]])
    x, y = workloads.vectors(BLOCK)
    blocked_add(x, y, BLOCK)  # not profiling: the annotation does nothing
    return df


if __name__ == "__main__":
    main()
