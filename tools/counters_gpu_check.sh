#!/usr/bin/env bash
# The counter backend against Nsight Compute on the same kernels, on a GPU machine:
# gpu__time_duration.sum, dram__bytes_read.sum and sm__throughput for a copy and an FMA kernel,
# kscope (Backend::counters, cache_control all) vs ncu --clock-control none --cache-control all;
# agreement within 5% passes. What each costs: bench/cost_check.sh.
# Usage: tools/counters_gpu_check.sh [BUILD_DIR]   (default: $KSCOPE_BUILD_DIR or build)
# Exit status: 0 all within tolerance, 1 a comparison failed, 2 no GPU or no ncu.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${KSCOPE_BUILD_DIR:-build}}
bin="$build/bench/counters_overhead"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
[ -x "$bin" ] || { echo "counters check: $bin is missing: build first"; exit 2; }
[ -x "$ncu" ] || { echo "counters check: ncu not found: skipped"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# ncu reads and writes its config under $HOME; a fresh one works for any user.
export HOME="$work"
# Never change the GPU's clocks: every ncu call passes --clock-control none.
ncu_profile() { "$ncu" --clock-control none --cache-control all --log-file "$work/ncu.log" -f "$@"; }

echo "== counters vs $("$ncu" --version | tail -1)"
"$bin" --compare > "$work/kscope.txt"
metrics=$(awk '{print $3}' "$work/kscope.txt" | awk '!seen[$0]++' | paste -sd, -)
reps=3
ncu_profile --metrics "$metrics" -o "$work/compare" "$bin" --plain "$reps"
"$ncu" -i "$work/compare.ncu-rep" --csv --page raw --print-units base --metrics "$metrics" > "$work/ncu.csv"

python3 - "$work" "$reps" <<'PY'
import csv, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
scale = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9,
         "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "%": 1, "": 1}
kscope, labels = {}, []
for line in open(f"{work}/kscope.txt"):
    _, label, metric, value = line.split()[:4]
    kscope[(label, metric)] = float(value)
    if label not in labels: labels.append(label)
rows = list(csv.reader(line for line in open(f"{work}/ncu.csv") if line.startswith('"')))
header, units = rows[0], rows[1]
# The buffers' fill kernels run first under ncu too; the compared kernels follow in label order.
data = [r for r in rows[2:] if "fill_kernel" not in r[header.index("Kernel Name")]]
ncu = {}
for i, row in enumerate(data):  # --plain launches each label `reps` times, in order
    label = labels[i // reps]
    for c, name in enumerate(header):
        if (label, name) in kscope:
            ncu.setdefault((label, name), []).append(float(row[c].replace(",", "")) * scale[units[c]])
failed = 0
print(f"{'kernel':<12} {'metric':<52} {'kscope':>14} {'ncu':>14} {'diff':>8}")
for (label, metric), value in kscope.items():
    theirs = statistics.median(ncu[(label, metric)])
    diff = 100 * (value - theirs) / theirs if theirs else float("nan")
    # A kernel that reads almost nothing (the FMA kernel's few KB) has no meaningful relative error:
    # byte counts within 64 KiB of each other agree.
    near_zero = "bytes" in metric and abs(value - theirs) < 65536
    ok = abs(diff) <= 5 or near_zero
    failed += not ok
    verdict = "ok (within 64 KiB)" if near_zero and abs(diff) > 5 else "ok" if ok else "FAIL (> 5%)"
    print(f"{label:<12} {metric:<52} {value:>14.6g} {theirs:>14.6g} {diff:>+7.2f}% {verdict}")
print("counters vs ncu:", "all within 5%" if not failed else f"{failed} comparison(s) off by more than 5%")
sys.exit(1 if failed else 0)
PY
