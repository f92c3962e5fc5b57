#!/usr/bin/env bash
# The cold-cache flush on the GPU machine in the least device time (about 3 minutes on a fresh
# machine, no Python): which L2 lines survive kscope's flush with and without the persisting-L2 reset
# before it (bench/l2_flush_survival.cu), then the GPU tests of the flush: a plain and an evict_last
# read cold under the cupti backend (CuptiTiming.*), every pass cold under the counters backend
# (Counters.Cold*, the flush's ranges), and evaluate's C++ GPU tests, whose flushes reset the same way.
# Logs to $OUT, the step table last. Needs .carry/ from scripts/prepare_carry.sh. Never changes
# clocks, power or modes.
#   bash scripts/l2_flush_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export OUT=${OUT:-$ROOT/l2-flush-out}
export KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-400}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu_steps.sh"
BUILD=$ROOT/build-debt  # the other GPU scripts' folder: a warm machine finds it built
TITLE="the L2 flush on the GPU (scripts/l2_flush_check.sh)"

# Python on, as the other scripts configure build-debt: one machine runs them in turn without
# configuring and building it again.
gpu_build "$BUILD" "$OUT/build.log" ON l2_flush_survival kscope_gpu_tests kscope_counters_gpu_tests kscope_evaluate_gpu_tests
case $? in
  0) record build PASS "$BUILD: l2_flush_survival and the cupti, counters and evaluate GPU tests, Release, sm_90" ;;
  1) record build FAIL "configuring failed: $(grep -m1 -E 'Error' "$OUT/build.log")"
     print_steps "$TITLE"; exit 1 ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")" ;;
esac

if ! skipping survival 20; then
  timeout "$(left_s 60)" "$BUILD/bench/l2_flush_survival" > "$OUT/survival.log" 2>&1
  rc=$?
  cat "$OUT/survival.log"
  [[ $rc -eq 0 ]] && record survival INFO "$(grep -m1 'prefetch_last *flush ' "$OUT/survival.log" | cut -c10-80)" ||
    record survival FAIL "rc=$rc: $(tail -1 "$OUT/survival.log")"
fi

gtest_step cupti kscope_gpu_tests 'CuptiTiming.*' 120
gtest_step counters kscope_counters_gpu_tests 'Counters.Cold*:Counters.TheL2Flush*' 120
gtest_step evaluate kscope_evaluate_gpu_tests '*' 120

print_steps "$TITLE"
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
