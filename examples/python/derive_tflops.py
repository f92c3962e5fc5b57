"""derive_metric: TFLOP/s of a matmul from each run's duration, over sizes and dtypes.

derive_metric receives (*metric_values, *config_values) for every run, before aggregation, and
returns a value, (value, unit), or a dict of them. The dtype column keeps the torch dtypes.

Run: python examples/python/derive_tflops.py
"""

import itertools

import kscope
from kscope.testing import workloads


def throughput(duration_ns, n, dtype):
    flop = 2 * n**3
    return {"tflops": (flop / duration_ns / 1e3, "TFLOP/s"), "flop": (flop, "FLOP")}


@kscope.analyze.kernel(configs=list(itertools.product([1024, 2048, 4096], workloads.DTYPES)), runs=10,
                       derive_metric=throughput)
def matmul(n, dtype):
    a, b = workloads.matrices(n, dtype)
    with kscope.annotate("matmul"):
        workloads.matmul(a, b)


def main():
    df = matmul().to_dataframe()
    tflops = df[df["Metric"] == "tflops"]
    print(tflops[["n", "dtype", "AvgValue", "Unit", "RelativeStdDevPct", "Kernel"]])
    return df


if __name__ == "__main__":
    main()
