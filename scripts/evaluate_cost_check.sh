#!/usr/bin/env bash
# kscope.evaluate's checks and its own cost on the GPU machine in one call of about 5-8 minutes (less on
# a warm machine): builds evaluate's C++ GPU tests and the Python package in place (build-debt/, as
# gpu_quick.sh), runs the C++ GPU tests of evaluate (the device's tensor checks against the host's,
# every attack, the honest cases), the Python GPU tests of evaluate, the device checks' GPU time alone
# (bench/evaluate_device_cost.cu: each kind against a copy of the same bytes; the persisting-L2 reset), then bench/evaluate_cost.py (with
# where its host time went: --breakdown, --profile),
# whose sizes are judged against the targets: evaluate at most 2x the two functions measured alone at
# 1,024 elements, at most 1.3x at 1,048,576 and above; then, if time is left, its floor (one run read,
# no warm-ups; beside it the two alone with evaluate's drain) and the same with every run read (INFO,
# not judged). Logs to $OUT, the step table last (PASS/FAIL per step and per size).
# Needs .carry/ from scripts/prepare_carry.sh. Never changes clocks, power or modes.
#   bash scripts/evaluate_cost_check.sh
#   KSCOPE_GPU_CHECK_SKIP="pytest_gpu" bash scripts/evaluate_cost_check.sh   # a second call: the rest
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export OUT=${OUT:-$ROOT/evaluate-cost-out}
export KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-470}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu_steps.sh"
BUILD=$ROOT/build-debt  # gpu_quick.sh's folder: a warm machine finds it built
export PYTHONPATH=$BUILD/python KSCOPE_BUILD_DIR=$BUILD
TITLE="evaluate's checks and cost on the GPU (scripts/evaluate_cost_check.sh)"

gpu_build "$BUILD" "$OUT/build.log" ON _core kscope_evaluate_gpu_tests evaluate_device_cost
case $? in
  0) record build PASS "$BUILD: _core, kscope_evaluate_gpu_tests and evaluate_device_cost, Release, sm_90" ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")"
     print_steps "$TITLE"; exit 1 ;;
esac

if ! skipping gpu_tests 60; then
  timeout "$(left_s 200)" "$BUILD/tests/gpu/kscope_evaluate_gpu_tests" > "$OUT/gpu_tests.log" 2>&1
  rc=$?
  line=$(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test' "$OUT/gpu_tests.log" | paste -sd' ' -)
  [[ $rc -eq 0 ]] && record gpu_tests PASS "$line" ||
    record gpu_tests FAIL "rc=$rc: $line; $(grep -E '^\[  FAILED  \] [A-Z]' "$OUT/gpu_tests.log" | sort -u | head -5 | paste -sd';' -)"
fi

skipping pytest_gpu 90 || pytest_step pytest_gpu 200 tests/python/test_evaluate_gpu.py

# The device checks alone: each kind's GPU time against a copy of the same bytes, and whether the
# persisting-L2 reset before each flush waits for the GPU (not judged).
if ! skipping checks_cost 30; then
  timeout "$(left_s 60)" "$BUILD/bench/evaluate_device_cost" > "$OUT/checks_cost.log" 2>&1
  cat "$OUT/checks_cost.log"
  record checks_cost INFO "$(grep -E "^RESET" "$OUT/checks_cost.log" | cut -c7-) $(grep -E "a read run's checks" "$OUT/checks_cost.log" |
    awk '{for (i = 3; i < NF; i++) v[$i] = $(i + 1); printf "%s: %s us (%s of the copy rate)  ", $2, v["gpu_us"], v["of_copy_rate"]}')"
fi

if ! skipping cost 120; then
  timeout "$(left_s 260)" python3 bench/evaluate_cost.py --breakdown --profile --drained > "$OUT/cost.log" 2>&1
  rc=$?
  echo "--- kscope.evaluate against the two functions measured alone (bench/evaluate_cost.py) ---"
  cat "$OUT/cost.log"
  # One row per size: its ratio against its target (2x at 1,024 elements, 1.3x from 1,048,576).
  while read -r _ n _ base _ full _ ratio verdict target; do
    record "cost_$n" "$verdict" "evaluate ${full} s, alone ${base} s: ${ratio}x (target <= ${target}x)"
  done < <(grep -E '^EVAL [0-9]+ baseline_s' "$OUT/cost.log")
  [[ $rc -eq 0 ]] || record cost FAIL "rc=$rc: $(tail -1 "$OUT/cost.log")"
fi

# evaluate's floor at the sizes of the 1.3x target: one run of 50 read and no warm-ups, so what it
# costs beyond its checks (the drain, the regions, its bookkeeping), and beside it the two functions
# alone with evaluate's drain (a wait for the GPU after the candidate) and nothing else; not judged.
if ! skipping cost_floor 80; then
  timeout "$(left_s 200)" python3 bench/evaluate_cost.py --warmup-runs 0 --checked-runs 1 --drained \
    --sizes 1048576,16777216 > "$OUT/cost_floor.log" 2>&1
  echo "--- evaluate with one run read and no warm-ups (--warmup-runs 0 --checked-runs 1 --drained) ---"
  cat "$OUT/cost_floor.log"
  record cost_floor INFO "$(grep -E '^EVAL [0-9]+ ' "$OUT/cost_floor.log" | awk '{printf "%s: %sx  ", $2, $8}')drained alone: $(
    grep -E '^DRAINED ' "$OUT/cost_floor.log" | awk '{printf "%s: %sx  ", $2, $6}')"
fi

# For the docs' second column: the same with every run read (not judged against the targets).
if ! skipping cost_every_run 100; then
  timeout "$(left_s 200)" python3 bench/evaluate_cost.py --checked-runs 0 > "$OUT/cost_every_run.log" 2>&1
  echo "--- the same with every run read (--checked-runs 0) ---"
  cat "$OUT/cost_every_run.log"
  record cost_every_run INFO "$(grep -E '^EVAL [0-9]+ ' "$OUT/cost_every_run.log" | awk '{printf "%s: %sx  ", $2, $8}')"
fi

grep -E '^\[  FAILED  \]' "$OUT/gpu_tests.log" 2>/dev/null | sort -u | head -20
print_steps "$TITLE"
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
