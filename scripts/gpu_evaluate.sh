#!/usr/bin/env bash
# kscope.evaluate's GPU checks in one short call: its C++ GPU tests (ctest -R EvaluateGpu: the
# attacks, the honest cases, the device's tensor checks against the host's, the tolerance beside a
# mask's fill), the Python ones (tests/python/test_evaluate_gpu.py, marker gpu), then evaluate's cost
# (bench/evaluate_cost.py, whose checks now read each reference output twice for atol's scale).
# About 3-5 minutes on a fresh machine (the build most of it); logs to $OUT, the step table last.
# Needs .carry/ from scripts/prepare_carry.sh. Never changes clocks, power or modes.
#   bash scripts/gpu_evaluate.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export OUT=${OUT:-$ROOT/gpu-evaluate-out}
export KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-570}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu_steps.sh"
BUILD=$ROOT/build-debt  # the folder scripts/gpu_quick.sh builds: a warm machine finds it built

gpu_build "$BUILD" "$OUT/build.log" ON _core kscope_evaluate_gpu_tests
case $? in
  0) record build PASS "$BUILD: _core, kscope_evaluate_gpu_tests" ;;
  1) record build FAIL "configuring failed: $(grep -m1 -E 'Error' "$OUT/build.log")"
     print_steps "kscope.evaluate on the GPU (scripts/gpu_evaluate.sh)"; exit 1 ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")" ;;
esac

skipping evaluate_gpu 150 || ctest_step evaluate_gpu "-R ^EvaluateGpu\." evaluate_gpu.log

if ! skipping pytest_evaluate 200; then
  PYTHONPATH=$BUILD/python timeout 300 python3 -m pytest tests/python/test_evaluate_gpu.py -m gpu -q -rs \
    -p no:cacheprovider > "$OUT/pytest_evaluate.log" 2>&1
  rc=$?
  line=$(grep -E '[0-9]+ (passed|failed)' "$OUT/pytest_evaluate.log" | tail -1)
  [[ $rc -eq 0 ]] && record pytest_evaluate PASS "$line" ||
    record pytest_evaluate FAIL "rc=$rc: $line; $(grep -m3 '^FAILED' "$OUT/pytest_evaluate.log" | paste -sd';' -)"
fi

if ! skipping evaluate_cost 150; then
  PYTHONPATH=$BUILD/python timeout 240 python3 bench/evaluate_cost.py --breakdown > "$OUT/evaluate_cost.log" 2>&1
  rc=$?
  echo "--- kscope.evaluate against the two functions measured alone ---"
  cat "$OUT/evaluate_cost.log"
  [[ $rc -eq 0 ]] && record evaluate_cost PASS "$(tail -1 "$OUT/evaluate_cost.log")" ||
    record evaluate_cost FAIL "rc=$rc: $(tail -1 "$OUT/evaluate_cost.log")"
fi

grep -E '^\[result\]|^\[  FAILED  \]|Failure$' "$OUT/evaluate_gpu.log" 2>/dev/null | sort -u | head -40
print_steps "kscope.evaluate on the GPU (scripts/gpu_evaluate.sh)"
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
