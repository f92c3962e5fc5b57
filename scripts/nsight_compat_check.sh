#!/usr/bin/env bash
# Issue 30's GPU check: Nsight Python code behaves the same on kscope. On a GPU machine, with a
# build (tests/gpu/range_compare, kscope_gpu_tests) and a pip-installed kscope whose Python has torch:
#   a. range replay: the counters backend's replay_mode range against ncu --replay-mode range on the
#      same two-kernel region (gpu__time_duration.sum, dram__bytes_read.sum), and the units the
#      counters backend reports against ncu's for one metric of every unit of the chip's metrics;
#   b. the cupti backend's range span against the region's kernels' own clocks (a gtest);
#   c. the GPU tests of tests/python/test_nsight_compat.py (and its CPU ones on the installed package);
#   d. Nsight Python's examples 00-11 (scripts/nsight_examples.sh), without and with KSCOPE_TOOL=ncu.
# Prints each part's table, then one line per part with PASS/FAIL/SKIP; exit 0 when none failed.
#
#   bash scripts/nsight_compat_check.sh BUILD_DIR PY_SITE [SHORT]     (scripts/gpu_check.sh runs it)
#
# PY_SITE: a directory holding the installed kscope package (pip --target), or "" for the python3
# on PATH. SHORT: a file that gets the tables without the per-example details (for a summary).
# About 4 minutes on an H200. Never changes clocks: ncu runs with --clock-control none.
# KSCOPE_NSIGHT_PARTS="a b" runs only those parts (default: all four).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${1:?usage: nsight_compat_check.sh BUILD_DIR PY_SITE}
PY_SITE=${2-}
SHORT=${3:-/dev/null}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
REPS=5
# Range replay, counters vs ncu: the DRAM bytes of each region within 5% (the run-to-run variation
# of a DRAM-bound region with a cold L2, as every kscope/ncu comparison here). The duration: both
# ranges hold the region's two kernels (ncu's kernel replay times them), kscope's within 5% plus
# 20 us: the range opens before the first launch call, so it holds one launch latency (6.3 us
# measured on an H200, bench/kscope_overhead --call-breakdown) and the gap between the kernels;
# ncu's range holds at least the kernels, and what more it holds (the GPU waiting on ncu's own
# replay: 188-267 us on an H200, not proportional to the region) is printed, not compared.
TOLERANCE_PCT=5
LAUNCH_NS=20000
export PYTHONPATH=${PY_SITE}${PYTHONPATH:+:$PYTHONPATH}

RESULTS=()
PARTS=" ${KSCOPE_NSIGHT_PARTS:-a b c d} "
wants() { [[ $PARTS == *" $1 "* ]]; }
result() { RESULTS+=("$(printf '%-34s %-5s %s' "$1" "$2" "$3")"); }
ncu_run() { HOME="$WORK" "$NCU" --clock-control none --cache-control all --log-file "$WORK/ncu.log" "$@"; }

# --- a. range replay, counters vs ncu ------------------------------------------------------------
wants a && echo "== a. replay_mode='range': counters vs ncu --replay-mode range, region 'pair' (512 MiB copy + 256 MiB read)"
if ! wants a; then
  :
elif [[ ! -x $NCU ]]; then
  result "a. counters range vs ncu" SKIP "no ncu ($NCU)"
elif [[ ! -x $BUILD/tests/gpu/range_compare ]]; then
  result "a. counters range vs ncu" FAIL "$BUILD/tests/gpu/range_compare was not built"
else
  # The region once and twice (RANGE_COMPARE_PAIRS): the difference is its work without the
  # range's fixed part, which holds how each tool submits the region (ncu's replay of the captured
  # calls, kscope's live launches) and is reported, not compared.
  measure_rc=0 ncu_rc=0
  for pairs in 1 2; do
    RANGE_COMPARE_PAIRS=$pairs "$BUILD/tests/gpu/range_compare" --measure > "$WORK/kscope$pairs.txt" 2> "$WORK/kscope.err" ||
      measure_rc=$?
    RANGE_COMPARE_PAIRS=$pairs ncu_run --replay-mode range --nvtx --nvtx-include "pair/" \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum -f -o "$WORK/range$pairs" \
      "$BUILD/tests/gpu/range_compare" --plain "$REPS" > "$WORK/ncu_run.txt" 2>&1 || ncu_rc=$?
    "$NCU" -i "$WORK/range$pairs.ncu-rep" --csv --page raw --print-units base > "$WORK/range$pairs.csv" 2>> "$WORK/ncu_run.txt"
    cat "$WORK/kscope$pairs.txt" "$WORK/kscope.err"
  done
  # The same one-pair region under ncu's kernel replay: its two kernels' own durations.
  ncu_run --metrics gpu__time_duration.sum -f -o "$WORK/kernels" "$BUILD/tests/gpu/range_compare" --plain "$REPS" \
    > "$WORK/ncu_kernels.txt" 2>&1 || ncu_rc=$?
  "$NCU" -i "$WORK/kernels.ncu-rep" --csv --page raw --print-units base > "$WORK/kernels.csv" 2>> "$WORK/ncu_kernels.txt"
  echo "kscope rc=$measure_rc, ncu rc=$ncu_rc"
  python3 - "$WORK" "$REPS" "$TOLERANCE_PCT" "$LAUNCH_NS" <<'EOF' | tee "$WORK/range_table.txt"
import csv, statistics, sys
work, reps, tolerance, launch = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
scale = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
         "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
DURATION, BYTES = "gpu__time_duration.sum", "dram__bytes_read.sum"


def kscope_values(pairs):
    out = {}
    for line in open(f"{work}/kscope{pairs}.txt"):
        if line.startswith("KSCOPE "):
            _, metric, value, unit, kernel = line.split(maxsplit=4)
            out[metric] = (float(value), unit, kernel.strip())
    return out


def ncu_values(pairs):
    rows = list(csv.reader(line for line in open(f"{work}/range{pairs}.csv") if line.startswith('"')))
    if len(rows) < 3:
        return {}, 0
    header, units, data = rows[0], rows[1], rows[2:]
    return {m: statistics.median(float(r[header.index(m)].replace(",", "")) * scale[units[header.index(m)]]
                                 for r in data)
            for m in (DURATION, BYTES) if m in header}, len(data)


ours = {p: kscope_values(p) for p in (1, 2)}
theirs = {p: ncu_values(p) for p in (1, 2)}
if any(len(ours[p]) != 2 or len(theirs[p][0]) != 2 for p in (1, 2)):
    print(f"FAIL: missing values: kscope {ours}, ncu {theirs} (see the logs above)")
    sys.exit(1)
failed = any(theirs[p][1] != reps for p in (1, 2))
print(f"ncu results per region size: {[theirs[p][1] for p in (1, 2)]} (expected {reps} each)")
print(f"{'metric':<24} {'pairs':>5} {'kscope':>14} {'unit':>5} {'Kernel':>7} {'ncu median':>14} {'diff %':>8}")
for p in (1, 2):
    for metric in (DURATION, BYTES):
        value, unit, kernel = ours[p][metric]
        other = theirs[p][0][metric]
        diff = 100 * (value - other) / other
        ok = kernel == "range" and unit == ("ns" if metric == DURATION else "byte")
        if metric == BYTES:
            ok &= abs(diff) <= tolerance
        failed |= not ok
        verdict = "" if metric == DURATION and ok else "ok" if ok else "FAIL"
        print(f"{metric:<24} {p:>5} {value:>14.1f} {unit:>5} {kernel:>7} {other:>14.1f} {diff:>+8.2f} {verdict}")
# The work both ranges hold: the pair's two kernels as ncu's kernel replay times them (median of
# each kernel over the repetitions, summed).
rows = list(csv.reader(line for line in open(f"{work}/kernels.csv") if line.startswith('"')))
header, units, data = rows[0], rows[1], rows[2:]
name_column, value_column = header.index("Kernel Name"), header.index(DURATION)
per_kernel = {}
for r in data:  # the region's kernels (the program also fills its buffers once, outside the range)
    if r[name_column].startswith(("copy_kernel", "read_kernel", "kscope_test::copy_kernel", "kscope_test::read_kernel")):
        per_kernel.setdefault(r[name_column], []).append(float(r[value_column].replace(",", "")) * scale[units[value_column]])
kernels = sum(statistics.median(v) for v in per_kernel.values())
print(f"the pair's kernels under ncu's kernel replay: {len(per_kernel)} kernels, "
      f"{', '.join(f'{k.split(chr(40))[0]} {statistics.median(v) / 1e3:.1f} us' for k, v in per_kernel.items())}: "
      f"{kernels / 1e3:.1f} us")
k1, k2 = ours[1][DURATION][0], ours[2][DURATION][0]
n1, n2 = theirs[1][0][DURATION], theirs[2][0][DURATION]
# kscope's live range: the kernels, the first one's launch latency (the range opens before the
# launch call) and the gap between the two.
ok = len(per_kernel) == 2 and (1 - tolerance / 100) * kernels <= k1 <= (1 + tolerance / 100) * kernels + launch
failed |= not ok
print(f"kscope's range {k1 / 1e3:.1f} us against the kernels' {kernels / 1e3:.1f} us: {100 * (k1 / kernels - 1):+.2f}% "
      f"(within -{tolerance:g}%..+{tolerance:g}% + {launch / 1e3:g} us) {'ok' if ok else 'FAIL'}")
# ncu's replayed range: the kernels, and the GPU's waits for ncu's replay of the captured calls.
ok = n1 >= (1 - tolerance / 100) * kernels
failed |= not ok
print(f"ncu's range {n1 / 1e3:.1f} us: the kernels and {(n1 - kernels) / 1e3:.1f} us more "
      f"({'ok' if ok else 'FAIL'}: at least the kernels); two pairs: kscope {k2 / 1e3:.1f} us "
      f"({k2 / k1:.2f}x one), ncu {n2 / 1e3:.1f} us ({n2 / n1:.2f}x one)")
print("range replay:", "FAIL" if failed else "PASS")
sys.exit(1 if failed else 0)
EOF
  if [[ ${PIPESTATUS[0]} -eq 0 ]]; then
    result "a. counters range vs ncu" PASS "$(grep -m1 "^kscope's range" "$WORK/range_table.txt" | cut -c1-110)"
  else
    result "a. counters range vs ncu" FAIL "see the table above; ncu log: $(tail -2 "$WORK/ncu_run.txt" | tr '\n' ' ')"
  fi

  echo
  echo "== a. units: the counters backend's unit against ncu's (--print-units base), one metric per unit"
  python3 - "$WORK/units.txt" <<'EOF'
# One full metric name per distinct unit kscope reports for this GPU's metrics (counters: .sum and
# .sum.per_second, throughputs: .avg.pct_of_peak_sustained_elapsed, ratios: .ratio), leaving out
# device-level links (NVLink, PCIe, C2C) that a single GPU may not count, and group-prefixed names.
import sys
import kscope
suffix = {"counter": [".sum", ".sum.per_second"], "throughput": [".avg.pct_of_peak_sustained_elapsed"],
          "ratio": [".ratio", ".pct"]}
skip_hw = ("nvl", "pcie", "ctc", "c2c")
chosen = {}
for m in kscope.list_metrics(""):
    if "." in m["name"] or m["hw_unit"].startswith(skip_hw):
        continue
    for s in suffix[m["type"]]:
        if s not in m["suffixes"] and not any(x.startswith(s) for x in m["suffixes"]):
            continue
        try:
            unit = kscope.describe_metric(m["name"] + s, "")["unit"]
        except kscope.ProfilerException:
            continue
        chosen.setdefault((unit, s), m["name"] + s)
with open(sys.argv[1], "w") as out:
    for (unit, _), name in sorted(chosen.items()):
        out.write(f"{name} {unit}\n")
print(f"{len(chosen)} metrics, {len({u for u, _ in chosen})} distinct units")
EOF
  units_rc=$?
  mismatches=0 compared=0
  if [[ $units_rc -eq 0 ]]; then
    split -l 40 "$WORK/units.txt" "$WORK/units_chunk_"
    for chunk in "$WORK"/units_chunk_*; do
      metrics=$(awk '{print $1}' "$chunk" | paste -sd, -)
      # One small profiled kernel (the read, which writes nothing to restore between passes).
      ncu_run --metrics "$metrics" --kernel-name regex:read_kernel --launch-count 1 -f -o "$WORK/units" \
        "$BUILD/tests/gpu/range_compare" --plain 1 > "$WORK/units_run.txt" 2>&1
      "$NCU" -i "$WORK/units.ncu-rep" --csv --page raw --print-units base > "$WORK/units.csv" 2>> "$WORK/units_run.txt"
      python3 - "$chunk" "$WORK/units.csv" <<'EOF' | tee -a "$WORK/units_table.txt"
import csv, sys
ours = dict(line.rstrip("\n").partition(" ")[::2] for line in open(sys.argv[1]))  # a unit may be empty
rows = list(csv.reader(line for line in open(sys.argv[2]) if line.startswith('"')))
header, units = (rows[0], rows[1]) if len(rows) >= 2 else ([], [])
for name, unit in ours.items():
    unit = unit.strip()
    theirs = units[header.index(name)] if name in header else None
    verdict = "n/a (not in ncu's export)" if theirs is None else "ok" if theirs == unit else "DIFF"
    print(f"UNIT {name:<72} kscope {unit!r:<26} ncu {theirs!r:<26} {verdict}")
EOF
    done
    compared=$(grep -c ' ok$\| DIFF$' "$WORK/units_table.txt")
    mismatches=$(grep -c ' DIFF$' "$WORK/units_table.txt")
    { echo "units: $compared compared, $mismatches differ"; grep ' DIFF$' "$WORK/units_table.txt"; } |
      tee "$WORK/units_summary.txt"
  fi
  if [[ $units_rc -ne 0 || $compared -eq 0 ]]; then
    result "a. counters units vs ncu" FAIL "no comparison (rc=$units_rc); ncu log: $(tail -2 "$WORK/units_run.txt" 2>/dev/null | tr '\n' ' ')"
  elif [[ $mismatches -eq 0 ]]; then
    result "a. counters units vs ncu" PASS "$compared metrics, every unit as ncu prints it"
  else
    result "a. counters units vs ncu" FAIL "$mismatches of $compared units differ (UNIT lines above)"
  fi
fi

# --- b. the cupti span against the kernels' own clocks -------------------------------------------
if wants b; then
echo
echo "== b. replay_mode='range' on cupti: the span against the region's kernels' own %globaltimer readings"
"$BUILD/tests/gpu/kscope_gpu_tests" --gtest_filter='CuptiTiming.RangeReplayIsTheSpanOfTheRegionsKernels' \
  > "$WORK/span.txt" 2>&1
span_rc=$?
grep -E '\[result\]|Failure|Expected|Which is|actual|OK \]|FAILED|SKIPPED' "$WORK/span.txt"
if [[ $span_rc -eq 0 ]] && grep -q '\[  PASSED  \] 1 test' "$WORK/span.txt"; then
  result "b. cupti range span" PASS "$(grep -m1 '\[result\]' "$WORK/span.txt" | sed 's/.*\[result\] cupti range replay, //' | cut -c1-110)"
elif grep -q '\[  SKIPPED \] 1 test' "$WORK/span.txt"; then
  result "b. cupti range span" SKIP "$(grep -m1 -o 'no CUDA device.*' "$WORK/span.txt" || echo 'skipped: no GPU')"
else
  result "b. cupti range span" FAIL "rc=$span_rc (see above)"
fi
fi

# --- c. the Nsight-style tests, on the GPU -------------------------------------------------------
if wants c; then
echo
echo "== c. tests/python/test_nsight_compat.py (GPU tests and the CPU ones, on the installed package)"
(cd "$ROOT" && timeout 300 python3 -m pytest tests/python/test_nsight_compat.py -q -rs -p no:cacheprovider) \
  > "$WORK/pytest.txt" 2>&1
pytest_rc=$?
tail -25 "$WORK/pytest.txt"
gpu_skipped=$(grep -oE 'SKIPPED \[[0-9]+\].*GPU test' "$WORK/pytest.txt" | grep -oE '\[[0-9]+\]' | tr -d '[]' |
              awk '{n += $1} END {print n + 0}')
line=$(grep -E '[0-9]+ (passed|failed)' "$WORK/pytest.txt" | tail -1)
if [[ $pytest_rc -eq 0 && $gpu_skipped -eq 0 ]]; then
  result "c. pytest nsight compat" PASS "$line"
else
  skipped=""
  [[ $gpu_skipped -gt 0 ]] && skipped=" ($gpu_skipped GPU tests skipped: no GPU or torch)"
  result "c. pytest nsight compat" FAIL "rc=$pytest_rc: $line$skipped"
fi
fi

# --- d. Nsight Python's examples, without and with KSCOPE_TOOL=ncu ------------------------------
for tool in "" ncu; do
  wants d || break
  label="d. examples 00-11${tool:+ KSCOPE_TOOL=$tool}"
  echo
  echo "== $label"
  if [[ ! -d $ROOT/.carry/nsight-python/examples ]]; then
    result "$label" SKIP "no .carry/nsight-python/examples (scripts/prepare_carry.sh with a clone of nsight-python)"
    continue
  fi
  KSCOPE_TOOL=$tool PYTHON=python3 EXAMPLES="00 01 02 03 04 05 06 07 08 09 10 11" OUT_DIR="$WORK/examples${tool:+_$tool}" \
    TIMEOUT=300 bash "$ROOT/scripts/nsight_examples.sh" > "$WORK/examples.txt" 2>&1
  examples_rc=$?
  cat "$WORK/examples.txt"
  { echo "examples${tool:+ with KSCOPE_TOOL=$tool}:"; sed -n '/^example  /,$p' "$WORK/examples.txt"; } \
    > "$WORK/examples_table_${tool:-default}.txt"
  summary=$(tail -1 "$WORK/examples.txt")
  [[ $examples_rc -eq 0 ]] && result "$label" PASS "${summary%%;*}" || result "$label" FAIL "${summary%%;*}"
done

echo
echo "==================== issue 30: Nsight Python compatibility ===================="
printf '%s\n' "${RESULTS[@]}"
{  # the tables, without the per-example details and the units that agree
  sed -n '/^metric /,/^range replay:/p' "$WORK/range_table.txt" 2>/dev/null
  cat "$WORK/units_summary.txt" 2>/dev/null
  grep -h '\[result\]' "$WORK/span.txt" 2>/dev/null | sed 's/^.*\[result\] //'
  cat "$WORK"/examples_table_*.txt 2>/dev/null
  printf '%s\n' "${RESULTS[@]}"
} > "$SHORT"
printf '%s\n' "${RESULTS[@]}" | grep -q ' FAIL ' && exit 1
exit 0
