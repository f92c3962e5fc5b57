"""kscope's counter backend against Nsight Compute on a torch matmul (run by scripts/gpu_check.sh).

For fp16 matmuls of 4096 and 8192, gpu__time_duration.sum, dram__bytes_read.sum and sm__throughput
measured in this process by backend='counters' (cache_control all), then by
`ncu --clock-control none --cache-control all` on this same script in --plain mode, where each
matmul runs inside an NVTX range "kscope_matmul" that ncu's --nvtx-include selects. Medians of
REPS kernels each; agreement within 5% passes. Exit status 0 pass, 1 fail, 2 ncu missing.
"""

import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import torch

SIZES = (4096, 8192)
REPS = 5
TOLERANCE_PCT = 5.0
METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"]
NS_PER = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}
BYTES_PER = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}


def operands(n):
    torch.manual_seed(0)
    return (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))


def plain():
    """The kernels ncu measures: REPS matmuls per size, each in the range ncu selects."""
    for n in SIZES:
        a, b = operands(n)
        a @ b  # cuBLAS picks and loads its kernel outside the profiled ranges
        torch.cuda.synchronize()
        for _ in range(REPS):
            torch.cuda.nvtx.range_push("kscope_matmul")
            a @ b
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()


def with_kscope():
    import kscope

    @kscope.analyze.kernel(configs=list(SIZES), runs=REPS, metrics=METRICS, backend="counters",
                           cache_control="all", verbosity=kscope.VerbosityLevel.SILENT)
    def matmul(n):
        a, b = operands(n)
        with kscope.annotate("matmul"):
            a @ b

    df = matmul().to_dataframe()
    return {(int(r["n"]), r["Metric"]): (float(r["Median"]), r["Kernel"]) for _, r in df.iterrows()}


def with_ncu(ncu, work):
    report = os.path.join(work, "matmul")
    profile = [ncu, "--clock-control", "none", "--cache-control", "all", "--nvtx", "--nvtx-include",
               "kscope_matmul/", "--metrics", ",".join(METRICS), "--log-file", os.path.join(work, "ncu.log"),
               "-f", "-o", report, sys.executable, os.path.abspath(__file__), "--plain"]
    subprocess.run(profile, check=True, env={**os.environ, "HOME": work})
    exported = subprocess.run([ncu, "--import", report + ".ncu-rep", "--csv", "--page", "raw", "--print-units",
                               "base"], check=True, capture_output=True, text=True).stdout
    rows = list(csv.reader(line for line in exported.splitlines() if line.startswith('"')))
    header, units, data = rows[0], rows[1], rows[2:]
    if len(data) != REPS * len(SIZES):
        raise SystemExit(f"FAIL: ncu profiled {len(data)} kernels, expected {REPS} per size (one kernel per matmul); "
                         f"see {work}/ncu.log")
    values = {}
    for i, row in enumerate(data):
        n = SIZES[i // REPS]
        for m in METRICS:
            c = header.index(m)
            scale = NS_PER.get(units[c], BYTES_PER.get(units[c], 1))
            values.setdefault((n, m), []).append(float(row[c].replace(",", "")) * scale)
        values.setdefault((n, "kernel"), row[header.index("Kernel Name")])
    return values


def main():
    if "--plain" in sys.argv:
        plain()
        return 0
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    if not os.access(ncu, os.X_OK):
        print("SKIP: ncu not found")
        return 2
    ours = with_kscope()
    with tempfile.TemporaryDirectory() as work:
        theirs = with_ncu(ncu, work)
    failed = 0
    print(f"{'matmul f16':<11} {'metric':<50} {'kscope':>13} {'ncu':>13} {'diff':>8}")
    for n in SIZES:
        for m in METRICS:
            value, kernel = ours[(n, m)]
            ref = statistics.median(theirs[(n, m)])
            diff = 100 * (value - ref) / ref
            ok = abs(diff) <= TOLERANCE_PCT
            failed += not ok
            print(f"{n:<11} {m:<50} {value:>13.6g} {ref:>13.6g} {diff:>+7.2f}% {'ok' if ok else 'FAIL'}")
        print(f"{'':<11} kernel: kscope {kernel} | ncu {theirs[(n, 'kernel')]}")
    print("torch matmul counters vs ncu:", "all within 5%" if not failed else f"{failed} off by more than 5%")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
