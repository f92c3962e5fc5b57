"""output_csv: every call writes {prefix}profiled_data-{function}-{n}.csv (the raw per-run
samples) and {prefix}processed_data-{function}-{n}.csv (the summary), n counting the calls.

Run: python examples/python/output_csv.py [directory]
"""

import os
import sys

import pandas as pd

import kscope
from kscope.testing import workloads


def make(prefix):
    # overwrite=True: running the example again replaces its files; without it the earlier run's
    # files are moved aside to numbered backups (...csv.~1~), and resume=True would return them.
    @kscope.analyze.kernel(configs=[(1 << 16,), (1 << 20,)], runs=5, output_prefix=prefix, output_csv=True,
                           overwrite=True)
    def vector_add(n):
        x, y = workloads.vectors(n)
        with kscope.annotate("add"):
            workloads.add(x, y)

    return vector_add


def main(directory="kscope_csv"):
    prefix = os.path.join(directory, "example_")
    make(prefix)()
    raw = pd.read_csv(f"{prefix}profiled_data-vector_add-0.csv")
    summary = pd.read_csv(f"{prefix}processed_data-vector_add-0.csv")
    print(f"{len(raw)} samples, {len(summary)} summary rows in {directory}/")
    return raw, summary


if __name__ == "__main__":
    main(*sys.argv[1:])
