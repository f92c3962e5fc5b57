"""A parameter sweep: configs at decoration or at call time, runs, the summary as a DataFrame.

Run: python examples/python/basic_sweep.py
"""

import kscope
from kscope.testing import workloads


def vector_add(n):
    x, y = workloads.vectors(n)  # outside the region: not measured
    with kscope.annotate("add"):
        workloads.add(x, y)


# Configs fixed at decoration time (a bare value per config is fine for one parameter)...
sizes = kscope.analyze.kernel(configs=[1 << 16, 1 << 20, 1 << 24], runs=10)(vector_add)
# ...or given at each call.
any_size = kscope.analyze.kernel(runs=10)(vector_add)


def main():
    df = sizes().to_dataframe()
    print(df[["Annotation", "n", "Metric", "Unit", "AvgValue", "StdDev", "NumRuns", "StableMeasurement", "GPU"]])
    two = any_size(configs=[(1 << 12,), (1 << 14,)]).to_dataframe()
    one = any_size(1 << 18).to_dataframe()  # positional arguments: exactly one config
    print(two[["n", "AvgValue"]], one[["n", "AvgValue"]], sep="\n")
    return df, two, one


if __name__ == "__main__":
    main()
