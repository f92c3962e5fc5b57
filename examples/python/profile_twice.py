"""One long-lived interpreter: the same function profiled twice, and another one in between.

Each call is its own session: nothing leaks from one call into the next.

Run: python examples/python/profile_twice.py
"""

import kscope
from kscope.testing import workloads


@kscope.analyze.kernel(configs=[(1 << 20,), (1 << 22,)], runs=10, verbosity=kscope.VerbosityLevel.SILENT)
def vector_add(n):
    x, y = workloads.vectors(n)
    with kscope.annotate("add"):
        workloads.add(x, y)


@kscope.analyze.kernel(configs=[(512,)], runs=10, verbosity="silent")
def matmul(n):
    a, b = workloads.matrices(n)
    with kscope.annotate("matmul"):
        workloads.matmul(a, b)


def main():
    first = vector_add().to_dataframe()
    other = matmul().to_dataframe()
    second = vector_add().to_dataframe()
    for n, a, b in zip(first["n"], first["AvgValue"], second["AvgValue"]):
        print(f"n={n}: {a:.0f} ns, then {b:.0f} ns")
    print(f"matmul 512: {other['AvgValue'].iloc[0]:.0f} ns")
    return first, other, second


if __name__ == "__main__":
    main()
