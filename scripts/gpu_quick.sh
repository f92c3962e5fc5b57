#!/usr/bin/env bash
# The GPU tests in one short call, for when GPU time is short: every target built with
# the Python package in place (build-debt/python: no pip install), the C++ GPU suite (ctest -L gpu),
# the Python tests marked gpu (evaluate's and Triton's among them), then kscope.evaluate's cost
# (bench/evaluate_cost.py, target <= 1.3x). About 4-6 minutes on a fresh machine; logs to $OUT, the
# step table last. Needs .carry/ from scripts/prepare_carry.sh. Never changes clocks, power or modes.
#   bash scripts/gpu_quick.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export OUT=${OUT:-$ROOT/gpu-quick-out}
export KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-570}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu_steps.sh"
BUILD=$ROOT/build-debt  # gpu_debt.sh call2's folder: a warm machine finds it built

gpu_build "$BUILD" "$OUT/build.log" ON
case $? in
  0) record build PASS "$BUILD, Release, sm_90, the Python package in place" ;;
  1) record build FAIL "configuring failed: $(grep -m1 -E 'Error' "$OUT/build.log")"
     print_steps "GPU quick check (scripts/gpu_quick.sh)"; exit 1 ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")" ;;
esac

skipping gpu 150 || ctest_step gpu "-L gpu" gpu_tests.log

if ! skipping pytest_gpu 200; then
  PYTHONPATH=$BUILD/python timeout 300 python3 -m pytest tests/python -m gpu -q -rs -p no:cacheprovider \
    > "$OUT/pytest_gpu.log" 2>&1
  rc=$?
  line=$(grep -E '[0-9]+ (passed|failed)' "$OUT/pytest_gpu.log" | tail -1)
  [[ $rc -eq 0 ]] && record pytest_gpu PASS "$line" ||
    record pytest_gpu FAIL "rc=$rc: $line; $(grep -m3 '^FAILED' "$OUT/pytest_gpu.log" | paste -sd';' -)"
fi

if ! skipping evaluate 150; then
  PYTHONPATH=$BUILD/python timeout 240 python3 bench/evaluate_cost.py --breakdown > "$OUT/evaluate.log" 2>&1
  rc=$?
  echo "--- kscope.evaluate against the two functions measured alone ---"
  cat "$OUT/evaluate.log"
  [[ $rc -eq 0 ]] && record evaluate PASS "$(tail -1 "$OUT/evaluate.log")" ||
    record evaluate FAIL "rc=$rc: $(tail -1 "$OUT/evaluate.log")"
fi

grep -E '^\[  FAILED  \]|Failure$' "$OUT/gpu_tests.log" 2>/dev/null | sort -u | head -20
print_steps "GPU quick check (scripts/gpu_quick.sh)"
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
