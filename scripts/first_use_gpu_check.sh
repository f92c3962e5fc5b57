#!/usr/bin/env bash
# A first-time user's path on a GPU machine, in one call of about 6-8 minutes: the README's example
# command (scripts/run_example.sh: its GPU check passes, the saxpy table), the examples of
# examples/python and the docs' GPU examples on the GPU (kscope.testing.workloads' PyTorch side),
# the same under KSCOPE_SIMULATED=1 with a GPU present (simulated all the same), `python -m kscope`,
# and the first-use tests marked gpu. Logs to $OUT, the step table last. Needs .carry/ from
# scripts/prepare_carry.sh. Never changes clocks, power or modes.
#   bash scripts/first_use_gpu_check.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/gpu_steps.sh"
cd "$ROOT" && BUILD=$ROOT/build-first-use
export OUT=${OUT:-$ROOT/first-use-out} KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-540}
mkdir -p "$OUT"

if ! skipping run_example 240; then
  # The machine has no package registry: nothing to install (KSCOPE_SKIP_APT=1).
  KSCOPE_SKIP_APT=1 timeout 300 bash scripts/run_example.sh > "$OUT/run_example.log" 2>&1
  rc=$?
  tail -16 "$OUT/run_example.log"
  if [[ $rc -eq 0 ]] && grep -q 'wrote saxpy.csv and saxpy.json' "$OUT/run_example.log" &&
     grep -q 'cupti' "$OUT/run_example.log"; then
    record run_example PASS "the saxpy table measured with cupti"
  else
    record run_example FAIL "rc=$rc: $(grep -m1 -E 'error|kscope\]|saxpy:' "$OUT/run_example.log")"
  fi
fi

gpu_build "$BUILD" "$OUT/build.log" ON _core kscope_cli
case $? in
  0) record build PASS "$BUILD, Release, sm_90, the Python package in place" ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error' "$OUT/build.log")"
     print_steps "First use on a GPU (scripts/first_use_gpu_check.sh)"; exit 1 ;;
esac
export PYTHONPATH=$BUILD/python

if ! skipping pytest_gpu 240; then
  timeout 300 python3 -m pytest tests/python/test_examples.py tests/python/test_docs_examples.py \
    tests/python/test_first_use.py -m gpu -q -rs -p no:cacheprovider > "$OUT/pytest_gpu.log" 2>&1
  rc=$?
  line=$(grep -E '[0-9]+ (passed|failed)' "$OUT/pytest_gpu.log" | tail -1)
  [[ $rc -eq 0 ]] && record pytest_gpu PASS "$line" ||
    record pytest_gpu FAIL "rc=$rc: $line; $(grep -m3 '^FAILED' "$OUT/pytest_gpu.log" | paste -sd';' -)"
fi

if ! skipping simulated_on_a_gpu 60; then
  (cd "$OUT" && KSCOPE_SIMULATED=1 timeout 60 python3 "$ROOT/examples/python/basic_sweep.py") \
    > "$OUT/simulated.log" 2>&1
  rc=$?
  [[ $rc -eq 0 ]] && grep -q 'test (simulated)' "$OUT/simulated.log" &&
    record simulated_on_a_gpu PASS "KSCOPE_SIMULATED=1 ran basic_sweep.py on the simulated backend" ||
    record simulated_on_a_gpu FAIL "rc=$rc: $(tail -1 "$OUT/simulated.log")"
fi

if ! skipping python_m_kscope 60; then
  timeout 60 python3 -m kscope doctor > "$OUT/doctor.log" 2>&1
  rc=$?
  cat "$OUT/doctor.log"
  # 0: every backend works; 1: some do not (ncu missing, counters refused), each saying why.
  [[ $rc -le 1 ]] && ! grep -qE 'Backend::|automatic' "$OUT/doctor.log" &&
    record python_m_kscope PASS "python -m kscope doctor: exit $rc, backends named as Python names them" ||
    record python_m_kscope FAIL "rc=$rc: $(grep -m1 -E 'Backend::|automatic|Error' "$OUT/doctor.log")"
fi

print_steps "First use on a GPU (scripts/first_use_gpu_check.sh)"
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
