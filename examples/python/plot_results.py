"""@kscope.analyze.plot: one bar group per config, a panel per dtype, the geomean at the end.

Run: python examples/python/plot_results.py   (writes plot_results.png)
"""

import itertools

import kscope
from kscope.testing import workloads


def tflops(duration_ns, n, dtype):
    return 2 * n**3 / duration_ns / 1e3, "TFLOP/s"


@kscope.analyze.plot("plot_results.png", metric="tflops", plot_type="bar", col_panels=["dtype"],
                     show_aggregate="geomean", annotate_points=True, title="matmul throughput")
@kscope.analyze.kernel(configs=list(itertools.product([1024, 2048, 4096], workloads.DTYPES)), runs=5,
                       derive_metric=tflops)
def matmul(n, dtype):
    a, b = workloads.matrices(n, dtype)
    with kscope.annotate("matmul"):
        workloads.matmul(a, b)


def main():
    results = matmul()  # profiles, then draws and writes plot_results.png
    print(results.to_dataframe().query("Metric == 'tflops'")[["n", "dtype", "AvgValue", "Geomean"]])
    return results


if __name__ == "__main__":
    main()
