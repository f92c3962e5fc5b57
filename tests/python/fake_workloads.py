"""Stands in for examples/python/workloads.py on a machine without a GPU: "tensors" are their
sizes, and each operation launches one simulated kernel whose duration grows with the work."""

import kscope.testing


class Dtype:
    def __init__(self, name, bytes_per_element):
        self.name, self.itemsize = name, bytes_per_element

    def __repr__(self):
        return f"fake.{self.name}"


DTYPES = (Dtype("float16", 2), Dtype("bfloat16", 2))
DEVICE = "cpu"  # the simulated backend reads tensors on the host


def _launch(name, duration_ns):
    kscope.testing.active().launch(name, duration_ns)


def vectors(n):
    return n, n


def add(x, y):
    _launch("vectorized_elementwise_kernel", 2000.0 + 0.01 * x)


def split_add(x, y, pieces):
    # Each piece a kernel of its share of the work, 3 us after the one before (a launch's gap).
    for k in range(pieces):
        kscope.testing.active().launch("vectorized_elementwise_kernel", 2000.0 + 0.01 * x / pieces,
                                       gap_ns=3000.0 if k else 0.0)


def matrices(n, dtype=DTYPES[0]):
    return n, n


def matmul(a, b):
    _launch("sm90_xmma_gemm_f16f16", 5000.0 + 2.0 * a**3 / 500e3)  # about 500 TFLOP/s
