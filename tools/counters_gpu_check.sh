#!/usr/bin/env bash
# The counter backend against Nsight Compute on the same kernels, on a GPU machine:
#   1. gpu__time_duration.sum, dram__bytes_read.sum and sm__throughput for a copy and an FMA kernel,
#      kscope (Backend::counters, cache_control all) vs ncu --clock-control none --cache-control all;
#      agreement within 5% passes.
#   2. wall time per profiled kernel for 1, 4 (the Speed-of-Light preset), 5 and 20 metrics, kscope
#      vs ncu, each the slope between two kernel counts (kscope: 200 and 400 runs of one profile()
#      call; ncu: 5 and 25 launches), so start-up is not counted; the fixed costs beside it, the
#      first result of a process, and the issue-14 targets (met or missed: printed, not failed).
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

"$bin" --sets > "$work/sets.txt"
"$bin" --overhead > "$work/overhead.txt"
while read -r _ n set; do
  for launches in 5 25; do
    t0=$EPOCHREALTIME
    ncu_profile --metrics "$set" -o "$work/overhead" "$bin" --plain-overhead "$launches"
    echo "NCU $n $launches $t0 $EPOCHREALTIME" >> "$work/ncu_overhead.txt"
  done
done < "$work/sets.txt"

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
ours, first_ms = {}, None
for line in open(f"{work}/overhead.txt"):
    fields = line.split()
    if fields[0] == "FIRST":
        first_ms = float(fields[1])
        continue
    _, n, passes, per_kernel, per_profile = fields
    ours[n] = (int(passes), float(per_kernel), float(per_profile))
wall = {}
for line in open(f"{work}/ncu_overhead.txt"):
    _, n, launches, t0, t1 = line.split()
    wall.setdefault(n, {})[int(launches)] = float(t1) - float(t0)
print(f"\nwall time per profiled kernel (16 MiB copy; plain launch + sync: {ours['0'][1]:.3f} ms). kscope: the slope")
print("from 200 to 400 runs of one profile() call (pass-major batches; both fill the 512-range image, so the first start cancels); ncu: from 5 to 25 kernels in one process.")
print("'fixed' is the rest (kscope: a later profile() call's setup and teardown; ncu: its process start, the")
print("program's start and report writing)")
print(f"{'metrics':>7} {'passes':>6} {'kscope ms':>10} {'ncu ms':>10} {'ncu/kscope':>10} {'kscope fixed ms':>16} {'ncu fixed ms':>13}")
for n, (passes, ms, fixed) in ours.items():
    if n == "0": continue
    w = wall[n]
    theirs = 1e3 * (w[25] - w[5]) / 20
    theirs_fixed = 1e3 * w[5] - 5 * theirs
    print(f"{n:>7} {passes:>6} {ms:>10.3f} {theirs:>10.3f} {theirs / ms:>10.2f} {fixed:>16.1f} {theirs_fixed:>13.1f}")
print(f"first result of a process (kscope's first profile() call, 1 metric, 1 run): {first_ms:.1f} ms")
# Issue 14's targets: reported, not failed (timings are the machine's, not kscope's correctness).
# The Speed-of-Light sets: the 5 metrics with sm__ and dram__throughput (8 passes) and sol_metrics().
targets = [(f"{n} metrics ({ours[n][0]} passes) <= 3 ms per kernel", ours[n][1], 3.0) for n in ("5", "4")]
targets += [("1 metric <= 0.2 ms per kernel", ours["1"][1], 0.2),
            ("first result <= 150 ms (else see FIRST in the counter stages: CUPTI's own first start)", first_ms, 150.0)]
for name, value, limit in targets:
    print(f"target {name}: {value:.3f}: {'met' if value <= limit else 'MISSED'}")
print("\ncounters vs ncu:", "all within 5%" if not failed else f"{failed} comparison(s) off by more than 5%")
sys.exit(1 if failed else 0)
PY
