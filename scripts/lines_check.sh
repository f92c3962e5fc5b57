#!/usr/bin/env bash
# Line sampling on the GPU machine in one call (about 6-8 minutes on a fresh machine): builds what it
# needs (build-debt/, the folder scripts/gpu_quick.sh shares, so a warm machine finds it built), then
#   lines_gpu      the C++ GPU tests of known hot lines (tests/gpu/test_lines.cu), all in one process: the
#                  SASS metrics must count in every profile, not the first only
#   doctor         kscope doctor's pc_sampling check
#   triton         the Triton matmul and fused softmax attribution tests (tests/python/test_lines_gpu.py):
#                  the share of samples on the user's file per kernel (the docs' figure), SASS metrics or not
#   ncu_<kernel>   each test kernel's top-5 lines against ncu --section SourceCounters (within 5 points)
#   overhead       each kernel's GPU time sampled at the default period against unsampled (target <= 2x)
#   wall           the whole call's wall time against ncu's on the same kernel
# Logs in $OUT; the step table last. Needs .carry/ from scripts/prepare_carry.sh. ncu runs with
# --clock-control none; nothing changes clocks, power or modes.
#   bash scripts/lines_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export OUT=${OUT:-$ROOT/lines-check-out}
export KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-540}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu_steps.sh"
BUILD=$ROOT/build-debt
NCU=${KSCOPE_NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
export HOME=${HOME:-/tmp}  # ncu reads its renames file under $HOME (a non-root user without one fails)

gpu_build "$BUILD" "$OUT/build.log" ON kscope_lines_gpu_tests lines_cost _core kscope_cli
case $? in
  0) record build PASS "$BUILD, Release, sm_90" ;;
  1) record build FAIL "configuring failed: $(grep -m1 -E 'Error' "$OUT/build.log")"
     print_steps "Line sampling check (scripts/lines_check.sh)"; exit 1 ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")" ;;
esac
LINES_COST=$BUILD/bench/lines_cost
WALL=()

if ! skipping lines_gpu 120; then
  timeout 240 "$BUILD/tests/gpu/kscope_lines_gpu_tests" > "$OUT/lines_gpu.log" 2>&1
  rc=$?
  line=$(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/lines_gpu.log" | paste -sd' ' -)
  [[ $rc -eq 0 ]] && record lines_gpu PASS "$line" ||
    record lines_gpu FAIL "rc=$rc: $line; $(grep -E '^\[  FAILED  \] Lines' "$OUT/lines_gpu.log" | head -3 | paste -sd';' -); last: $(tail -1 "$OUT/lines_gpu.log")"
fi

if ! skipping doctor 20; then
  timeout 60 "$BUILD/kscope" doctor > "$OUT/doctor.log" 2>&1
  check=$(grep -E 'pc_sampling' "$OUT/doctor.log" | head -1 | sed 's/  */ /g')
  grep -qE '\[ ok \] pc_sampling' "$OUT/doctor.log" && record doctor PASS "$check" ||
    record doctor FAIL "${check:-no pc_sampling check in the report}"
fi

if ! skipping triton 150; then
  PYTHONPATH=$BUILD/python timeout 240 python3 -m pytest tests/python/test_lines_gpu.py -q -rs -s -p no:cacheprovider \
    > "$OUT/triton.log" 2>&1
  rc=$?
  line=$(grep -E '[0-9]+ (passed|failed|skipped)' "$OUT/triton.log" | tail -1)
  # "attribution matmul_kernel: 99.2% of 51234 samples on this file; SASS metrics measured" per kernel
  shares=$(grep -E '^attribution ' "$OUT/triton.log" | sed -E 's/^attribution ([a-z_]+): ([0-9.]+%).*SASS metrics (.*)$/\1 \2 (SASS metrics \3)/' | paste -sd',' -)
  [[ $rc -eq 0 ]] && record triton PASS "$line; on the user's file: ${shares:-?}" ||
    record triton FAIL "rc=$rc: $line; on the user's file: ${shares:-?}; $(grep -m2 -E '^E ' "$OUT/triton.log" | paste -sd';' -)"
fi

for kernel in chase fma barrier; do
  skipping "ncu_$kernel" 60 && continue
  if [[ ! -x $NCU ]]; then record "ncu_$kernel" SKIP "no ncu at $NCU (set KSCOPE_NCU)"; continue; fi
  start=$SECONDS
  timeout 120 "$LINES_COST" lines "$kernel" "$OUT/kscope_$kernel.csv" > "$OUT/kscope_$kernel.log" 2>&1
  kscope_s=$((SECONDS - start))
  start=$SECONDS
  timeout 180 "$NCU" --clock-control none --section SourceCounters -k "regex:$kernel" -c 5 -f \
    -o "$OUT/ncu_$kernel" "$LINES_COST" plain "$kernel" > "$OUT/ncu_$kernel.log" 2>&1
  ncu_s=$((SECONDS - start))
  "$NCU" -i "$OUT/ncu_$kernel.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu_$kernel.csv" 2>> "$OUT/ncu_$kernel.log"
  python3 scripts/lines_ncu_compare.py "$OUT/kscope_$kernel.csv" "$OUT/ncu_$kernel.csv" > "$OUT/compare_$kernel.log" 2>&1
  rc=$?
  WALL+=("$kernel: kscope $(grep -oE 'kscope_wall_s [0-9.]+' "$OUT/kscope_$kernel.log" | cut -d' ' -f2) s in process, ${kscope_s} s whole program; ncu ${ncu_s} s")
  worst=$(awk 'NR>1 && $4 ~ /^[+-]/ {d=$4; sub(/^\+/, "", d); if (d<0) d=-d; if (d>m) m=d} END {printf "%.1f", m}' "$OUT/compare_$kernel.log")
  [[ $rc -eq 0 ]] && record "ncu_$kernel" PASS "top-5 lines agree, largest share difference ${worst} points" ||
    record "ncu_$kernel" FAIL "rc=$rc: $(grep -m1 '^lines_cost:' "$OUT/kscope_$kernel.log") $(tail -2 "$OUT/compare_$kernel.log" | paste -sd';' -)"
done

if ! skipping overhead 60; then
  worst=0 ok=1 detail=""
  for kernel in chase fma barrier; do
    timeout 60 "$LINES_COST" overhead "$kernel" > "$OUT/overhead_$kernel.log" 2>&1
    ratio=$(grep -oE 'ratio [0-9.]+' "$OUT/overhead_$kernel.log" | cut -d' ' -f2)
    detail+="$kernel ${ratio:-?}x; "
    [[ -z $ratio ]] && ok=0
    [[ -n $ratio ]] && awk "BEGIN {exit !($ratio > 2.0)}" && ok=0
  done
  [[ $ok -eq 1 ]] && record overhead PASS "sampled/unsampled GPU time: ${detail}target <= 2x" ||
    record overhead FAIL "sampled/unsampled GPU time: ${detail}target <= 2x"
fi
[[ ${#WALL[@]} -gt 0 ]] && record wall INFO "$(printf '%s; ' "${WALL[@]}")"

echo "--- the Triton tests' attribution and notes ---"
grep -E '^(attribution|note) ' "$OUT/triton.log" 2>/dev/null | cut -c1-400
echo "--- the C++ tests' listings ---"
grep -A7 -E '^kscope lines' "$OUT/lines_gpu.log" | head -40
for kernel in chase fma barrier; do
  print_sections "$OUT" "compare_$kernel.log:$kernel against ncu --section SourceCounters" "overhead_$kernel.log:$kernel overhead"
done
grep -E '^\[  FAILED  \]|Failure$' "$OUT/lines_gpu.log" 2>/dev/null | sort -u | head -20
print_steps "Line sampling check (scripts/lines_check.sh)"
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
